//! A class's tasks packed onto its members: each member carries exactly
//! its count's share of the class's use, and most users run on one
//! member only.
//!
//! Splitting every user's class tasks over every member by count is an
//! answer too, but it lists users x members pairs: on the Google cell at
//! 10,000 users x 10,000 entries, about 10^8. Here a class's members are
//! halved recursively. At each halving, the tasks `f_n` of each user `n`
//! that go to the first half must give that half its share `t` of the
//! half's use on every resource,
//!
//! ```text
//! sum_n f_n d_n = t sum_n q_n d_n,   0 <= f_n <= q_n,
//! ```
//!
//! with `q_n` the user's tasks in the half and `d_n` its demand. `f = t q`
//! meets it; stepping from there along null directions of `m + 1`
//! fractional columns until one reaches a bound (the reduction in
//! Carathéodory's theorem) leaves at most `m` users fractional and every
//! other user wholly on one side. So a class lists at most
//! `users + m (members - 1)` pairs, and each member's use is its share of
//! the class's use, as in the split by count.

use super::merge::Merged;
use leontief_core::{Tasks, User};
use rayon::prelude::*;

/// Below this (after each column is scaled to a largest entry of 1) a
/// pivot counts as zero: the column depends on the ones before it.
const PIVOT: f64 = 1e-12;

/// The tasks on the classes of `merged` packed onto the original entries.
pub(crate) fn pack_tasks(tasks: &Tasks, merged: &Merged) -> Tasks {
    let instance = &merged.instance;
    let users = instance.users();
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); instance.num_entries()];
    for (i, &c) in merged.class_of.iter().enumerate() {
        members[c].push(i);
    }
    let mut pieces: Vec<Vec<(usize, f64)>> = vec![Vec::new(); instance.num_entries()];
    for (n, row) in tasks.rows().enumerate() {
        for (c, x) in row {
            pieces[c].push((n, x));
        }
    }
    let placed: Vec<Vec<(usize, usize, f64)>> = pieces
        .into_par_iter()
        .zip(members.par_iter())
        .map(|(pieces, members)| {
            let mut out = Vec::with_capacity(pieces.len());
            // Tasks below zero (a solver's rounding) are not packed: they
            // stay, unchanged, on the class's first member.
            let (pieces, below): (Vec<_>, Vec<_>) = pieces.into_iter().partition(|p| p.1 > 0.0);
            out.extend(below.into_iter().map(|(n, x)| (n, members[0], x)));
            let columns = Columns::new(users, &pieces);
            halve(members, &merged.share, pieces, &columns, &mut out);
            out
        })
        .collect();
    let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); tasks.users()];
    for (n, i, x) in placed.into_iter().flatten() {
        rows[n].push((i, x));
    }
    Tasks::from_rows(merged.class_of.len(), rows)
}

/// The demand columns of a class's users on the resources it uses, each
/// resource scaled by the class's use of it.
struct Columns<'a> {
    users: &'a [User],
    /// The resources with positive use, and one over that use.
    rows: Vec<(usize, f64)>,
}

impl<'a> Columns<'a> {
    fn new(users: &'a [User], pieces: &[(usize, f64)]) -> Self {
        let m = users.first().map_or(0, |u| u.demand.len());
        let mut used = vec![0.0; m];
        for &(n, x) in pieces {
            for (u, d) in used.iter_mut().zip(&users[n].demand) {
                *u += x * d;
            }
        }
        let rows = used
            .iter()
            .enumerate()
            .filter(|(_, &u)| u > 0.0)
            .map(|(r, &u)| (r, 1.0 / u))
            .collect();
        Columns { users, rows }
    }

    fn len(&self) -> usize {
        self.rows.len()
    }

    fn column(&self, n: usize, out: &mut Vec<f64>) {
        let d = &self.users[n].demand;
        out.extend(self.rows.iter().map(|&(r, s)| d[r] * s));
    }
}

/// Place `pieces` (user, tasks) on `members`, halving them recursively.
fn halve(
    members: &[usize],
    share: &[f64],
    pieces: Vec<(usize, f64)>,
    columns: &Columns,
    out: &mut Vec<(usize, usize, f64)>,
) {
    if members.len() == 1 || pieces.is_empty() {
        out.extend(pieces.into_iter().map(|(n, x)| (n, members[0], x)));
        return;
    }
    let mid = members.len() / 2;
    let first: f64 = members[..mid].iter().map(|&i| share[i]).sum();
    let second: f64 = members[mid..].iter().map(|&i| share[i]).sum();
    let f = first_half(&pieces, first / (first + second), columns);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (&(n, q), f) in pieces.iter().zip(f) {
        if f > 0.0 {
            a.push((n, f));
        }
        if q - f > 0.0 {
            b.push((n, q - f));
        }
    }
    drop(pieces);
    halve(&members[..mid], share, a, columns, out);
    halve(&members[mid..], share, b, columns, out);
}

/// Each piece's tasks in the first half: fraction `t` of the pieces' use
/// on every resource, at most `columns.len()` pieces split.
fn first_half(pieces: &[(usize, f64)], t: f64, columns: &Columns) -> Vec<f64> {
    let k = columns.len();
    let mut f: Vec<f64> = pieces.iter().map(|&(_, q)| t * q).collect();
    let mut open: Vec<usize> = Vec::with_capacity(k + 1);
    let mut matrix: Vec<f64> = Vec::with_capacity(k * (k + 1));
    for j in 0..pieces.len() {
        open.push(j);
        if open.len() <= k {
            continue;
        }
        matrix.clear();
        for &a in &open {
            columns.column(pieces[a].0, &mut matrix);
        }
        let z = null_vector(&mut matrix, k);
        // The step along z or -z, whichever is shorter, to the first
        // bound reached.
        // (length, signed step, which piece stops, the bound it reaches)
        let mut best: Option<(f64, f64, usize, f64)> = None;
        for sign in [1.0, -1.0] {
            for (o, &a) in open.iter().enumerate() {
                let dz = sign * z[o];
                let (room, bound) = if dz > 0.0 {
                    (pieces[a].1 - f[a], pieces[a].1)
                } else if dz < 0.0 {
                    (f[a], 0.0)
                } else {
                    continue;
                };
                let length = room / dz.abs();
                if best.is_none_or(|b| length < b.0) {
                    best = Some((length, sign * length, o, bound));
                }
            }
        }
        let (_, step, o, bound) = best.expect("a null vector is nonzero");
        for (&a, &dz) in open.iter().zip(&z) {
            f[a] = (f[a] + step * dz).clamp(0.0, pieces[a].1);
        }
        f[open[o]] = bound;
        open.swap_remove(o);
    }
    f
}

/// A nonzero `z` with `sum_j z_j column_j = 0`, for the `k + 1` columns of
/// `k` entries each in `matrix` (column after column).
fn null_vector(matrix: &mut [f64], k: usize) -> Vec<f64> {
    let cols = k + 1;
    let at = |r: usize, c: usize| c * k + r;
    let mut scale = vec![0.0; cols];
    for (c, s) in scale.iter_mut().enumerate() {
        *s = (0..k).map(|r| matrix[at(r, c)].abs()).fold(0.0, f64::max);
        if *s == 0.0 {
            // A zero column: moving that piece alone changes nothing.
            let mut z = vec![0.0; cols];
            z[c] = 1.0;
            return z;
        }
        for r in 0..k {
            matrix[at(r, c)] /= *s;
        }
    }
    // Reduced row echelon form, column by column, up to the first column
    // without a pivot: column `c` before it has its pivot in row `c`.
    let mut free = k;
    for c in 0..cols {
        let best =
            (c..k).max_by(|&a, &b| matrix[at(a, c)].abs().total_cmp(&matrix[at(b, c)].abs()));
        let Some(p) = best.filter(|&p| matrix[at(p, c)].abs() >= PIVOT) else {
            free = c;
            break;
        };
        for cc in 0..cols {
            matrix.swap(at(p, cc), at(c, cc));
        }
        let v = matrix[at(c, c)];
        for cc in 0..cols {
            matrix[at(c, cc)] /= v;
        }
        for r in (0..k).filter(|&r| r != c) {
            let g = matrix[at(r, c)];
            if g != 0.0 {
                for cc in 0..cols {
                    matrix[at(r, cc)] -= g * matrix[at(c, cc)];
                }
            }
        }
    }
    let mut z = vec![0.0; cols];
    z[free] = 1.0 / scale[free];
    for c in 0..free {
        z[c] = -matrix[at(c, free)] / scale[c];
    }
    z
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `null_vector` of `cols` is nonzero and takes every row to 0.
    fn assert_null(cols: &[[f64; 2]; 3]) {
        let mut m: Vec<f64> = cols.iter().flatten().copied().collect();
        let z = null_vector(&mut m, 2);
        for r in 0..2 {
            let s: f64 = cols.iter().zip(&z).map(|(c, z)| c[r] * z).sum();
            assert!(s.abs() < 1e-12, "row {r}: {s}");
        }
        assert!(z.iter().any(|&v| v != 0.0));
    }

    #[test]
    fn the_null_vector_annihilates_the_columns() {
        assert_null(&[[1.0, 2.0], [3.0, 1.0], [2.0, 2.0]]);
    }

    #[test]
    fn a_dependent_column_gets_the_null_vector() {
        // The second column is twice the first.
        assert_null(&[[1.0, 2.0], [2.0, 4.0], [5.0, 1.0]]);
    }
}
