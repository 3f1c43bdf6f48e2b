//! aimon-console: parse the command line, set up file logging, dispatch to a command. Nothing else.
fn main() {}
