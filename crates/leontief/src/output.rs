//! The answer as JSON, in the dense or the sparse layout of
//! docs/instance-format.md.

use crate::error::Error;
use anyhow::Context;
use serde::{Deserialize, Serialize};

/// How `tasks` is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// Sparse from [`SPARSE_FROM`] user-server pairs, dense below.
    #[default]
    Auto,
    /// `tasks[n][i]`, every entry.
    Dense,
    /// `tasks_sparse`: the nonzero entries only (and `"layout": "sparse"`).
    Sparse,
}

/// User-server pairs from which [`Layout::Auto`] prints the sparse layout
/// (a dense `tasks` of 10^6 entries is about 10 MB of JSON, nearly all
/// zeros at that size: 2,096 nonzeros of 100,000 at 100 x 1,000).
pub const SPARSE_FROM: usize = 1_000_000;

/// The allocation's JSON in the chosen layout.
pub fn to_json(mut a: crate::Solution, layout: Layout, pretty: bool) -> Result<String, Error> {
    let servers = a.metrics.server_utilisation.len();
    let sparse = match layout {
        Layout::Dense => false,
        Layout::Sparse => true,
        Layout::Auto => a.tasks.len() * servers >= SPARSE_FROM,
    };
    let text = if sparse {
        let dense = std::mem::take(&mut a.tasks);
        let coo = leontief_core::SparseTasks::from_dense(&dense, servers);
        drop(dense);
        // The certificate's rounds sparse too, each written straight from
        // its dense rows (as a JSON tree, 387 dense rounds of 10,000
        // entries took 250 MB).
        let rounds = a
            .certificate
            .as_mut()
            .map(|c| std::mem::take(&mut c.rounds));
        let mut v = serde_json::to_value(&a).context("serialising the allocation")?;
        if let (Some(rounds), Some(c)) = (rounds, v.get_mut("certificate")) {
            c["rounds"] = rounds.iter().map(sparse_round).collect();
        }
        if let serde_json::Value::Object(map) = &mut v {
            map.remove("tasks");
            map.insert("layout".into(), serde_json::json!("sparse"));
            map.insert(
                "tasks_sparse".into(),
                serde_json::to_value(&coo).context("serialising the allocation")?,
            );
        }
        if pretty {
            serde_json::to_string_pretty(&v)
        } else {
            serde_json::to_string(&v)
        }
    } else if pretty {
        serde_json::to_string_pretty(&a)
    } else {
        serde_json::to_string(&a)
    };
    Ok(text.context("serialising the allocation")?)
}

/// A certificate round in the sparse layout: only the entries with some
/// nonzero price, listed in `entries` (every other entry's prices are 0).
/// With placement lists at 1,000 x 10,000 the dense rows were 46 MB, 0.3%
/// of them nonzero.
fn sparse_round(r: &leontief_core::RoundPrices) -> serde_json::Value {
    let (entries, prices): (Vec<usize>, Vec<&Vec<f64>>) = r
        .prices
        .iter()
        .enumerate()
        .filter(|(_, row)| row.iter().any(|&p| p != 0.0))
        .unzip();
    serde_json::json!({
        "round": r.round,
        "users": r.users,
        "entries": entries,
        "prices": prices,
    })
}
