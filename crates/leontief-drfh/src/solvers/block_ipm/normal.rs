//! The normal equations `A D A^T dy = r` of one step: their structure
//! per block ([`Layout`]), factored block by block onto the dense rows
//! and one dense Schur complement ([`Factor`]), and solved.

use super::leaves::{self, LeafFactor, Leaves};
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
    /// Per block, the dense rows its variables touch, in increasing order.
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
    /// The block variables' own term of the Schur complement, C D C^T,
    /// per kept row i (from `cross_start[i]` to `cross_start[i + 1]`):
    /// (variable, column k <= i, product of its two entries).
    pub(super) cross_start: Vec<usize>,
    pub(super) cross: Vec<(usize, usize, f64)>,
}

impl Layout {
    /// The structure of the normal equations of the variables `vars`,
    /// whose entries are `ent_start`, `ent_row`, `ent_val` (column by
    /// column, over the active rows), the active rows placed as `place`
    /// says (block and index in it, or [`DENSE`] and index among the
    /// `dense` rows), `block_rows[b]` rows in block b.
    pub(super) fn new(
        mut place: Vec<(u32, usize)>,
        block_rows: Vec<usize>,
        dense: usize,
        vars: &[Var],
        ent_start: &[usize],
        ent_row: &[usize],
        ent_val: &[f64],
    ) -> Layout {
        let nb = block_rows.len();
        // The variables of no block: (dense row, value) of their entries.
        let mut dense_only = vec![0usize];
        let mut dense_entries = Vec::new();
        for j in (0..vars.len()).filter(|&j| vars[j].block == DENSE) {
            for e in ent_start[j]..ent_start[j + 1] {
                dense_entries.push((j, place[ent_row[e]].1, ent_val[e]));
            }
            dense_only.push(dense_entries.len());
        }
        // The dense rows no block touches go last, to be eliminated before
        // the Schur complement (`leaves`).
        let mut touched = vec![false; dense];
        for j in (0..vars.len()).filter(|&j| vars[j].block != DENSE) {
            for e in ent_start[j]..ent_start[j + 1] {
                if let (DENSE, local) = place[ent_row[e]] {
                    touched[local] = true;
                }
            }
        }
        let leaves = match leaves::choose(&touched, &dense_only, &dense_entries) {
            Some((order, kept)) => {
                for p in place.iter_mut().filter(|p| p.0 == DENSE) {
                    p.1 = order[p.1];
                }
                for e in &mut dense_entries {
                    e.1 = order[e.1];
                }
                let (leaves, only, entries) =
                    Leaves::split(kept, dense, &dense_only, &dense_entries);
                (dense_only, dense_entries) = (only, entries);
                leaves
            }
            None => Leaves::none(dense),
        };
        // Each block's variables and dense rows (each once), and each
        // variable's positions among its block's dense rows.
        let mut count = vec![0usize; nb + 1];
        for v in vars.iter().filter(|v| v.block != DENSE) {
            count[v.block as usize + 1] += 1;
        }
        for blk in 0..nb {
            count[blk + 1] += count[blk];
        }
        let mut order = vec![0usize; count[nb]];
        let mut next = count.clone();
        for (j, v) in vars.iter().enumerate().filter(|(_, v)| v.block != DENSE) {
            order[next[v.block as usize]] = j;
            next[v.block as usize] += 1;
        }
        let mut block_dense: Vec<Vec<usize>> = vec![Vec::new(); nb];
        let mut pos = vec![usize::MAX; dense];
        let mut flat = BlockVars {
            start: vec![0],
            var: Vec::new(),
            in_start: vec![0],
            dense_start: vec![0],
            in_block: Vec::new(),
            dense: Vec::new(),
        };
        for blk in 0..nb {
            let list = &mut block_dense[blk];
            let block_vars = &order[count[blk]..count[blk + 1]];
            // The block's dense rows in increasing order: its Schur term then
            // lands in the lower triangle row by row (`normal::factor`).
            for &j in block_vars {
                for e in ent_start[j]..ent_start[j + 1] {
                    if let (DENSE, local) = place[ent_row[e]] {
                        if pos[local] == usize::MAX {
                            pos[local] = 0;
                            list.push(local);
                        }
                    }
                }
            }
            list.sort_unstable();
            for (p, &d) in list.iter().enumerate() {
                pos[d] = p;
            }
            for &j in block_vars {
                for e in ent_start[j]..ent_start[j + 1] {
                    let (b, local) = place[ent_row[e]];
                    if b == DENSE {
                        flat.dense.push((pos[local], ent_val[e]));
                    } else {
                        flat.in_block.push((local, ent_val[e]));
                    }
                }
                flat.var.push(j);
                flat.in_start.push(flat.in_block.len());
                flat.dense_start.push(flat.dense.len());
            }
            flat.start.push(flat.var.len());
            for &d in list.iter() {
                pos[d] = usize::MAX;
            }
        }
        let by_block = flat;
        // The block variables' C D C^T by row of the Schur complement's lower
        // triangle: (row, variable, column, product of the two entries).
        let mut terms = Vec::new();
        for (blk, list) in block_dense.iter().enumerate() {
            for k in by_block.start[blk]..by_block.start[blk + 1] {
                let dns = &by_block.dense[by_block.dense_start[k]..by_block.dense_start[k + 1]];
                for &(p1, v1) in dns {
                    for &(p2, v2) in dns.iter().filter(|e| e.0 <= p1) {
                        terms.push((list[p1], by_block.var[k], list[p2], v1 * v2));
                    }
                }
            }
        }
        let kept = leaves.kept;
        let mut cross_start = vec![0usize; kept + 1];
        for &(r, ..) in &terms {
            cross_start[r + 1] += 1;
        }
        for r in 0..kept {
            cross_start[r + 1] += cross_start[r];
        }
        let mut next = cross_start.clone();
        let mut cross = vec![(0, 0, 0.0); terms.len()];
        for (r, j, c, v) in terms {
            cross[next[r]] = (j, c, v);
            next[r] += 1;
        }
        let mut block_off = vec![0; nb + 1];
        for blk in 0..nb {
            block_off[blk + 1] = block_off[blk] + block_rows[blk];
        }
        Layout {
            place,
            block_rows,
            block_off,
            block_dense,
            dense,
            leaves,
            by_block,
            dense_only,
            dense_entries,
            cross_start,
            cross,
        }
    }
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
    /// Where each band of the Schur complement's rows starts (its end at
    /// the end), and per band scratch for one row of a block's W^T W.
    pub(super) bands: Vec<usize>,
    pub(super) band_rows: Vec<Vec<f64>>,
    /// The eliminated dense rows' factor.
    pub(super) leaf: LeafFactor,
}

/// One part's blocks: their Cholesky factors (m x m, row-major lower) and
/// W = L^-1 C (m x |dense rows of the block|, row-major), one after
/// another.
pub(super) struct Part {
    pub(super) blocks: std::ops::Range<usize>,
    pub(super) chol: Vec<f64>,
    pub(super) w: Vec<f64>,
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
            let (mut nc, mut nw) = (0, 0);
            for blk in blocks.clone() {
                let (m, t) = (layout.block_rows[blk], layout.block_dense[blk].len());
                at.push((p, nc, nw));
                nc += m * m;
                nw += m * t;
            }
            parts.push(Part {
                blocks,
                chol: vec![0.0; nc],
                w: vec![0.0; nw],
            });
        }
        let bands = bands(nd);
        let tmax = layout.block_dense.iter().map(Vec::len).max().unwrap_or(0);
        Factor {
            parts,
            at,
            schur: vec![0.0; nd * nd],
            band_rows: vec![vec![0.0; tmax]; bands.len() - 1],
            bands,
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

/// Rows of the Schur complement per band, as many bands as fit its lower
/// triangle in about [`BAND_BYTES`] each (and at least two): the first
/// row of each band, then `n`. Equal areas of the triangle, so row
/// `n sqrt(k / bands)` starts band k.
fn bands(n: usize) -> Vec<usize> {
    let count = (n * n * 4).div_ceil(BAND_BYTES).clamp(2, n.max(2));
    let mut starts: Vec<usize> = (0..count)
        .map(|k| ((n as f64) * (k as f64 / count as f64).sqrt()).round() as usize)
        .collect();
    starts.push(n);
    starts.dedup();
    starts
}

/// Bytes of the Schur complement's lower triangle one band of rows
/// covers: the band's rows stay in a core's cache (2 MiB of L2 on the
/// machine measured) while every block adds its W^T W to them.
const BAND_BYTES: usize = 512 * 1024;

/// Form and factor the normal equations `A D A^T` into `f` (see the
/// module docs). First every block's Cholesky factor and W = L^-1 C,
/// the parts in parallel. Then the Schur complement's lower triangle
/// band of rows by band of rows, each band by one task: every block
/// that touches the band's rows subtracts its rows of W^T W, the block
/// variables' C D C^T is added, the rows no block touches are eliminated
/// onto it ([`Leaves`]). Each entry is summed in block order whatever the
/// threads (a run must not depend on the scheduler). False when a factor
/// is not finite.
pub(super) fn factor(layout: &Layout, d: &[f64], f: &mut Factor) -> bool {
    let nd = layout.leaves.kept;
    let at = &f.at;
    let ok = f.parts.par_iter_mut().all(|part| {
        for blk in part.blocks.clone() {
            let m = layout.block_rows[blk];
            let t = layout.block_dense[blk].len();
            let (_, c0, w0) = at[blk];
            let mb = &mut part.chol[c0..c0 + m * m];
            let wb = &mut part.w[w0..w0 + m * t];
            mb.fill(0.0);
            wb.fill(0.0);
            let bv = &layout.by_block;
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
            }
            regularise(mb, m);
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
        }
        true
    });
    if !ok {
        return false;
    }
    let Factor {
        parts,
        schur,
        bands,
        band_rows,
        leaf,
        ..
    } = f;
    let mut tasks = Vec::with_capacity(bands.len() - 1);
    let mut rest: &mut [f64] = schur;
    for (w, scratch) in bands.windows(2).zip(band_rows.iter_mut()) {
        let (band, tail) = rest.split_at_mut((w[1] - w[0]) * nd);
        rest = tail;
        tasks.push((w[0]..w[1], band, scratch));
    }
    tasks.into_par_iter().for_each(|(rows, band, g)| {
        for (i, row) in rows.clone().zip(band.chunks_exact_mut(nd)) {
            row[..=i].fill(0.0);
        }
        for (blk, &(p, _, w0)) in at.iter().enumerate() {
            let list = &layout.block_dense[blk];
            // The block's dense rows in the band: a range, the list being
            // increasing.
            let lo = list.partition_point(|&r| r < rows.start);
            let hi = list.partition_point(|&r| r < rows.end);
            if lo == hi {
                continue;
            }
            let (m, t) = (layout.block_rows[blk], list.len());
            let wb = &parts[p].w[w0..w0 + m * t];
            for (c1, &r1) in list.iter().enumerate().take(hi).skip(lo) {
                // Row c1 of W^T W up to its diagonal, then S -= it along
                // row r1 of the lower triangle.
                let g = &mut g[..=c1];
                match m {
                    1 => gram_row::<1>(wb, t, c1, g),
                    2 => gram_row::<2>(wb, t, c1, g),
                    3 => gram_row::<3>(wb, t, c1, g),
                    4 => gram_row::<4>(wb, t, c1, g),
                    5 => gram_row::<5>(wb, t, c1, g),
                    6 => gram_row::<6>(wb, t, c1, g),
                    _ => {
                        g.fill(0.0);
                        for a in 0..m {
                            let wa = &wb[a * t..a * t + c1 + 1];
                            let v1 = wa[c1];
                            for (x, &v2) in g.iter_mut().zip(wa) {
                                *x += v1 * v2;
                            }
                        }
                    }
                }
                let srow = &mut band[(r1 - rows.start) * nd..];
                for (&x, &r2) in g.iter().zip(list) {
                    srow[r2] -= x;
                }
            }
        }
        for (i, row) in rows.clone().zip(band.chunks_exact_mut(nd)) {
            let span = layout.cross_start[i]..layout.cross_start[i + 1];
            for &(j, k, v) in &layout.cross[span] {
                row[k] += d[j] * v;
            }
        }
    });
    for w in layout.dense_only.windows(2) {
        let ents = &layout.dense_entries[w[0]..w[1]];
        for &(j, a, va) in ents {
            for &(_, c, vc) in ents.iter().filter(|e| e.1 <= a) {
                schur[a * nd + c] += d[j] * va * vc;
            }
        }
    }
    mirror_lower(schur, nd);
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

/// Row `c1` of W^T W up to its diagonal into `g` (`c1 + 1` long), W
/// being `M x t` row-major: with M known, each entry's sum over W's rows
/// is unrolled and the row vectorises across entries.
fn gram_row<const M: usize>(w: &[f64], t: usize, c1: usize, g: &mut [f64]) {
    let n = g.len();
    let rows: [&[f64]; M] = std::array::from_fn(|a| &w[a * t..a * t + n]);
    let v: [f64; M] = std::array::from_fn(|a| rows[a][c1]);
    for (c2, x) in g.iter_mut().enumerate() {
        let mut s = 0.0;
        for a in 0..M {
            s += v[a] * rows[a][c2];
        }
        *x = s;
    }
}

/// Add [`REGULARISATION`] times the largest diagonal entry to every
/// diagonal entry of the row-major n x n `m`.
fn regularise(m: &mut [f64], n: usize) {
    let big = largest_diagonal(m, n).max(1e-300);
    for i in 0..n {
        m[i * n + i] += REGULARISATION * big;
    }
}

/// Copy the lower triangle of the row-major n x n `a` onto its upper one,
/// in tiles (a column of the upper triangle written at once is a cache
/// and TLB miss per entry).
fn mirror_lower(a: &mut [f64], n: usize) {
    const TILE: usize = 32;
    for i0 in (0..n).step_by(TILE) {
        for j0 in (0..=i0).step_by(TILE) {
            for i in i0..(i0 + TILE).min(n) {
                for j in j0..(j0 + TILE).min(i) {
                    a[j * n + i] = a[i * n + j];
                }
            }
        }
    }
}

/// What [`back_solve`] reads of block `blk`: its dense rows, its
/// Cholesky factor and W, and where its rows sit in its part's slice of
/// the block rows (which starts at block row `base`).
fn solve_parts<'a>(
    layout: &'a Layout,
    f: &'a Factor,
    blk: usize,
    base: usize,
) -> (&'a [usize], &'a [f64], &'a [f64], std::ops::Range<usize>) {
    let m = layout.block_rows[blk];
    let list = &layout.block_dense[blk];
    let (chol, w) = f.block(blk, m, list.len());
    let at = layout.block_off[blk] - base;
    (list, chol, w, at..at + m)
}

/// Solve `A D A^T dy = rhs` with the factors of [`factor`] into `out`;
/// `g` and `rd` are scratch over the block rows and the dense rows (and
/// [`Leaves::scratch`] more). The blocks' solves run by parts in
/// parallel.
pub(super) fn back_solve(
    layout: &Layout,
    f: &Factor,
    rhs: &[f64],
    out: &mut [f64],
    g: &mut [f64],
    rd: &mut [f64],
) {
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
    let mut by_part = Vec::with_capacity(f.parts.len());
    let mut rest: &mut [f64] = g;
    for part in &f.parts {
        let span = off[part.blocks.end] - off[part.blocks.start];
        let (mine, tail) = rest.split_at_mut(span);
        rest = tail;
        by_part.push((part.blocks.clone(), mine));
    }
    // Each part's blocks solved and summed onto its own copy of the kept
    // dense rows (a few thousand floats, in cache), the copies added in
    // part order.
    let sums: Vec<Vec<f64>> = by_part
        .par_iter_mut()
        .map(|(blocks, gp)| {
            let base = off[blocks.start];
            let mut sum = vec![0.0; nk];
            for blk in blocks.clone() {
                let (list, chol, w, rows) = solve_parts(layout, f, blk, base);
                let (m, t) = (rows.len(), list.len());
                let gb = &mut gp[rows];
                forward(chol, m, gb);
                for (a, &ga) in gb.iter().enumerate() {
                    for (&wv, &dr) in w[a * t..(a + 1) * t].iter().zip(list) {
                        sum[dr] += wv * ga;
                    }
                }
            }
            sum
        })
        .collect();
    let (rk, rl) = rd.split_at_mut(nk);
    for sum in &sums {
        for (r, s) in rk.iter_mut().zip(sum) {
            *r -= s;
        }
    }
    layout.leaves.reduce(&f.leaf, rk, rl, extra);
    forward(&f.schur, nk, rk);
    backward(&f.schur, nk, rk);
    layout.leaves.back(&f.leaf, rk, rl, extra);
    let rd = &*rd;
    by_part.par_iter_mut().for_each(|(blocks, gp)| {
        let base = off[blocks.start];
        for blk in blocks.clone() {
            let (list, chol, w, rows) = solve_parts(layout, f, blk, base);
            let (m, t) = (rows.len(), list.len());
            let gb = &mut gp[rows];
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
    });
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
    /// Blocks whose variables touch one or two dense rows in no order,
    /// dense rows no block touches (eliminated before the Schur
    /// complement), a slack on every row: the factors solve the normal
    /// equations `A D A^T dy = rhs`, with the Schur complement below and
    /// above [`FAER_ROWS`] rows.
    #[test]
    fn factor_and_back_solve_solve_the_normal_equations() {
        let mut state = 11u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        for (nb, m, nd) in [(6, 2, 20), (40, 3, 300)] {
            let touched = nd - 4;
            let mut place: Vec<(u32, usize)> = Vec::new();
            for blk in 0..nb {
                place.extend((0..m).map(|i| (blk as u32, i)));
            }
            place.extend((0..nd).map(|i| (DENSE, i)));
            let na = place.len();
            let (mut vars, mut start, mut row, mut val) =
                (Vec::new(), vec![0], Vec::new(), Vec::new());
            let mut var = |block: u32, entries: &[(usize, f64)]| {
                vars.push(Var {
                    lower: 0.0,
                    upper: f64::INFINITY,
                    cost: 0.0,
                    block,
                });
                for &(r, v) in entries {
                    row.push(r);
                    val.push(v);
                }
                start.push(row.len());
            };
            for blk in 0..nb {
                for _ in 0..12 {
                    let mut e: Vec<(usize, f64)> =
                        (0..m).map(|i| (blk * m + i, 0.1 + next())).collect();
                    let d1 = (next() * touched as f64) as usize;
                    e.push((nb * m + d1, 0.2 + next()));
                    let d2 = (next() * touched as f64) as usize;
                    if d2 != d1 && next() < 0.6 {
                        e.push((nb * m + d2, next() - 0.5));
                    }
                    var(blk as u32, &e);
                }
            }
            for l in touched..nd {
                var(DENSE, &[(nb * m + l, 1.0), (nb * m + l % 7, 0.5)]);
            }
            for (a, &(blk, _)) in place.iter().enumerate() {
                var(blk, &[(a, -1.0)]);
            }
            let layout = Layout::new(place, vec![m; nb], nd, &vars, &start, &row, &val);
            assert!(layout.leaves.kept < nd, "{nd}");
            assert!(nd < FAER_ROWS || layout.leaves.kept >= FAER_ROWS, "{nd}");
            let d: Vec<f64> = (0..vars.len()).map(|_| 0.1 + 10.0 * next()).collect();
            let mut f = Factor::new(&layout);
            assert!(factor(&layout, &d, &mut f));
            let rhs: Vec<f64> = (0..na).map(|_| next() - 0.5).collect();
            let mut dy = vec![0.0; na];
            let mut g = vec![0.0; *layout.block_off.last().unwrap()];
            let mut rd = vec![0.0; layout.dense + layout.leaves.scratch()];
            back_solve(&layout, &f, &rhs, &mut dy, &mut g, &mut rd);
            let mut product = vec![0.0; na];
            for j in 0..vars.len() {
                let span = start[j]..start[j + 1];
                let s: f64 = span.clone().map(|e| val[e] * dy[row[e]]).sum();
                for e in span {
                    product[row[e]] += d[j] * val[e] * s;
                }
            }
            let err = product
                .iter()
                .zip(&rhs)
                .fold(0.0f64, |a, (p, r)| a.max((p - r).abs()));
            assert!(err <= 1e-9, "{nb} blocks, {nd} dense rows: {err}");
        }
    }

    /// The bands start at row 0, increase, end at n, and split the lower
    /// triangle into parts of about `BAND_BYTES` (at least two from two
    /// rows).
    #[test]
    fn bands_cover_the_rows_in_order() {
        for n in [0, 1, 2, 5, 255, 1_000, 3_000] {
            let b = bands(n);
            assert_eq!((b[0], *b.last().unwrap()), (0, n), "{n}: {b:?}");
            assert!(b.windows(2).all(|w| w[0] < w[1]), "{n}: {b:?}");
            assert!(n < 2 || b.len() >= 3, "{n}: {b:?}");
            for w in b.windows(2) {
                let bytes = (w[1] * (w[1] + 1) - w[0] * (w[0] + 1)) * 4;
                assert!(bytes <= 2 * BAND_BYTES + 8 * n, "{n}: {b:?}");
            }
        }
    }

    /// The lower triangle copied onto the upper one, across tile edges.
    #[test]
    fn mirrors_the_lower_triangle() {
        let n = 70;
        let mut a: Vec<f64> = (0..n * n).map(|e| e as f64).collect();
        let lower = a.clone();
        mirror_lower(&mut a, n);
        for i in 0..n {
            for j in 0..=i {
                assert_eq!(a[i * n + j], lower[i * n + j]);
                assert_eq!(a[j * n + i], lower[i * n + j]);
            }
        }
    }

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
