//! Output paths: checked before any work runs, so that a path that cannot
//! be written is bad input (exit code 2) named by its flag, not a failure
//! after a long run.

use crate::failure::{bad_input, Failure};
use std::path::Path;

/// Refuse `path` (given with `flag`) when it cannot be a file to write:
/// an existing folder, or a parent that is missing or not a folder.
pub fn check_file(flag: &str, path: &Path) -> Result<(), Failure> {
    let shown = path.display();
    if path.is_dir() {
        return Err(bad_input(format!(
            "{flag} {shown}: is a folder, not a file"
        )));
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match std::fs::metadata(parent) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(bad_input(format!(
            "{flag} {shown}: {} is not a folder",
            parent.display()
        ))),
        Err(e) => Err(bad_input(format!(
            "{flag} {shown}: its folder {}: {e}",
            parent.display()
        ))),
    }
}

/// Create the folder `path` (given with `flag`) now, or refuse it.
pub fn make_dir(flag: &str, path: &Path) -> Result<(), Failure> {
    std::fs::create_dir_all(path).map_err(|e| bad_input(format!("{flag} {}: {e}", path.display())))
}

/// Write `text` to `path` (given with `flag`); a failure names the flag.
pub fn write(flag: &str, path: &Path, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text).map_err(|e| bad_input(format!("{flag} {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_under_a_file_or_a_missing_folder_is_refused_with_its_flag() {
        let e = check_file("--instance", Path::new("/dev/null/x")).unwrap_err();
        assert_eq!(e.code, 2);
        assert!(
            e.message.starts_with("--instance /dev/null/x"),
            "{}",
            e.message
        );
        let e = check_file("-o", Path::new("/no/such/folder/out.json")).unwrap_err();
        assert_eq!(e.code, 2);
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(check_file("-o", dir.path()).unwrap_err().code, 2);
        assert!(check_file("-o", &dir.path().join("out.json")).is_ok());
        assert!(check_file("-o", Path::new("out.json")).is_ok());
    }
}
