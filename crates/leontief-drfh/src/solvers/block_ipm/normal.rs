//! The normal equations `A D A^T dy = r` of one step: their structure
//! per block ([`Layout`]), factored block by block onto the dense rows
//! and one dense Schur complement ([`Factor`]), and solved.

use super::leaves::{LeafFactor, Leaves};
use super::{DENSE, PARTS, REGULARISATION};
use rayon::prelude::*;

/// One variable of the IPM: a column that is not fixed, or a row's slack.
pub(super) struct Var {
    pub(super) lower: f64,
    pub(super) upper: f64,
    /// Cost in the minimisation form.
    pub(super) cost: f64,
    /// Its block ([`DENSE`]: none); its entries are in the flat arrays.
    pub(super) block: u32,
}

/// The variables of every block, block after block, with their entries
/// in flat arrays: the factorisation reads them in order (one heap
/// vector per variable cost a cache miss each, most of a step).
pub(super) struct BlockVars {
    /// Per block, where its variables start (one past the last block at
    /// the end).
    pub(super) start: Vec<usize>,
    /// Per block variable: its index among the variables, and where its
    /// entries start in `in_block` and `dense`.
    pub(super) var: Vec<usize>,
    pub(super) in_start: Vec<usize>,
    pub(super) dense_start: Vec<usize>,
    /// (block-local row, value).
    pub(super) in_block: Vec<(usize, f64)>,
    /// (position among the block's dense rows, value).
    pub(super) dense: Vec<(usize, f64)>,
}

/// The normal equations' structure: per block its rows' count and the
/// dense rows its variables touch.
pub(super) struct Layout {
    /// Per active row: (block, local index) or (DENSE, dense index).
    pub(super) place: Vec<(u32, usize)>,
    pub(super) block_rows: Vec<usize>,
    /// Where each block's rows start in a vector over the block rows.
    pub(super) block_off: Vec<usize>,
    pub(super) block_dense: Vec<Vec<usize>>,
    /// Dense rows in all: the kept ones (those the blocks touch, and the
    /// Schur complement's) first, then those eliminated before it.
    pub(super) dense: usize,
    pub(super) leaves: Leaves,
    /// The variables of each block.
    pub(super) by_block: BlockVars,
    /// The variables of no block: where each one's entries on the kept
    /// rows start in `dense_entries` (one past the last at the end), each
    /// entry (variable, dense row, value).
    pub(super) dense_only: Vec<usize>,
    pub(super) dense_entries: Vec<(usize, usize, f64)>,
}

/// The factored normal equations of one step, in buffers kept from step
/// to step (allocating them afresh each step cost a tenth of the step:
/// page faults on the Schur complements).
pub(super) struct Factor {
    /// The blocks split into [`PARTS`] ranges, each factored by one task.
    pub(super) parts: Vec<Part>,
    /// Per block: its part, and where its factor and W start in the
    /// part's buffers.
    pub(super) at: Vec<(usize, usize, usize)>,
    /// The Schur complement's Cholesky factor (kept x kept dense rows,
    /// row-major).
    pub(super) schur: Vec<f64>,
    /// The eliminated dense rows' factor.
    pub(super) leaf: LeafFactor,
}

/// One part's blocks: their Cholesky factors (m x m, row-major lower) and
/// W = L^-1 C (m x |dense rows of the block|, row-major), one after
/// another; the part's sum of the blocks' Schur terms; scratch for one
/// block's Gram matrix W^T W.
pub(super) struct Part {
    pub(super) blocks: std::ops::Range<usize>,
    pub(super) chol: Vec<f64>,
    pub(super) w: Vec<f64>,
    pub(super) schur: Vec<f64>,
    pub(super) gram: Vec<f64>,
}

impl Factor {
    /// Buffers for `layout`'s normal equations.
    pub(super) fn new(layout: &Layout) -> Factor {
        let nb = layout.block_rows.len();
        let nd = layout.leaves.kept;
        let per = nb.div_ceil(PARTS).max(1);
        let mut at = Vec::with_capacity(nb);
        let mut parts = Vec::new();
        for (p, first) in (0..nb).step_by(per).enumerate() {
            let blocks = first..(first + per).min(nb);
            let (mut nc, mut nw, mut tmax) = (0, 0, 0);
            for blk in blocks.clone() {
                let (m, t) = (layout.block_rows[blk], layout.block_dense[blk].len());
                at.push((p, nc, nw));
                nc += m * m;
                nw += m * t;
                tmax = tmax.max(t);
            }
            parts.push(Part {
                blocks,
                chol: vec![0.0; nc],
                w: vec![0.0; nw],
                schur: vec![0.0; nd * nd],
                gram: vec![0.0; tmax * tmax],
            });
        }
        Factor {
            parts,
            at,
            schur: vec![0.0; nd * nd],
            leaf: LeafFactor::new(&layout.leaves),
        }
    }

    /// Block `blk`'s Cholesky factor and W.
    pub(super) fn block(&self, blk: usize, m: usize, t: usize) -> (&[f64], &[f64]) {
        let (p, c, w) = self.at[blk];
        let part = &self.parts[p];
        (&part.chol[c..c + m * m], &part.w[w..w + m * t])
    }
}

/// Cholesky of the row-major symmetric `a` (n x n) in place (lower
/// triangle). A pivot below `1e-30` times the largest diagonal is set
/// huge, which zeroes that direction (the usual guard of normal-equation
/// IPMs near a degenerate optimum). False when `a` is not finite.
pub(super) fn cholesky(a: &mut [f64], n: usize) -> bool {
    let big = largest_diagonal(a, n).max(1e-300);
    if n >= FAER_ROWS {
        return cholesky_blocked(a, n, big);
    }
    // Right-looking on the upper triangle (row j of U scales, then updates
    // the rows below it by contiguous axpys), then mirrored into the lower
    // triangle: the same flops as the dot-product form, vectorised.
    for j in 0..n {
        let d = a[j * n + j];
        if !d.is_finite() {
            return false;
        }
        let d = if d <= 1e-30 * big { 1e64 } else { d.sqrt() };
        a[j * n + j] = d;
        let inv = 1.0 / d;
        for v in &mut a[j * n + j + 1..(j + 1) * n] {
            *v *= inv;
        }
        let (head, tail) = a.split_at_mut((j + 1) * n);
        let uj = &head[j * n..(j + 1) * n];
        for i in j + 1..n {
            let uji = uj[i];
            if uji != 0.0 {
                let row = &mut tail[(i - j - 1) * n + i..(i - j) * n];
                for (x, &u) in row.iter_mut().zip(&uj[i..]) {
                    *x -= uji * u;
                }
            }
        }
    }
    for i in 0..n {
        for k in 0..i {
            a[i * n + k] = a[k * n + i];
        }
    }
    true
}

/// The largest diagonal entry of the row-major n x n `a`, in magnitude.
fn largest_diagonal(a: &[f64], n: usize) -> f64 {
    (0..n).fold(0.0f64, |m, i| m.max(a[i * n + i].abs()))
}

/// Rows from which [`cholesky`] runs faer's blocked factorisation on every
/// core rather than the loop below (one core, the whole trailing matrix
/// streamed per pivot). Measured on the Schur complement of the one LP
/// with placement by attribute (2 cores, a machine about 2.6 times slower
/// than benches/REPORT.md's): 1,000 rows 0.07 -> 0.011 s, 2,000 rows
/// 0.6-0.8 s -> about 0.1 s. Below a few hundred rows the loop costs
/// little next to the blocks' elimination; the bound is not measured.
const FAER_ROWS: usize = 256;

/// [`cholesky`] by faer: the lower triangle of `a` read and factored in
/// place, with the same guard on small pivots, the upper triangle left as
/// it was. faer factors L D L^T (its regularisation: a pivot at most
/// `1e-30` times `big`, the largest diagonal, or negative, becomes
/// `1e128`), then L sqrt(D) is the Cholesky factor. faer's own Cholesky
/// (0.21) leaves a regularised pivot's diagonal entry of L at the pivot
/// divided by `delta`'s root instead of that root, and the next block's
/// pivots then fail.
fn cholesky_blocked(a: &mut [f64], n: usize, big: f64) -> bool {
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::linalg::cholesky::ldlt::factor::{
        cholesky_in_place, cholesky_in_place_scratch, LdltRegularization,
    };
    if !(0..n).all(|i| a[i * n..=i * n + i].iter().all(|v| v.is_finite())) {
        return false;
    }
    let par = faer::Par::rayon(0);
    let mut buffer = MemBuffer::new(cholesky_in_place_scratch::<f64>(n, par, Default::default()));
    let signs = vec![1i8; n];
    let regularisation = LdltRegularization {
        dynamic_regularization_signs: Some(&signs),
        dynamic_regularization_delta: 1e128,
        dynamic_regularization_epsilon: 1e-30 * big,
    };
    if cholesky_in_place(
        faer::MatMut::from_row_major_slice_mut(a, n, n),
        regularisation,
        par,
        MemStack::new(&mut buffer),
        Default::default(),
    )
    .is_err()
    {
        return false;
    }
    let root: Vec<f64> = (0..n).map(|j| a[j * n + j].sqrt()).collect();
    for (i, row) in a.chunks_exact_mut(n).enumerate() {
        for (x, r) in row[..i].iter_mut().zip(&root) {
            *x *= r;
        }
        row[i] = root[i];
    }
    root.iter().all(|r| r.is_finite())
}

/// Solve L u = v in place (row-major lower L, n x n).
pub(super) fn forward(l: &[f64], n: usize, v: &mut [f64]) {
    for i in 0..n {
        let mut s = v[i];
        for k in 0..i {
            s -= l[i * n + k] * v[k];
        }
        v[i] = s / l[i * n + i];
    }
}

/// Solve L^T u = v in place.
pub(super) fn backward(l: &[f64], n: usize, v: &mut [f64]) {
    for i in (0..n).rev() {
        let mut s = v[i];
        for k in i + 1..n {
            s -= l[k * n + i] * v[k];
        }
        v[i] = s / l[i * n + i];
    }
}

/// Form and factor the normal equations `A D A^T` into `f` (see the
/// module docs): the parts in parallel, each block eliminated onto its
/// part's Schur sum, the parts summed in order at the end, the rows no
/// block touches eliminated onto it ([`Leaves`]). False when a factor is
/// not finite.
pub(super) fn factor(layout: &Layout, d: &[f64], f: &mut Factor) -> bool {
    let nd = layout.leaves.kept;
    // Regularise every diagonal.
    let reg = |m: &mut [f64], n: usize| {
        let big = (0..n).fold(0.0f64, |a, i| a.max(m[i * n + i])).max(1e-300);
        for i in 0..n {
            m[i * n + i] += REGULARISATION * big;
        }
    };
    let at = &f.at;
    // A fixed split of the blocks, each part summed into its own Schur
    // complement, the parts added in order: the same sums on any number
    // of threads (a run must not depend on the scheduler).
    let ok = f.parts.par_iter_mut().all(|part| {
        part.schur.fill(0.0);
        for blk in part.blocks.clone() {
            let m = layout.block_rows[blk];
            let list = &layout.block_dense[blk];
            let t = list.len();
            let (_, c0, w0) = at[blk];
            let mb = &mut part.chol[c0..c0 + m * m];
            let wb = &mut part.w[w0..w0 + m * t];
            mb.fill(0.0);
            wb.fill(0.0);
            let bv = &layout.by_block;
            let g = &mut part.gram[..t * t];
            g.fill(0.0);
            for k in bv.start[blk]..bv.start[blk + 1] {
                let dj = d[bv.var[k]];
                let ins = &bv.in_block[bv.in_start[k]..bv.in_start[k + 1]];
                let dns = &bv.dense[bv.dense_start[k]..bv.dense_start[k + 1]];
                for &(a, va) in ins {
                    let dva = dj * va;
                    for &(c, vc) in ins {
                        mb[a * m + c] += dva * vc;
                    }
                    for &(pos, vc) in dns {
                        wb[a * t + pos] += dva * vc;
                    }
                }
                for &(p1, v1) in dns {
                    for &(p2, v2) in dns {
                        if p2 <= p1 {
                            g[p1 * t + p2] -= dj * v1 * v2;
                        }
                    }
                }
            }
            reg(mb, m);
            if !cholesky(mb, m) {
                return false;
            }
            // W = L^-1 C: forward substitution on all of C's columns at once.
            for a in 0..m {
                let (done, rest) = wb.split_at_mut(a * t);
                let row = &mut rest[..t];
                for k in 0..a {
                    let l = mb[a * m + k];
                    if l != 0.0 {
                        for (x, &y) in row.iter_mut().zip(&done[k * t..(k + 1) * t]) {
                            *x -= l * y;
                        }
                    }
                }
                let inv = 1.0 / mb[a * m + a];
                for x in row.iter_mut() {
                    *x *= inv;
                }
            }
            // The block's W^T W - C D C^T (lower triangle, contiguous),
            // then S -= it on the block's dense rows, once per pair.
            for a in 0..m {
                let row = &wb[a * t..(a + 1) * t];
                for (c1, &v1) in row.iter().enumerate() {
                    if v1 != 0.0 {
                        for (x, &v2) in g[c1 * t..c1 * t + c1 + 1].iter_mut().zip(row) {
                            *x += v1 * v2;
                        }
                    }
                }
            }
            for (c1, &d1) in list.iter().enumerate() {
                let srow = &mut part.schur[d1 * nd..(d1 + 1) * nd];
                for (&x, &d2) in g[c1 * t..c1 * t + c1 + 1].iter().zip(list) {
                    srow[d2] -= x;
                }
            }
            for (c1, &d1) in list.iter().enumerate() {
                for (c2, &d2) in list.iter().enumerate().take(c1) {
                    part.schur[d2 * nd + d1] -= g[c1 * t + c2];
                }
            }
        }
        true
    });
    if !ok {
        return false;
    }
    let Factor { schur, leaf, .. } = f;
    schur.fill(0.0);
    for part in &f.parts {
        for (x, y) in schur.iter_mut().zip(&part.schur) {
            *x += y;
        }
    }
    for w in layout.dense_only.windows(2) {
        let ents = &layout.dense_entries[w[0]..w[1]];
        for &(j, a, va) in ents {
            for &(_, c, vc) in ents {
                schur[a * nd + c] += d[j] * va * vc;
            }
        }
    }
    // Every diagonal regularised relative to the largest of the whole
    // normal equations (the eliminated rows' too).
    let big = (0..nd)
        .fold(layout.leaves.diagonal(d, leaf), |a, i| {
            a.max(schur[i * nd + i])
        })
        .max(1e-300);
    for i in 0..nd {
        schur[i * nd + i] += REGULARISATION * big;
    }
    layout
        .leaves
        .eliminate(d, REGULARISATION * big, schur, leaf)
        && cholesky(schur, nd)
}

/// Solve `A D A^T dy = rhs` with the factors of [`factor`] into `out`;
/// `g` and `rd` are scratch over the block rows and the dense rows (and
/// [`Leaves::scratch`] more).
pub(super) fn back_solve(
    layout: &Layout,
    f: &Factor,
    rhs: &[f64],
    out: &mut [f64],
    g: &mut [f64],
    rd: &mut [f64],
) {
    let nb = layout.block_rows.len();
    let (nd, nk) = (layout.dense, layout.leaves.kept);
    let (rd, extra) = rd.split_at_mut(nd);
    let off = &layout.block_off;
    for (a, &(blk, local)) in layout.place.iter().enumerate() {
        if blk == DENSE {
            rd[local] = rhs[a];
        } else {
            g[off[blk as usize] + local] = rhs[a];
        }
    }
    for blk in 0..nb {
        let m = layout.block_rows[blk];
        let gb = &mut g[off[blk]..off[blk] + m];
        let list = &layout.block_dense[blk];
        let t = list.len();
        let (chol, w) = f.block(blk, m, t);
        forward(chol, m, gb);
        for (a, &ga) in gb.iter().enumerate() {
            for (&wv, &dr) in w[a * t..(a + 1) * t].iter().zip(list) {
                rd[dr] -= wv * ga;
            }
        }
    }
    let (rk, rl) = rd.split_at_mut(nk);
    layout.leaves.reduce(&f.leaf, rk, rl, extra);
    forward(&f.schur, nk, rk);
    backward(&f.schur, nk, rk);
    layout.leaves.back(&f.leaf, rk, rl, extra);
    for blk in 0..nb {
        let m = layout.block_rows[blk];
        let list = &layout.block_dense[blk];
        let t = list.len();
        let (chol, w) = f.block(blk, m, t);
        let gb = &mut g[off[blk]..off[blk] + m];
        for (a, ga) in gb.iter_mut().enumerate() {
            let s: f64 = w[a * t..(a + 1) * t]
                .iter()
                .zip(list)
                .map(|(&wv, &dr)| wv * rd[dr])
                .sum();
            *ga -= s;
        }
        backward(chol, m, gb);
    }
    for (o, &(blk, local)) in out.iter_mut().zip(&layout.place) {
        *o = if blk == DENSE {
            rd[local]
        } else {
            g[off[blk as usize] + local]
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A symmetric positive semidefinite n x n matrix, row-major and full:
    /// B B^T for a B of `rank` columns, plus `shift` on the diagonal.
    fn gram(n: usize, rank: usize, shift: f64, seed: u64) -> Vec<f64> {
        let b: Vec<f64> = (0..n * rank)
            .map(|e| ((e as f64 * 0.618_033 + seed as f64 * 1.7).sin() * 1e3).fract())
            .collect();
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                let s: f64 = (0..rank).map(|k| b[i * rank + k] * b[j * rank + k]).sum();
                a[i * n + j] = s + if i == j { shift } else { 0.0 };
            }
        }
        a
    }

    /// The largest entry of L L^T - A over the lower triangle, relative to
    /// `big` (L in the lower triangle of `l`).
    fn residual(a: &[f64], l: &[f64], n: usize, big: f64) -> f64 {
        let mut worst = 0.0f64;
        for i in 0..n {
            for j in 0..=i {
                let s: f64 = (0..=j).map(|k| l[i * n + k] * l[j * n + k]).sum();
                worst = worst.max((s - a[i * n + j]).abs() / big);
            }
        }
        worst
    }

    /// Both factorisations, the loop below `FAER_ROWS` rows and faer's
    /// from there, factor positive definite matrices: L L^T is A.
    #[test]
    fn factors_reproduce_the_matrix_on_either_side_of_faer_rows() {
        for (n, seed) in [(40, 1), (FAER_ROWS - 1, 2), (FAER_ROWS, 3), (300, 4)] {
            let a = gram(n, n / 2, 1e-3, seed);
            let mut l = a.clone();
            assert!(cholesky(&mut l, n), "{n}");
            let r = residual(&a, &l, n, largest_diagonal(&a, n));
            assert!(r < 1e-12, "{n}: {r:e}");
        }
    }

    /// A singular direction (a row and column of zeros) becomes a pivot of
    /// 1e64 on both paths, so its entries of L vanish and the rest still
    /// factors; an infinite or NaN entry is refused.
    #[test]
    fn guards_small_pivots_and_refuses_non_finite_entries() {
        for n in [40, 300] {
            let mut a = gram(n, n, 1.0, 5);
            let zero = n / 3;
            for k in 0..n {
                a[zero * n + k] = 0.0;
                a[k * n + zero] = 0.0;
            }
            let mut l = a.clone();
            assert!(cholesky(&mut l, n), "{n}");
            let pivot = l[zero * n + zero];
            assert!((pivot / 1e64 - 1.0).abs() < 1e-15, "{n}: {pivot:e}");
            let big = largest_diagonal(&a, n);
            let mut rest = a.clone();
            rest[zero * n + zero] = pivot * pivot;
            assert!(residual(&rest, &l, n, big) < 1e-12, "{n}");
            for bad in [f64::INFINITY, f64::NAN] {
                let mut b = gram(n, n, 1.0, 6);
                b[(n - 1) * n + 1] = bad;
                b[n + n - 1] = bad;
                assert!(!cholesky(&mut b, n), "{n}: {bad}");
            }
        }
    }
}
