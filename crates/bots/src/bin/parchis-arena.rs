//! parchis-arena (work in progress).
fn main() {}
