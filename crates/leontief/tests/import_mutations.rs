//! Mutated importer inputs: the Kubernetes snapshot (`datasets/kubernetes`)
//! and the Alibaba GPU trace's CSV lists (a fixture in the trace's schema)
//! broken the way hand-edited or truncated exports break (a field dropped,
//! a value of another type, an extreme number, an entry listed twice,
//! trailing bytes; a cell emptied, a non-number, a column missing, a line
//! cut short). Each is imported or refused as bad input naming the
//! document (and, where it can, the entry), never a panic and never "could
//! not run"; what is imported is a valid instance.

mod alibaba_fixture;
mod csv_mutation;
use alibaba_fixture::{NODES, PODS};
use csv_mutation::mutate_csv;
use leontief::import::{alibaba_gpu, kubernetes, AlibabaOptions, KubernetesOptions};
use leontief::Instance;
use proptest::prelude::*;
use serde_json::Value;

/// Every path in `v` (the root excluded).
fn paths(v: &Value, prefix: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    match v {
        Value::Object(map) => {
            for (k, c) in map {
                prefix.push(Value::String(k.clone()));
                out.push(prefix.clone());
                paths(c, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(items) => {
            for (i, c) in items.iter().enumerate() {
                prefix.push(Value::from(i));
                out.push(prefix.clone());
                paths(c, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn at<'a>(v: &'a mut Value, path: &[Value]) -> &'a mut Value {
    let mut cur = v;
    for s in path {
        cur = match s {
            Value::String(k) => &mut cur[k.as_str()],
            other => &mut cur[other.as_u64().unwrap() as usize],
        };
    }
    cur
}

/// One JSON mutation: what (0 drop, 1 retype, 2 extreme number, 3
/// duplicate an entry, 4 trailing bytes), where, and with what.
fn mutate_json(text: &str, what: u8, wher: usize, with: u8) -> String {
    let mut v: Value = serde_json::from_str(text).unwrap();
    let mut all = Vec::new();
    paths(&v, &mut Vec::new(), &mut all);
    let path = all[wher % all.len()].clone();
    let (last, head) = path.split_last().unwrap();
    match what % 5 {
        0 => match (at(&mut v, head), last) {
            (Value::Object(map), Value::String(k)) => {
                map.remove(k);
            }
            (Value::Array(items), i) => {
                items.remove(i.as_u64().unwrap() as usize);
            }
            _ => {}
        },
        1 => {
            *at(&mut v, &path) = match with % 6 {
                0 => Value::Null,
                1 => Value::Bool(true),
                2 => Value::String("12".into()),
                3 => Value::String("-3Gi".into()),
                4 => serde_json::json!([1, 2]),
                _ => serde_json::json!({"x": 1}),
            }
        }
        2 => {
            let extreme = [
                "0",
                "-1",
                "1e400m",
                "9223372036854775808",
                "1e-300",
                "NaN",
                "Infinity",
                "0.5",
            ];
            *at(&mut v, &path) = Value::String(extreme[with as usize % extreme.len()].into());
        }
        3 => {
            if let (Value::Array(items), i) = (at(&mut v, head), last) {
                let copy = items[i.as_u64().unwrap() as usize].clone();
                items.push(copy);
            }
        }
        _ => {
            let tail = [" xyz", "{}", ",", "]", "\u{0}"][with as usize % 5];
            return format!("{}{tail}", serde_json::to_string(&v).unwrap());
        }
    }
    serde_json::to_string(&v).unwrap()
}

/// The imported instance is valid, or the refusal is bad input naming
/// `documents` (one of them).
fn judged(
    what: &str,
    got: Result<leontief::import::Imported, leontief::Error>,
    documents: &[&str],
) -> Result<(), TestCaseError> {
    match got {
        Ok(imported) => {
            let valid = Instance::new(imported.instance.clone());
            prop_assert!(
                valid.is_ok(),
                "{what}: an invalid instance imported: {:?}",
                valid.err()
            );
        }
        Err(e) => {
            prop_assert!(e.is_bad_input(), "{what}: could not run: {e}");
            let message = e.to_string();
            prop_assert!(
                documents.iter().any(|d| message.contains(d)),
                "{what}: the refusal names none of {documents:?}: {message}"
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(leontief_core::strategies::config(128))]

    #[test]
    fn a_mutated_kubernetes_snapshot_is_imported_or_refused_by_document(
        in_pods in any::<bool>(),
        what in any::<u8>(),
        wher in any::<usize>(),
        with in any::<u8>(),
    ) {
        let nodes = include_str!("../../../datasets/kubernetes/nodes.json");
        let pods = include_str!("../../../datasets/kubernetes/pods.json");
        let (nodes, pods) = if in_pods {
            (nodes.to_string(), mutate_json(pods, what, wher, with))
        } else {
            (mutate_json(nodes, what, wher, with), pods.to_string())
        };
        let what = format!("{} mutation {what} at {wher} with {with}", if in_pods { "pods" } else { "nodes" });
        judged(&what, kubernetes(&nodes, &pods, &KubernetesOptions::default()), &["nodes", "pods", "node", "pod"])?;
    }

    #[test]
    fn a_mutated_alibaba_list_is_imported_or_refused_by_file(
        in_pods in any::<bool>(),
        what in any::<u8>(),
        line in any::<usize>(),
        cell in any::<usize>(),
    ) {
        let (nodes, pods) = if in_pods {
            (NODES.to_string(), mutate_csv(PODS, what, line, cell))
        } else {
            (mutate_csv(NODES, what, line, cell), PODS.to_string())
        };
        let got = alibaba_gpu(
            nodes.as_bytes(),
            "nodes.csv",
            pods.as_bytes(),
            "pods.csv",
            &AlibabaOptions::default(),
        );
        let what = format!("{} mutation {what} at line {line} cell {cell}", if in_pods { "pods" } else { "nodes" });
        judged(&what, got, &["nodes.csv", "pods.csv"])?;
    }
}

/// What the mutations found: a node whose allocatable resources are
/// none of those the pods request, and a node list with a capacity out
/// of range, were refused as `servers[1].capacity ...`, a path of the
/// instance the user never wrote; the refusal names the node.
#[test]
fn an_invalid_imported_server_is_named_by_its_node() {
    let mut nodes: Value =
        serde_json::from_str(include_str!("../../../datasets/kubernetes/nodes.json")).unwrap();
    let name = nodes["items"][1]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    nodes["items"][1]["status"]["allocatable"] = serde_json::json!({});
    let e = kubernetes(
        &nodes.to_string(),
        include_str!("../../../datasets/kubernetes/pods.json"),
        &KubernetesOptions::default(),
    )
    .unwrap_err();
    assert!(e.is_bad_input(), "{e}");
    assert!(
        e.to_string().contains(&format!(
            "nodes.items[1] ({name}).status.allocatable: capacity is all zero"
        )),
        "{e}"
    );

    let huge = NODES.replace("n1,96000,786432,", "n1,96000,1e308,");
    let e = alibaba_gpu(
        huge.as_bytes(),
        "nodes.csv",
        PODS.as_bytes(),
        "pods.csv",
        &AlibabaOptions::default(),
    )
    .unwrap_err();
    assert!(e.is_bad_input(), "{e}");
    assert!(
        e.to_string()
            .contains("nodes.csv line 3 (n1): capacity of memory is 1e308"),
        "{e}"
    );
}
