//! Dense rows that no block touches (the users' level rows), eliminated
//! before the dense Schur complement is formed, so that it covers only the
//! rows the blocks touch (the links): N x N rather than 2 N x 2 N for N
//! users, an eighth of the dense Cholesky's flops.
//!
//! Their part of the normal equations is `S_LL = Delta + U D_w U^T`:
//! `Delta` diagonal from the variables with one entry on them (a level's
//! slack, a user's level column), `U` the entries of the few *wide*
//! variables that touch several of them and no other dense row (theta).
//! Each row couples to the kept rows only through variables with one
//! entry on it (`B`, a few entries per row). With `C = D_w^-1 + U^T
//! Delta^-1 U` (as many rows as wide variables),
//!
//! `S_LL^-1 = Delta^-1 - Delta^-1 U C^-1 U^T Delta^-1` (Woodbury), and
//! the kept rows' matrix is `S_KK - B Delta^-1 B^T + V C^-1 V^T` with
//! `V = B Delta^-1 U`.
//!
//! Nothing is eliminated (the Schur complement covers every dense row)
//! when a variable touches several of them and a kept row too, or more
//! than [`MAX_WIDE`] variables are wide.

use super::normal::{backward, cholesky, forward};

/// Most wide variables the elimination takes (C is that size, and each
/// adds a rank-one term to the kept rows' matrix).
const MAX_WIDE: usize = 4;

/// The new numbering of the dense rows, kept rows first, and how many are
/// kept, when rows can be eliminated: `touched[r]` says whether a block
/// touches dense row r; `dense_only` and `entries` (variable, dense row,
/// value) are the entries of the variables of no block. The rows no
/// block touches are eliminated, but of those a variable that is not
/// wide (wide: at least 3 entries, all on such rows) touches, one only:
/// a user with no columns keeps its link, and its level goes.
/// `None`: nothing to eliminate.
pub(super) fn choose(
    touched: &[bool],
    dense_only: &[usize],
    entries: &[(usize, usize, f64)],
) -> Option<(Vec<usize>, usize)> {
    if touched.iter().all(|&t| t) {
        return None;
    }
    let mut leaf: Vec<bool> = touched.iter().map(|&t| !t).collect();
    let vars = || dense_only.windows(2).map(|w| &entries[w[0]..w[1]]);
    let wide = |ents: &[(usize, usize, f64)], leaf: &[bool]| {
        ents.len() >= 3 && ents.iter().all(|e| leaf[e.1])
    };
    let is_wide: Vec<bool> = vars().map(|e| wide(e, &leaf)).collect();
    let mut by_wide = vec![false; leaf.len()];
    for (ents, _) in vars().zip(&is_wide).filter(|v| *v.1) {
        for e in ents {
            by_wide[e.1] = true;
        }
    }
    for (ents, _) in vars().zip(&is_wide).filter(|v| !*v.1) {
        let on: Vec<usize> = ents.iter().map(|e| e.1).filter(|&r| leaf[r]).collect();
        if on.len() > 1 {
            let stay = on.iter().copied().find(|&r| by_wide[r]).unwrap_or(on[0]);
            for r in on.into_iter().filter(|&r| r != stay) {
                leaf[r] = false;
            }
        }
    }
    let mut count = 0;
    for ents in vars() {
        let on = ents.iter().filter(|e| leaf[e.1]).count();
        if on > 1 {
            if on < ents.len() {
                return None;
            }
            count += 1;
        }
    }
    if count > MAX_WIDE || leaf.iter().all(|&l| !l) {
        return None;
    }
    let kept = leaf.iter().filter(|&&l| !l).count();
    let (mut k, mut l) = (0, kept);
    let order = leaf
        .iter()
        .map(|&is| {
            let at = if is { &mut l } else { &mut k };
            *at += 1;
            *at - 1
        })
        .collect();
    Some((order, kept))
}

/// The eliminated rows' structure: rows `kept..kept + count` of the dense
/// rows.
pub(super) struct Leaves {
    pub(super) kept: usize,
    pub(super) count: usize,
    /// Delta's terms: (variable, row, value), one per variable with one
    /// entry on the eliminated rows.
    diag: Vec<(usize, usize, f64)>,
    /// Per eliminated row, where its kept rows start in `rows` (one past
    /// the last at the end): B's rows, as a list per eliminated row.
    start: Vec<usize>,
    rows: Vec<usize>,
    /// B's terms: (variable, position in `rows`, product of its entries).
    couple: Vec<(usize, usize, f64)>,
    /// The wide variables, and U (count x wide, row-major).
    wide: Vec<usize>,
    u: Vec<f64>,
}

impl Leaves {
    /// Nothing eliminated (`kept` dense rows).
    pub(super) fn none(kept: usize) -> Leaves {
        Leaves {
            kept,
            count: 0,
            diag: Vec::new(),
            start: vec![0],
            rows: Vec::new(),
            couple: Vec::new(),
            wide: Vec::new(),
            u: Vec::new(),
        }
    }

    /// Split the dense-only variables' `entries` (renumbered by
    /// [`choose`]) into those on the kept rows (returned, with their
    /// `dense_only` starts) and the eliminated rows' structure.
    pub(super) fn split(
        kept: usize,
        dense: usize,
        dense_only: &[usize],
        entries: &[(usize, usize, f64)],
    ) -> (Leaves, Vec<usize>, Vec<(usize, usize, f64)>) {
        let count = dense - kept;
        let mut only = vec![0];
        let mut on_kept = Vec::new();
        let mut diag = Vec::new();
        let mut wide = Vec::new();
        let mut pairs: Vec<(usize, usize, usize, f64)> = Vec::new();
        for w in dense_only.windows(2) {
            let ents = &entries[w[0]..w[1]];
            let leaves: Vec<&(usize, usize, f64)> = ents.iter().filter(|e| e.1 >= kept).collect();
            if leaves.len() > 1 {
                wide.push(ents);
                continue;
            }
            on_kept.extend(ents.iter().filter(|e| e.1 < kept));
            only.push(on_kept.len());
            if let Some(&&(j, l, a)) = leaves.first() {
                diag.push((j, l - kept, a));
                for &(_, k, b) in ents.iter().filter(|e| e.1 < kept) {
                    pairs.push((l - kept, k, j, a * b));
                }
            }
        }
        // B's pattern: each eliminated row's kept rows, once each.
        pairs.sort_by_key(|p| (p.0, p.1));
        let mut start = vec![0; count + 1];
        let mut rows = Vec::new();
        let mut couple = Vec::with_capacity(pairs.len());
        for (i, &(l, k, j, v)) in pairs.iter().enumerate() {
            if i == 0 || pairs[i - 1].0 != l || pairs[i - 1].1 != k {
                rows.push(k);
                start[l + 1] = rows.len();
            }
            couple.push((j, rows.len() - 1, v));
        }
        for l in 0..count {
            start[l + 1] = start[l + 1].max(start[l]);
        }
        let nw = wide.len();
        let mut u = vec![0.0; count * nw];
        let wide = wide
            .iter()
            .enumerate()
            .map(|(c, ents)| {
                for &(_, l, a) in ents.iter() {
                    u[(l - kept) * nw + c] += a;
                }
                ents[0].0
            })
            .collect();
        (
            Leaves {
                kept,
                count,
                diag,
                start,
                rows,
                couple,
                wide,
                u,
            },
            only,
            on_kept,
        )
    }

    /// Delta (before regularisation) into `f`, and the largest diagonal
    /// of the eliminated rows in the full normal equations (with the wide
    /// variables'). Called before [`Leaves::eliminate`].
    pub(super) fn diagonal(&self, d: &[f64], f: &mut LeafFactor) -> f64 {
        let nw = self.wide.len();
        f.delta.fill(0.0);
        for &(j, l, a) in &self.diag {
            f.delta[l] += d[j] * a * a;
        }
        let mut big = 0.0f64;
        for l in 0..self.count {
            let full = f.delta[l]
                + (0..nw)
                    .map(|c| d[self.wide[c]] * self.u[l * nw + c].powi(2))
                    .sum::<f64>();
            big = big.max(full);
        }
        big
    }

    /// Eliminate the rows onto `schur` (kept x kept, row-major, full),
    /// with `reg` added to Delta's diagonal. False when C is not finite.
    pub(super) fn eliminate(
        &self,
        d: &[f64],
        reg: f64,
        schur: &mut [f64],
        f: &mut LeafFactor,
    ) -> bool {
        let (nk, nw) = (self.kept, self.wide.len());
        for v in &mut f.delta {
            *v += reg;
        }
        f.b.fill(0.0);
        for &(j, at, v) in &self.couple {
            f.b[at] += d[j] * v;
        }
        // - B Delta^-1 B^T.
        for l in 0..self.count {
            let inv = 1.0 / f.delta[l];
            let span = self.start[l]..self.start[l + 1];
            for (&k1, &b1) in self.rows[span.clone()].iter().zip(&f.b[span.clone()]) {
                let s = b1 * inv;
                for (&k2, &b2) in self.rows[span.clone()].iter().zip(&f.b[span.clone()]) {
                    schur[k1 * nk + k2] -= s * b2;
                }
            }
        }
        if nw == 0 {
            return true;
        }
        // C = D_w^-1 + U^T Delta^-1 U, and V = B Delta^-1 U.
        f.c.fill(0.0);
        f.v.fill(0.0);
        for (c, &j) in self.wide.iter().enumerate() {
            f.c[c * nw + c] = 1.0 / d[j];
        }
        for l in 0..self.count {
            let inv = 1.0 / f.delta[l];
            let ul = &self.u[l * nw..(l + 1) * nw];
            for c1 in 0..nw {
                for c2 in 0..nw {
                    f.c[c1 * nw + c2] += ul[c1] * ul[c2] * inv;
                }
            }
            for at in self.start[l]..self.start[l + 1] {
                let (k, s) = (self.rows[at], f.b[at] * inv);
                for c in 0..nw {
                    f.v[k * nw + c] += s * ul[c];
                }
            }
        }
        if !cholesky(&mut f.c, nw) {
            return false;
        }
        // + V C^-1 V^T = (V L^-T)(V L^-T)^T, row by row of V.
        for k in 0..nk {
            forward(&f.c, nw, &mut f.v[k * nw..(k + 1) * nw]);
        }
        for k1 in 0..nk {
            let v1 = &f.v[k1 * nw..(k1 + 1) * nw];
            if v1.iter().all(|&x| x == 0.0) {
                continue;
            }
            for k2 in 0..nk {
                let v2 = &f.v[k2 * nw..(k2 + 1) * nw];
                schur[k1 * nk + k2] += v1.iter().zip(v2).map(|(a, b)| a * b).sum::<f64>();
            }
        }
        true
    }

    /// `v = S_LL^-1 v` in place (over the eliminated rows).
    fn solve(&self, f: &LeafFactor, v: &mut [f64], t: &mut [f64]) {
        let nw = self.wide.len();
        for (x, &dl) in v.iter_mut().zip(&f.delta) {
            *x /= dl;
        }
        if nw == 0 {
            return;
        }
        t.fill(0.0);
        for (l, &x) in v.iter().enumerate() {
            for c in 0..nw {
                t[c] += self.u[l * nw + c] * x;
            }
        }
        forward(&f.c, nw, t);
        backward(&f.c, nw, t);
        for (l, x) in v.iter_mut().enumerate() {
            let s: f64 = (0..nw).map(|c| self.u[l * nw + c] * t[c]).sum();
            *x -= s / f.delta[l];
        }
    }

    /// The kept rows' right-hand side: `r_K -= B S_LL^-1 r_L`, with
    /// `S_LL^-1 r_L` left in `u`.
    pub(super) fn reduce(&self, f: &LeafFactor, r_k: &mut [f64], r_l: &[f64], u: &mut [f64]) {
        let nw = self.wide.len();
        let (u, t) = u.split_at_mut(self.count);
        u.copy_from_slice(r_l);
        self.solve(f, u, &mut t[..nw]);
        for (l, &ul) in u.iter().enumerate() {
            for at in self.start[l]..self.start[l + 1] {
                r_k[self.rows[at]] -= f.b[at] * ul;
            }
        }
    }

    /// The eliminated rows' solution from the kept rows' `x_k`:
    /// `x_L = S_LL^-1 (r_L - B^T x_K)`, into `r_l`.
    pub(super) fn back(&self, f: &LeafFactor, x_k: &[f64], r_l: &mut [f64], u: &mut [f64]) {
        let nw = self.wide.len();
        for (l, r) in r_l.iter_mut().enumerate() {
            for at in self.start[l]..self.start[l + 1] {
                *r -= f.b[at] * x_k[self.rows[at]];
            }
        }
        self.solve(f, r_l, &mut u[self.count..self.count + nw]);
    }

    /// Scratch the back solve needs beyond the dense rows.
    pub(super) fn scratch(&self) -> usize {
        self.count + self.wide.len()
    }
}

/// One step's factor of the eliminated rows: Delta (regularised), B's
/// values, C's Cholesky factor, and V (kept x wide; `L_C^-1` applied).
pub(super) struct LeafFactor {
    delta: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
    v: Vec<f64>,
}

impl LeafFactor {
    /// Buffers for `leaves`.
    pub(super) fn new(leaves: &Leaves) -> LeafFactor {
        let nw = leaves.wide.len();
        LeafFactor {
            delta: vec![0.0; leaves.count],
            b: vec![0.0; leaves.rows.len()],
            c: vec![0.0; nw * nw],
            v: vec![0.0; leaves.kept * nw],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dense rows' system solved through [`choose`], [`Leaves::split`],
    /// the elimination and the back solve equals the full normal
    /// equations: `vars` are the dense-only variables' entries (dense row,
    /// value), `touched` the rows a block touches, `block` a symmetric
    /// positive definite term on the touched rows (a block's), `d` the
    /// scaling. Returns how many rows were kept.
    fn solves_like_the_full_system(
        touched: &[bool],
        vars: &[Vec<(usize, f64)>],
        block: &[f64],
        d: &[f64],
    ) -> usize {
        let nd = touched.len();
        let mut only = vec![0];
        let mut entries = Vec::new();
        for (j, v) in vars.iter().enumerate() {
            entries.extend(v.iter().map(|&(r, a)| (j, r, a)));
            only.push(entries.len());
        }
        let touched_rows: Vec<usize> = (0..nd).filter(|&r| touched[r]).collect();
        let nt = touched_rows.len();
        let mut full = vec![0.0; nd * nd];
        for w in only.windows(2) {
            for &(j, a, va) in &entries[w[0]..w[1]] {
                for &(_, c, vc) in &entries[w[0]..w[1]] {
                    full[a * nd + c] += d[j] * va * vc;
                }
            }
        }
        for (i, &ri) in touched_rows.iter().enumerate() {
            for (k, &rk) in touched_rows.iter().enumerate() {
                full[ri * nd + rk] += block[i * nt + k];
            }
        }
        let (order, kept) = choose(touched, &only, &entries).expect("rows to eliminate");
        for e in &mut entries {
            e.1 = order[e.1];
        }
        let (leaves, k_only, k_entries) = Leaves::split(kept, nd, &only, &entries);
        let mut schur = vec![0.0; kept * kept];
        for (i, &ri) in touched_rows.iter().enumerate() {
            for (k, &rk) in touched_rows.iter().enumerate() {
                schur[order[ri] * kept + order[rk]] += block[i * nt + k];
            }
        }
        for w in k_only.windows(2) {
            for &(j, a, va) in &k_entries[w[0]..w[1]] {
                for &(_, c, vc) in &k_entries[w[0]..w[1]] {
                    schur[a * kept + c] += d[j] * va * vc;
                }
            }
        }
        let mut f = LeafFactor::new(&leaves);
        leaves.diagonal(d, &mut f);
        assert!(leaves.eliminate(d, 0.0, &mut schur, &mut f));
        assert!(cholesky(&mut schur, kept));
        let rhs: Vec<f64> = (0..nd).map(|r| 1.0 + (r as f64 * 0.7).sin()).collect();
        let mut r = vec![0.0; nd];
        for (row, &at) in order.iter().enumerate() {
            r[at] = rhs[row];
        }
        let mut u = vec![0.0; leaves.scratch()];
        let (rk, rl) = r.split_at_mut(kept);
        leaves.reduce(&f, rk, rl, &mut u);
        forward(&schur, kept, rk);
        backward(&schur, kept, rk);
        leaves.back(&f, rk, rl, &mut u);
        // Backward stable: each row's residual within rounding of the
        // row's terms.
        for row in 0..nd {
            let terms = (0..nd).map(|c| full[row * nd + c] * r[order[c]]);
            let got: f64 = terms.clone().sum();
            let size: f64 = terms.map(f64::abs).sum::<f64>() + rhs[row].abs();
            assert!(
                (got - rhs[row]).abs() <= 1e-12 * size,
                "row {row}: {got} against {} (terms {size})",
                rhs[row]
            );
        }
        kept
    }

    /// The dense-only variables of the operator's LP for 3 users (links
    /// 0-2, levels 3-5): each user's level column (link and level), each
    /// level's slack, and theta on every level.
    fn three_users() -> Vec<Vec<(usize, f64)>> {
        let mut vars: Vec<Vec<(usize, f64)>> =
            (0..3).map(|n| vec![(n, -1.0), (3 + n, 1.0)]).collect();
        vars.extend((0..3).map(|n| vec![(3 + n, -1.0)]));
        vars.push((3..6).map(|r| (r, -1.0)).collect());
        vars
    }

    /// The operator's LP with every link touched by a block.
    #[test]
    fn eliminates_the_levels() {
        let vars = three_users();
        let block = [5.0, 1.0, 0.5, 1.0, 4.0, 1.0, 0.5, 1.0, 6.0];
        let d = [2.0, 0.5, 3.0, 1.5, 0.25, 4.0, 7.0];
        let touched = [true, true, true, false, false, false];
        assert_eq!(solves_like_the_full_system(&touched, &vars, &block, &d), 3);
        // Theta far larger than the rest (near an optimum inside its bound).
        let d = [2.0, 0.5, 3.0, 1e-6, 0.25, 4.0, 1e12];
        assert_eq!(solves_like_the_full_system(&touched, &vars, &block, &d), 3);
    }

    /// A user with no columns (its link, 2, touched by no block): its link
    /// stays (its level column touches both), its level goes; with a
    /// second wide variable beside theta on every level.
    #[test]
    fn keeps_the_link_of_a_user_without_columns() {
        let mut vars = three_users();
        vars.push(vec![(3, 0.5), (4, 2.0), (5, 1.0)]);
        let block = [5.0, 1.0, 1.0, 4.0];
        let d = [2.0, 0.5, 3.0, 1.5, 0.25, 4.0, 7.0, 0.3];
        let touched = [true, true, false, false, false, false];
        assert_eq!(solves_like_the_full_system(&touched, &vars, &block, &d), 3);
    }

    /// A variable on two untouched rows that a wide variable also
    /// touches: one of them is kept, so the wide variable would touch a
    /// kept row and nothing is eliminated. Nor when every row is touched.
    #[test]
    fn leaves_rows_a_variable_ties_to_the_kept_ones() {
        let only = [0, 3, 5];
        let entries = [
            (0, 1, 1.0),
            (0, 2, 1.0),
            (0, 3, 1.0),
            (1, 1, 1.0),
            (1, 2, 1.0),
        ];
        assert!(choose(&[true, false, false, false], &only, &entries).is_none());
        let only = [0, 3];
        assert!(choose(&[true, true, true], &only, &entries[..3]).is_none());
    }
}
