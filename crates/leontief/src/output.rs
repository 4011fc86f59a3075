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
        Layout::Auto => a.tasks.users() * servers >= SPARSE_FROM,
    };
    let text = if sparse {
        // The allocation as a JSON tree without its tasks; the nonzeros are
        // written straight from `tasks` (as a tree, 10^7 of them took
        // 1.4 GB).
        let tasks = std::mem::take(&mut a.tasks);
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
        let serde_json::Value::Object(mut map) = v else {
            return Err(anyhow::anyhow!("the allocation is not a JSON object").into());
        };
        map.remove("tasks");
        map.insert("layout".into(), serde_json::json!("sparse"));
        let doc = SparseDoc {
            map: &map,
            tasks: &tasks,
        };
        if pretty {
            serde_json::to_string_pretty(&doc)
        } else {
            serde_json::to_string(&doc)
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

/// The sparse layout's document: the allocation's fields and
/// `tasks_sparse`, keys in sorted order (as a JSON tree prints them).
struct SparseDoc<'a> {
    map: &'a serde_json::Map<String, serde_json::Value>,
    tasks: &'a leontief_core::Tasks,
}

impl Serialize for SparseDoc<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut keys: Vec<&str> = self.map.keys().map(String::as_str).collect();
        keys.push("tasks_sparse");
        keys.sort_unstable();
        let mut out = s.serialize_map(Some(keys.len()))?;
        for k in keys {
            match self.map.get(k) {
                Some(v) => out.serialize_entry(k, v)?,
                None => out.serialize_entry(k, &Coo(self.tasks))?,
            }
        }
        out.end()
    }
}

/// `tasks_sparse` ([`leontief_core::SparseTasks`], keys in sorted order),
/// each array written from the nonzeros as it goes.
struct Coo<'a>(&'a leontief_core::Tasks);

/// One column of the COO arrays.
struct Column<'a, T, F: Fn((usize, usize, f64)) -> T> {
    tasks: &'a leontief_core::Tasks,
    pick: F,
}

impl<T: Serialize, F: Fn((usize, usize, f64)) -> T> Serialize for Column<'_, T, F> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.tasks.nonzeros().map(&self.pick))
    }
}

/// The COO array of what `pick` takes from each nonzero.
fn column<T, F: Fn((usize, usize, f64)) -> T>(
    tasks: &leontief_core::Tasks,
    pick: F,
) -> Column<'_, T, F> {
    Column { tasks, pick }
}

impl Serialize for Coo<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let t = self.0;
        let mut out = s.serialize_map(Some(5))?;
        out.serialize_entry("server", &column(t, |(_, i, _)| i))?;
        out.serialize_entry("servers", &t.servers())?;
        out.serialize_entry("tasks", &column(t, |(_, _, x)| x))?;
        out.serialize_entry("user", &column(t, |(n, _, _)| n))?;
        out.serialize_entry("users", &t.users())?;
        out.end()
    }
}
