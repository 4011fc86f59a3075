//! The allocation polytope as an LP/cone builder: x_{n,i} columns,
//! capacity rows, caps.

use leontief_core::{Instance, ResourceId, ServerId};
use leontief_model::{ProblemBuilder, Row, Sense};

const INF: f64 = f64::INFINITY;

/// The allocation polytope: x_{n,i} columns, capacity rows, caps.
pub(crate) struct Poly {
    pub(crate) b: ProblemBuilder,
    pub(crate) cols: Vec<Vec<(ServerId, leontief_model::Col)>>,
}

pub(crate) fn polytope(instance: &Instance, sense: Sense) -> Poly {
    let (m, k) = (instance.num_resources(), instance.num_entries());
    let mut b = ProblemBuilder::new(sense);
    let cap: Vec<Row> = (0..k * m)
        .map(|j| {
            b.add_row(
                -INF,
                instance.class_capacity(ServerId(j / m), ResourceId(j % m)),
            )
        })
        .collect();
    let caps: Vec<Option<Row>> = instance
        .users()
        .iter()
        .map(|u| u.tasks.map(|t| b.add_row(-INF, t)))
        .collect();
    Poly {
        b,
        cols: Vec::new(),
    }
    .with_columns(instance, &cap, &caps)
}

impl Poly {
    pub(crate) fn with_columns(
        mut self,
        instance: &Instance,
        cap: &[Row],
        caps: &[Option<Row>],
    ) -> Poly {
        let m = instance.num_resources();
        for n in instance.user_ids() {
            let d = &instance.user(n).demand;
            let mut mine = Vec::new();
            for i in instance.server_ids().filter(|&i| instance.can_run_on(n, i)) {
                let e = (0..m)
                    .filter(|&r| d[r] > 0.0)
                    .map(|r| (cap[i.0 * m + r], d[r]))
                    .chain(caps[n.0].map(|row| (row, 1.0)));
                mine.push((i, self.b.add_col(0.0, 0.0, INF, e)));
            }
            self.cols.push(mine);
        }
        self
    }
}
