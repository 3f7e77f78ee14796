//! parchis-loadgen (work in progress).
fn main() {}
