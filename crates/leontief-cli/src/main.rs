//! The `leontief` binary; everything lives in the library crate.
fn main() -> std::process::ExitCode {
    leontief_cli::main_entry()
}
