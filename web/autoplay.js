// Replay autoplay: steps forward every `intervalMs` until the end or a pause.

/**
 * A player for the replay. `step()` advances one step and returns false at the end;
 * `onChange(playing)` redraws the play/pause button.
 */
export function createAutoplay({ step, onChange, intervalMs = 700 }) {
  let timer = null;
  const api = {
    get playing() { return timer !== null; },
    play() {
      if (timer) return;
      timer = setInterval(() => { if (!step()) api.pause(); }, intervalMs);
      onChange(true);
    },
    pause() {
      if (!timer) return;
      clearInterval(timer);
      timer = null;
      onChange(false);
    },
    toggle() { if (timer) api.pause(); else api.play(); },
  };
  return api;
}
