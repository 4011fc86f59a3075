//! x_{n,i}, the tasks of each user on each server entry, held sparsely:
//! per user, the entries it runs on. An answer at 10,000 users x 10,000
//! entries has about as many nonzeros as users plus entries (a basic LP
//! solution), so a dense matrix would be almost all zeros (800 MB of them).
//!
//! Its serde form is the dense `tasks[n][i]` of docs/instance-format.md,
//! written row by row without building the matrix.

use serde::de::Deserializer;
use serde::ser::{SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};

/// The tasks of `users()` users on `servers()` server entries; every entry
/// not stored is 0. A user's row is held as its nonzero entries, or, when
/// more than half its entries are nonzero (a pooled answer split over
/// every server), as the dense row: never more than 8 bytes per entry.
#[derive(Debug, Clone, Default)]
pub struct Tasks {
    servers: usize,
    rows: Vec<RowData>,
}

#[derive(Debug, Clone)]
enum RowData {
    /// Nonzero entries `(entry, tasks)`, entries ascending.
    Sparse(Vec<(usize, f64)>),
    /// Every entry (zeros included).
    Dense(Vec<f64>),
}

impl RowData {
    /// The cheaper form of a row given by its nonzeros (ascending).
    fn from_entries(servers: usize, entries: Vec<(usize, f64)>) -> RowData {
        if 2 * entries.len() > servers {
            let width = servers.max(entries.last().map_or(0, |&(i, _)| i + 1));
            let mut d = vec![0.0; width];
            for (i, x) in entries {
                d[i] = x;
            }
            RowData::Dense(d)
        } else {
            RowData::Sparse(entries)
        }
    }

    /// True when a dense row is cheaper kept dense (more than half of
    /// `servers` entries nonzero).
    fn stays_dense(servers: usize, row: &[f64]) -> bool {
        2 * row.iter().filter(|&&x| x != 0.0).count() > servers
    }

    /// The nonzeros of a dense row.
    fn sparse_of(row: &[f64]) -> RowData {
        RowData::Sparse(
            row.iter()
                .enumerate()
                .filter(|(_, &x)| x != 0.0)
                .map(|(i, &x)| (i, x))
                .collect(),
        )
    }

    fn view(&self) -> Row<'_> {
        match self {
            RowData::Sparse(e) => Row::Sparse(e),
            RowData::Dense(d) => Row::Dense(d),
        }
    }
}

/// One user's row: its nonzero entries `(entry, tasks)`, entries
/// ascending, by [`Row::iter`].
#[derive(Debug, Clone, Copy)]
pub enum Row<'a> {
    /// Nonzero entries.
    Sparse(&'a [(usize, f64)]),
    /// Every entry.
    Dense(&'a [f64]),
}

/// The nonzero entries of a [`Row`].
#[derive(Debug, Clone)]
pub enum RowIter<'a> {
    /// Over stored nonzeros.
    Sparse(std::slice::Iter<'a, (usize, f64)>),
    /// Over a dense row, skipping zeros.
    Dense(std::iter::Enumerate<std::slice::Iter<'a, f64>>),
}

impl Iterator for RowIter<'_> {
    type Item = (usize, f64);

    fn next(&mut self) -> Option<(usize, f64)> {
        match self {
            RowIter::Sparse(it) => it.next().copied(),
            RowIter::Dense(it) => it.find(|(_, &x)| x != 0.0).map(|(i, &x)| (i, x)),
        }
    }
}

impl<'a> Row<'a> {
    /// The nonzero entries `(entry, tasks)`, entries ascending.
    pub fn iter(self) -> RowIter<'a> {
        match self {
            Row::Sparse(e) => RowIter::Sparse(e.iter()),
            Row::Dense(d) => RowIter::Dense(d.iter().enumerate()),
        }
    }

    /// The last nonzero entry.
    pub fn last(self) -> Option<(usize, f64)> {
        match self {
            Row::Sparse(e) => e.last().copied(),
            Row::Dense(d) => d.iter().rposition(|&x| x != 0.0).map(|i| (i, d[i])),
        }
    }

    /// The tasks on entry `i` (0 when none).
    pub fn get(self, i: usize) -> f64 {
        *self.entry(i).unwrap_or(&ZERO)
    }

    fn entry(self, i: usize) -> Option<&'a f64> {
        match self {
            Row::Sparse(e) => e
                .binary_search_by_key(&i, |&(j, _)| j)
                .ok()
                .map(|k| &e[k].1),
            Row::Dense(d) => d.get(i),
        }
    }

    /// The nonzero entries, collected.
    pub fn to_vec(self) -> Vec<(usize, f64)> {
        self.iter().collect()
    }

    /// The sum of the entries (added in entry order from +0).
    pub fn total(self) -> f64 {
        match self {
            Row::Sparse(e) => e.iter().fold(0.0, |s, &(_, x)| s + x),
            Row::Dense(d) => d.iter().fold(0.0, |s, &x| s + x),
        }
    }

    /// One more than the last entry stored (0 when none).
    fn width(self) -> usize {
        match self {
            Row::Sparse(e) => e.last().map_or(0, |&(i, _)| i + 1),
            Row::Dense(d) => d.len(),
        }
    }
}

impl<'a> IntoIterator for Row<'a> {
    type Item = (usize, f64);
    type IntoIter = RowIter<'a>;

    fn into_iter(self) -> RowIter<'a> {
        self.iter()
    }
}

static ZERO: f64 = 0.0;

/// Sorted by entry, repeated entries added up (in the order given), zeros
/// dropped.
fn normalise(mut row: Vec<(usize, f64)>) -> Vec<(usize, f64)> {
    row.sort_by_key(|&(i, _)| i);
    let mut out: Vec<(usize, f64)> = Vec::with_capacity(row.len());
    for (i, x) in row {
        match out.last_mut() {
            Some((j, y)) if *j == i => *y += x,
            _ => out.push((i, x)),
        }
    }
    out.retain(|&(_, x)| x != 0.0);
    out
}

impl Tasks {
    /// `users` users with no task on any of `servers` entries.
    pub fn zeros(users: usize, servers: usize) -> Tasks {
        Tasks {
            servers,
            rows: vec![RowData::Sparse(Vec::new()); users],
        }
    }

    /// A dense matrix with `servers` columns (rows shorter than that are
    /// read as padded with 0; entries past it are kept, so a reader can
    /// refuse them by [`Tasks::widest`]).
    pub fn from_dense(dense: &[Vec<f64>], servers: usize) -> Tasks {
        Tasks {
            servers,
            rows: dense
                .iter()
                .map(|row| {
                    if RowData::stays_dense(servers, row) {
                        RowData::Dense(row.clone())
                    } else {
                        RowData::sparse_of(row)
                    }
                })
                .collect(),
        }
    }

    /// Rows given as nonzero entries; each row is sorted by entry and
    /// repeated entries are added up.
    pub fn from_rows(servers: usize, rows: Vec<Vec<(usize, f64)>>) -> Tasks {
        Tasks {
            servers,
            rows: rows
                .into_iter()
                .map(|row| RowData::from_entries(servers, normalise(row)))
                .collect(),
        }
    }

    /// Number of users (rows).
    pub fn users(&self) -> usize {
        self.rows.len()
    }

    /// Number of server entries (columns).
    pub fn servers(&self) -> usize {
        self.servers
    }

    /// True when there are no users.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// One more than the largest entry stored (0 when none): a dense input
    /// wider than the instance shows here.
    pub fn widest(&self) -> usize {
        self.rows().map(Row::width).max().unwrap_or(0)
    }

    /// x_{n,i} (0 when not stored or out of range).
    pub fn get(&self, n: usize, i: usize) -> f64 {
        self.row(n).get(i)
    }

    /// Sets x_{n,i} (a 0 removes the entry). Panics when `n` is not a user.
    pub fn set(&mut self, n: usize, i: usize, x: f64) {
        match &mut self.rows[n] {
            RowData::Dense(d) if i < d.len() => d[i] = x,
            RowData::Dense(d) => {
                if x != 0.0 {
                    d.resize(i + 1, 0.0);
                    d[i] = x;
                }
            }
            RowData::Sparse(row) => match row.binary_search_by_key(&i, |&(j, _)| j) {
                Ok(k) if x == 0.0 => {
                    row.remove(k);
                }
                Ok(k) => row[k].1 = x,
                Err(_) if x == 0.0 => {}
                Err(k) => row.insert(k, (i, x)),
            },
        }
    }

    /// Replaces user `n`'s row by `entries` (sorted here, repeated entries
    /// added, zeros dropped). Panics when `n` is not a user.
    pub fn set_row(&mut self, n: usize, entries: Vec<(usize, f64)>) {
        self.rows[n] = RowData::from_entries(self.servers, normalise(entries));
    }

    /// Adds `x` to x_{n,i}. Panics when `n` is not a user.
    pub fn add(&mut self, n: usize, i: usize, x: f64) {
        let v = self.get(n, i) + x;
        self.set(n, i, v);
    }

    /// User `n`'s row (empty when `n` is out of range).
    pub fn row(&self, n: usize) -> Row<'_> {
        self.rows.get(n).map_or(Row::Sparse(&[]), RowData::view)
    }

    /// Every user's row, in user order.
    pub fn rows(&self) -> impl ExactSizeIterator<Item = Row<'_>> + '_ {
        self.rows.iter().map(RowData::view)
    }

    /// User `n`'s row as a dense vector of `servers()` entries.
    pub fn dense_row(&self, n: usize) -> Vec<f64> {
        let row = self.row(n);
        let mut d = vec![0.0; self.servers.max(row.width())];
        match row {
            Row::Dense(v) => d[..v.len()].copy_from_slice(v),
            Row::Sparse(e) => {
                for &(i, x) in e {
                    d[i] = x;
                }
            }
        }
        d
    }

    /// The dense matrix (small instances and readers that need one).
    pub fn to_dense(&self) -> Vec<Vec<f64>> {
        (0..self.users()).map(|n| self.dense_row(n)).collect()
    }

    /// x_n, the sum of user `n`'s row (added in entry order from +0).
    pub fn user_total(&self, n: usize) -> f64 {
        self.row(n).total()
    }

    /// Every user's total, in user order.
    pub fn user_totals(&self) -> Vec<f64> {
        self.rows().map(Row::total).collect()
    }

    /// Every nonzero entry `(user, entry, tasks)`, row by row.
    pub fn nonzeros(&self) -> impl Iterator<Item = (usize, usize, f64)> + '_ {
        self.rows()
            .enumerate()
            .flat_map(|(n, row)| row.iter().map(move |(i, x)| (n, i, x)))
    }

    /// Number of nonzero entries.
    pub fn nonzero_count(&self) -> usize {
        self.rows().map(|r| r.iter().count()).sum()
    }

    /// Applies `f` to every nonzero entry (entries it maps to 0 are
    /// dropped).
    pub fn map_values(&mut self, mut f: impl FnMut(usize, usize, f64) -> f64) {
        for (n, row) in self.rows.iter_mut().enumerate() {
            match row {
                RowData::Sparse(e) => {
                    for (i, x) in e.iter_mut() {
                        *x = f(n, *i, *x);
                    }
                    e.retain(|&(_, x)| x != 0.0);
                }
                RowData::Dense(d) => {
                    for (i, x) in d.iter_mut().enumerate().filter(|(_, x)| **x != 0.0) {
                        *x = f(n, i, *x);
                    }
                }
            }
        }
    }
}

impl PartialEq for Tasks {
    /// The same users, entries and nonzero tasks, however each row is held.
    fn eq(&self, other: &Tasks) -> bool {
        self.servers == other.servers
            && self.users() == other.users()
            && self
                .rows()
                .zip(other.rows())
                .all(|(a, b)| a.iter().eq(b.iter()))
    }
}

impl std::ops::Index<(usize, usize)> for Tasks {
    type Output = f64;

    /// x_{n,i}; 0 for an entry not stored.
    fn index(&self, (n, i): (usize, usize)) -> &f64 {
        self.row(n).entry(i).unwrap_or(&ZERO)
    }
}

impl From<Vec<Vec<f64>>> for Tasks {
    /// The matrix; its width is its first row's.
    fn from(dense: Vec<Vec<f64>>) -> Tasks {
        let servers = dense.first().map_or(0, Vec::len);
        Tasks {
            servers,
            rows: dense
                .into_iter()
                .map(|row| {
                    if RowData::stays_dense(servers, &row) {
                        RowData::Dense(row)
                    } else {
                        RowData::sparse_of(&row)
                    }
                })
                .collect(),
        }
    }
}

/// One row, written densely entry by entry.
struct DenseRow<'a> {
    servers: usize,
    row: Row<'a>,
}

impl Serialize for DenseRow<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let width = self.servers.max(self.row.width());
        let mut seq = s.serialize_seq(Some(width))?;
        match self.row {
            Row::Dense(d) => {
                for x in d {
                    seq.serialize_element(x)?;
                }
                for _ in d.len()..width {
                    seq.serialize_element(&0.0f64)?;
                }
            }
            Row::Sparse(e) => {
                let mut next = e.iter().peekable();
                for i in 0..width {
                    match next.peek() {
                        Some(&&(j, x)) if j == i => {
                            seq.serialize_element(&x)?;
                            next.next();
                        }
                        _ => seq.serialize_element(&0.0f64)?,
                    }
                }
            }
        }
        seq.end()
    }
}

impl Serialize for Tasks {
    /// The dense `tasks[n][i]` of the contract.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.rows.len()))?;
        for row in self.rows() {
            seq.serialize_element(&DenseRow {
                servers: self.servers,
                row,
            })?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for Tasks {
    /// The dense `tasks[n][i]` of the contract.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Tasks, D::Error> {
        Vec::<Vec<f64>>::deserialize(d).map(Tasks::from)
    }
}

#[cfg(test)]
mod tests {
    use super::Tasks;

    #[test]
    fn dense_round_trips_through_the_sparse_rows() {
        let dense = vec![vec![0.0, 1.5, 0.0], vec![2.0, 0.0, 0.25], vec![0.0; 3]];
        let t = Tasks::from(dense.clone());
        assert_eq!((t.users(), t.servers(), t.nonzero_count()), (3, 3, 3));
        assert_eq!(t.to_dense(), dense);
        assert_eq!(t[(1, 2)], 0.25);
        assert_eq!(t.get(2, 1), 0.0);
        assert_eq!(t.user_totals(), vec![1.5, 2.25, 0.0]);
        assert_eq!(
            serde_json::to_string(&t).unwrap(),
            serde_json::to_string(&dense).unwrap()
        );
        let back: Tasks = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn set_add_and_rows_keep_entries_sorted_and_nonzero() {
        let mut t = Tasks::zeros(2, 4);
        t.set(0, 3, 1.0);
        t.set(0, 1, 2.0);
        t.add(0, 1, -2.0);
        t.add(1, 0, 0.5);
        assert_eq!(t.row(0).to_vec(), vec![(3, 1.0)]);
        assert_eq!(t.row(1).to_vec(), vec![(0, 0.5)]);
        let r = Tasks::from_rows(4, vec![vec![(2, 1.0), (0, 1.0), (2, 0.5)], vec![(1, 0.0)]]);
        assert_eq!(r.row(0).to_vec(), vec![(0, 1.0), (2, 1.5)]);
        assert!(r.row(1).to_vec().is_empty());
        assert_eq!(
            r.nonzeros().collect::<Vec<_>>(),
            vec![(0, 0, 1.0), (0, 2, 1.5)]
        );
    }

    #[test]
    fn rows_mostly_nonzero_are_held_densely_and_read_the_same() {
        let dense = vec![vec![1.0, 2.0, 0.0, 4.0], vec![0.0, 0.0, 3.0, 0.0]];
        let t = Tasks::from(dense.clone());
        assert!(matches!(t.row(0), super::Row::Dense(_)));
        assert!(matches!(t.row(1), super::Row::Sparse(_)));
        assert_eq!(t.row(0).to_vec(), vec![(0, 1.0), (1, 2.0), (3, 4.0)]);
        assert_eq!(t.to_dense(), dense);
        let by_rows = Tasks::from_rows(4, vec![vec![(3, 4.0), (0, 1.0), (1, 2.0)], vec![(2, 3.0)]]);
        assert_eq!(by_rows, t);
        assert_eq!(
            serde_json::to_string(&t).unwrap(),
            serde_json::to_string(&dense).unwrap()
        );
        let mut m = t.clone();
        m.map_values(|_, _, x| x * 2.0);
        m.set(0, 2, 1.0);
        assert_eq!(m.to_dense()[0], vec![2.0, 4.0, 1.0, 8.0]);
        assert_eq!(m[(0, 3)], 8.0);
    }

    #[test]
    fn an_empty_row_totals_positive_zero() {
        let t = Tasks::zeros(1, 2);
        assert!(t.user_total(0).is_sign_positive());
        assert_eq!(serde_json::to_string(&t).unwrap(), "[[0.0,0.0]]");
    }
}
