//! What the CLI test files share: running the `leontief` binary.

use std::process::Command;

/// Run `leontief ARGS`: (exit code, stdout, stderr).
pub fn leontief(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_leontief"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
