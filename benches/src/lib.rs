//! Shared pieces of the benches: the instance families and memory readings.

use leontief_core::{generate, Instance};

/// The two server families of the DRFH benches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// The Google cell of Table I (10 classes, 12,583 servers), whatever k.
    GoogleCell,
    /// k servers, no two alike.
    Heterogeneous,
}

/// The instance of `family` with `users` users and `servers` servers
/// (seed 1).
pub fn instance(family: Family, users: usize, servers: usize) -> Instance {
    match family {
        Family::GoogleCell => generate::google_cell(users, 1),
        Family::Heterogeneous => generate::heterogeneous(users, servers, 2, 1),
    }
}

/// Peak resident memory of this process so far, in bytes (Linux VmHWM).
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Current resident memory, in bytes (Linux VmRSS).
pub fn rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Bytes held by a problem's arrays.
pub fn problem_bytes(p: &leontief_model::Problem) -> u64 {
    let f = std::mem::size_of::<f64>() as u64;
    let u = std::mem::size_of::<usize>() as u64;
    (p.col_cost.len() as u64 * 3 + p.row_lower.len() as u64 * 2 + p.a_value.len() as u64) * f
        + (p.a_index.len() as u64 + p.a_start.len() as u64) * u
}
