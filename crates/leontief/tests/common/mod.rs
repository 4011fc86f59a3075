//! What the tests that read real data share.

use std::path::PathBuf;

/// `sub` in the shared data folder (`LEONTIEF_DATA`, default
/// ../shared/data beside the repository), or `None` with a message when it
/// is missing; under CI=true a missing folder fails the test.
pub fn shared_data(sub: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("LEONTIEF_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(
                std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
            )
            .join("../../../shared/data")
        })
        .join(sub);
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{} is missing (set LEONTIEF_DATA to the shared data folder)",
        dir.display()
    );
    eprintln!("skipped: {} is missing (LEONTIEF_DATA)", dir.display());
    None
}
