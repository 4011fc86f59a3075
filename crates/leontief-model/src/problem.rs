use serde::{Deserialize, Serialize};

/// Index of a row (constraint) of a [`Problem`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Row(pub usize);

/// Index of a column (variable) of a [`Problem`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Col(pub usize);

/// Optimisation sense.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sense {
    /// Minimise the objective.
    Minimise,
    /// Maximise the objective.
    Maximise,
}

/// The kind of a cone block over consecutive rows.
///
/// A `Linear` row is the range `row_lower <= a x <= row_upper`. The rows of
/// every other block state `s = row_upper - A x` in the cone (the
/// convention of Clarabel; `row_lower` is ignored there), so a constant
/// entry of the cone vector is a row with no coefficients and `row_upper`
/// set to it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ConeKind {
    /// Plain linear ranges `row_lower <= a x <= row_upper`.
    Linear,
    /// Second-order cone over the block's rows: `||s[1..]|| <= s[0]`.
    SecondOrder,
    /// Exponential cone, blocks of 3 rows: s1 exp(s0 / s1) <= s2, s1 > 0.
    Exponential,
    /// Power cone, blocks of 3 rows: s0^alpha s1^(1 - alpha) >= |s2|.
    Power {
        /// The exponent alpha in (0, 1).
        alpha: f64,
    },
}

/// A run of `len` consecutive rows, starting at `start`, of one cone kind.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ConeBlock {
    /// First row of the block.
    pub start: usize,
    /// Number of rows.
    pub len: usize,
    /// Kind of cone.
    pub kind: ConeKind,
}

/// A sparse optimisation problem in CSC form (see the crate docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Problem {
    /// Optimisation sense.
    pub sense: Sense,
    /// Constant added to the objective.
    pub offset: f64,
    /// Objective coefficient of each column.
    pub col_cost: Vec<f64>,
    /// Lower bound of each column (may be `-inf`).
    pub col_lower: Vec<f64>,
    /// Upper bound of each column (may be `+inf`).
    pub col_upper: Vec<f64>,
    /// Lower bound of each row (may be `-inf`).
    pub row_lower: Vec<f64>,
    /// Upper bound of each row (may be `+inf`).
    pub row_upper: Vec<f64>,
    /// CSC column starts, `num_cols + 1` entries.
    pub a_start: Vec<usize>,
    /// CSC row index of each entry (sorted within a column, no repeats).
    pub a_index: Vec<usize>,
    /// CSC value of each entry.
    pub a_value: Vec<f64>,
    /// Run-length cone list over the rows; empty means every row is linear.
    pub cones: Vec<ConeBlock>,
}

impl Problem {
    /// Number of columns.
    pub fn num_cols(&self) -> usize {
        self.col_cost.len()
    }

    /// Number of rows.
    pub fn num_rows(&self) -> usize {
        self.row_lower.len()
    }

    /// Number of stored matrix entries.
    pub fn num_nonzeros(&self) -> usize {
        self.a_value.len()
    }

    /// True when every row is a linear range (no cones beyond `Linear`).
    pub fn is_lp(&self) -> bool {
        self.cones.iter().all(|b| b.kind == ConeKind::Linear)
    }

    /// Append a column (entries in any row order, no repeats); the
    /// column-generation path of the max-min operator grows its LP this
    /// way through [`crate::LoadedLp::add_cols`].
    ///
    /// # Panics
    /// If an entry names a row that does not exist (a programming error).
    pub fn push_col(&mut self, col: &NewCol) -> Col {
        let mut e = col.entries.clone();
        e.sort_by_key(|(r, _)| r.0);
        for (r, v) in e {
            assert!(
                r.0 < self.num_rows(),
                "column entry names undeclared row {}",
                r.0
            );
            self.a_index.push(r.0);
            self.a_value.push(v);
        }
        self.a_start.push(self.a_index.len());
        self.col_cost.push(col.cost);
        self.col_lower.push(col.lower);
        self.col_upper.push(col.upper);
        Col(self.col_cost.len() - 1)
    }

    /// The entries `(row, value)` of column `col`.
    pub fn column(&self, col: Col) -> impl Iterator<Item = (Row, f64)> + '_ {
        let range = self.a_start[col.0]..self.a_start[col.0 + 1];
        self.a_index[range.clone()]
            .iter()
            .zip(&self.a_value[range])
            .map(|(&r, &v)| (Row(r), v))
    }

    /// Row activities `A x`.
    pub fn row_activity(&self, x: &[f64]) -> Vec<f64> {
        let mut ax = vec![0.0; self.num_rows()];
        for (j, &xj) in x.iter().enumerate() {
            if xj == 0.0 {
                continue;
            }
            for k in self.a_start[j]..self.a_start[j + 1] {
                ax[self.a_index[k]] += self.a_value[k] * xj;
            }
        }
        ax
    }

    /// `A^T y`, one entry per column.
    pub fn transpose_times(&self, y: &[f64]) -> Vec<f64> {
        (0..self.num_cols())
            .map(|j| {
                (self.a_start[j]..self.a_start[j + 1])
                    .map(|k| self.a_value[k] * y[self.a_index[k]])
                    .sum()
            })
            .collect()
    }

    /// The position of entry `(row, col)` in `a_value`, if stored.
    pub fn entry_position(&self, row: Row, col: Col) -> Option<usize> {
        let range = self.a_start[col.0]..self.a_start[col.0 + 1];
        self.a_index[range.clone()]
            .binary_search(&row.0)
            .ok()
            .map(|p| range.start + p)
    }

    /// Objective value `c^T x + offset`.
    pub fn objective_value(&self, x: &[f64]) -> f64 {
        self.offset + self.col_cost.iter().zip(x).map(|(c, v)| c * v).sum::<f64>()
    }
}

/// A column to append to a loaded problem.
#[derive(Debug, Clone, PartialEq)]
pub struct NewCol {
    /// Objective coefficient.
    pub cost: f64,
    /// Lower bound.
    pub lower: f64,
    /// Upper bound.
    pub upper: f64,
    /// Entries `(row, value)`, each row at most once.
    pub entries: Vec<(Row, f64)>,
}

/// Builds a [`Problem`] column-wise: declare every row, then add columns.
///
/// ```
/// use leontief_model::{ProblemBuilder, Sense};
/// // maximise x + y subject to x + 2y <= 4, 3x + y <= 6, x, y >= 0
/// let mut b = ProblemBuilder::new(Sense::Maximise);
/// let r1 = b.add_row(f64::NEG_INFINITY, 4.0);
/// let r2 = b.add_row(f64::NEG_INFINITY, 6.0);
/// b.add_col(1.0, 0.0, f64::INFINITY, [(r1, 1.0), (r2, 3.0)]);
/// b.add_col(1.0, 0.0, f64::INFINITY, [(r1, 2.0), (r2, 1.0)]);
/// let p = b.build();
/// assert_eq!(p.a_start, vec![0, 2, 4]);
/// assert_eq!(p.a_index, vec![0, 1, 0, 1]);
/// ```
#[derive(Debug, Clone)]
pub struct ProblemBuilder {
    p: Problem,
    scratch: Vec<(usize, f64)>,
}

impl ProblemBuilder {
    /// An empty problem with the given sense.
    pub fn new(sense: Sense) -> Self {
        ProblemBuilder {
            p: Problem {
                sense,
                offset: 0.0,
                col_cost: Vec::new(),
                col_lower: Vec::new(),
                col_upper: Vec::new(),
                row_lower: Vec::new(),
                row_upper: Vec::new(),
                a_start: vec![0],
                a_index: Vec::new(),
                a_value: Vec::new(),
                cones: Vec::new(),
            },
            scratch: Vec::new(),
        }
    }

    /// Reserve room for `cols` columns and `nnz` entries.
    pub fn reserve(&mut self, rows: usize, cols: usize, nnz: usize) {
        self.p.row_lower.reserve(rows);
        self.p.row_upper.reserve(rows);
        self.p.col_cost.reserve(cols);
        self.p.col_lower.reserve(cols);
        self.p.col_upper.reserve(cols);
        self.p.a_start.reserve(cols);
        self.p.a_index.reserve(nnz);
        self.p.a_value.reserve(nnz);
    }

    /// Declare a row `lower <= a x <= upper`.
    pub fn add_row(&mut self, lower: f64, upper: f64) -> Row {
        self.p.row_lower.push(lower);
        self.p.row_upper.push(upper);
        Row(self.p.row_lower.len() - 1)
    }

    /// Number of rows declared so far.
    pub fn num_rows(&self) -> usize {
        self.p.row_lower.len()
    }

    /// Add a column with objective coefficient `cost`, bounds and entries.
    ///
    /// Entries may come in any row order; they are sorted within the column.
    /// Zero values are kept (a stored zero is a place a later refill may
    /// change). Repeated rows within one column are summed.
    ///
    /// # Panics
    /// If an entry names a row that was not declared: a programming error
    /// in the formulation, never a consequence of user input.
    pub fn add_col(
        &mut self,
        cost: f64,
        lower: f64,
        upper: f64,
        entries: impl IntoIterator<Item = (Row, f64)>,
    ) -> Col {
        let rows = self.p.row_lower.len();
        self.scratch.clear();
        let mut sorted = true;
        let mut last = None;
        for (r, v) in entries {
            assert!(r.0 < rows, "column entry names undeclared row {}", r.0);
            if let Some(l) = last {
                sorted &= r.0 > l;
            }
            last = Some(r.0);
            self.scratch.push((r.0, v));
        }
        if !sorted {
            self.scratch.sort_by_key(|e| e.0);
            self.scratch.dedup_by(|b, a| {
                if a.0 == b.0 {
                    a.1 += b.1;
                    true
                } else {
                    false
                }
            });
        }
        for &(r, v) in &self.scratch {
            self.p.a_index.push(r);
            self.p.a_value.push(v);
        }
        self.p.a_start.push(self.p.a_index.len());
        self.p.col_cost.push(cost);
        self.p.col_lower.push(lower);
        self.p.col_upper.push(upper);
        Col(self.p.col_cost.len() - 1)
    }

    /// Declare the rows `start .. start + len` (already added) as one cone
    /// block; rows in no block are linear.
    ///
    /// # Panics
    /// If the rows were not declared or overlap an earlier block.
    pub fn add_cone(&mut self, start: Row, len: usize, kind: ConeKind) {
        assert!(
            start.0 + len <= self.p.row_lower.len(),
            "cone over undeclared rows"
        );
        if let Some(last) = self.p.cones.last() {
            assert!(
                start.0 >= last.start + last.len,
                "cone blocks must come in row order"
            );
        }
        self.p.cones.push(ConeBlock {
            start: start.0,
            len,
            kind,
        });
    }

    /// Add a constant to the objective.
    pub fn set_offset(&mut self, offset: f64) {
        self.p.offset = offset;
    }

    /// The finished problem.
    pub fn build(self) -> Problem {
        self.p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsorted_and_repeated_entries_are_normalised() {
        let mut b = ProblemBuilder::new(Sense::Minimise);
        let r0 = b.add_row(0.0, 1.0);
        let r1 = b.add_row(0.0, 1.0);
        let r2 = b.add_row(0.0, 1.0);
        b.add_col(1.0, 0.0, 1.0, [(r2, 1.0), (r0, 2.0), (r2, 3.0)]);
        b.add_col(1.0, 0.0, 1.0, [(r1, 5.0)]);
        let p = b.build();
        assert_eq!(p.a_start, vec![0, 2, 3]);
        assert_eq!(p.a_index, vec![0, 2, 1]);
        assert_eq!(p.a_value, vec![2.0, 4.0, 5.0]);
        assert_eq!(p.entry_position(r2, Col(0)), Some(1));
        assert_eq!(p.entry_position(r1, Col(0)), None);
        assert_eq!(p.row_activity(&[1.0, 2.0]), vec![2.0, 10.0, 4.0]);
        assert_eq!(p.transpose_times(&[1.0, 1.0, 1.0]), vec![6.0, 5.0]);
    }
}
