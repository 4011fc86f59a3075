//! The CSVs `leontief plot` reads (sweep and contours output).

use crate::failure::{bad_input, Failure};
use std::path::{Path, PathBuf};

/// A CSV written by leontief (no quoted commas): its header and rows.
pub(crate) struct Table {
    pub path: PathBuf,
    pub what: &'static str,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn read(p: &Path, what: &'static str) -> Result<Table, Failure> {
        let text =
            std::fs::read_to_string(p).map_err(|e| bad_input(format!("{}: {e}", p.display())))?;
        let mut lines = text.lines();
        let split = |l: &str| l.split(',').map(str::to_string).collect::<Vec<_>>();
        let header = split(lines.next().unwrap_or(""));
        Ok(Table {
            path: p.to_path_buf(),
            what,
            header,
            rows: lines.map(split).collect(),
        })
    }

    pub fn col(&self, name: &str) -> Result<usize, Failure> {
        self.header.iter().position(|h| h == name).ok_or_else(|| {
            bad_input(format!(
                "{}: not a `{}` CSV (no column {name})",
                self.path.display(),
                self.what
            ))
        })
    }
}
