//! One decision in progress: the events decided so far, folded into a scratch copy of
//! the state as they are decided, so each later decision of the same input sees them.

use crate::command::CommandError;
use crate::event::{Entry, Event};
use crate::ids::Ms;
use crate::state::Tournament;

/// The events an input decides, and the state they lead to.
pub(crate) struct Step {
    /// The state after the events decided so far.
    pub(crate) next: Tournament,
    /// The events decided so far.
    pub(crate) out: Vec<Entry>,
    /// The input's time.
    pub(crate) now: Ms,
}

impl Step {
    /// A step from `t` at `now`.
    pub(crate) fn new(t: &Tournament, now: Ms) -> Step {
        Step {
            next: t.clone(),
            out: Vec::new(),
            now,
        }
    }

    /// Decides `event`: folds it into the scratch state and keeps it.
    pub(crate) fn emit(&mut self, event: Event) -> Result<(), CommandError> {
        let entry = Entry::new(self.now, event);
        self.next.apply(&entry).map_err(CommandError::Internal)?;
        self.out.push(entry);
        Ok(())
    }
}
