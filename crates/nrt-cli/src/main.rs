//! The `nrt` command.
fn main() {}
