//! Mutated instances (issue 14): take a valid generated instance, break it
//! the way a hand-edited or machine-written file breaks (drop a field,
//! change a type, an extreme or non-finite number, a wrong length, a
//! duplicate, trailing bytes), and require either a refusal whose every
//! issue names the field, or an answer that runs, never a panic, and that
//! verifies whenever it says `optimal`.

use leontief::VerifyMode;
use leontief_cli::MechParams;
use leontief_core::strategies::{config, instance, Shape};
use leontief_core::{Instance, InstanceError, Status};
use proptest::prelude::*;
use serde_json::Value;

/// A step into a JSON value.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// Every path in `v` (the root excluded).
fn paths(v: &Value, prefix: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match v {
        Value::Object(map) => {
            for (k, c) in map {
                prefix.push(Step::Key(k.clone()));
                out.push(prefix.clone());
                paths(c, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(items) => {
            for (i, c) in items.iter().enumerate() {
                prefix.push(Step::Index(i));
                out.push(prefix.clone());
                paths(c, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn parent<'a>(v: &'a mut Value, path: &[Step]) -> &'a mut Value {
    let mut cur = v;
    for s in &path[..path.len() - 1] {
        cur = match s {
            Step::Key(k) => &mut cur[k.as_str()],
            Step::Index(i) => &mut cur[*i],
        };
    }
    cur
}

/// How to break the file.
#[derive(Debug, Clone)]
enum Mutation {
    /// Remove the value at a path (a field, or an array entry).
    Drop(usize),
    /// Replace the value at a path by one of another type.
    Retype(usize, u8),
    /// Replace the value at a path by an extreme number.
    Extreme(usize, u8),
    /// Duplicate an array entry (a second user or server of that name).
    Duplicate(usize),
    /// Write the text and splice in a non-JSON number where a number was.
    RawNumber(u8),
    /// Append bytes after the document.
    Trailing(u8),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Drop),
        (any::<usize>(), any::<u8>()).prop_map(|(p, k)| Mutation::Retype(p, k)),
        (any::<usize>(), any::<u8>()).prop_map(|(p, k)| Mutation::Extreme(p, k)),
        any::<usize>().prop_map(Mutation::Duplicate),
        any::<u8>().prop_map(Mutation::RawNumber),
        any::<u8>().prop_map(Mutation::Trailing),
    ]
}

const EXTREMES: [f64; 10] = [
    0.0,
    -1.0,
    -0.0,
    5e-324,
    1e-300,
    1e-151,
    1e151,
    1e300,
    1.7e308,
    9.007199254740993e15,
];

fn apply(inst: &Instance, m: &Mutation) -> String {
    let mut v = serde_json::to_value(inst.to_raw()).unwrap();
    let mut all = Vec::new();
    paths(&v, &mut Vec::new(), &mut all);
    let pick = |i: usize| all[i % all.len()].clone();
    match *m {
        Mutation::Drop(i) => {
            let path = pick(i);
            match (parent(&mut v, &path), path.last().unwrap()) {
                (Value::Object(map), Step::Key(k)) => {
                    map.remove(k);
                }
                (Value::Array(items), Step::Index(j)) => {
                    items.remove(*j);
                }
                _ => {}
            }
        }
        Mutation::Retype(i, k) => {
            let path = pick(i);
            let new = match k % 5 {
                0 => Value::Null,
                1 => Value::Bool(true),
                2 => Value::String("12".into()),
                3 => serde_json::json!([1, 2]),
                _ => serde_json::json!({"x": 1}),
            };
            *set(&mut v, &path) = new;
        }
        Mutation::Extreme(i, k) => {
            let numbers: Vec<Vec<Step>> = all
                .iter()
                .filter(|p| {
                    let mut w = v.clone();
                    set(&mut w, p).is_number()
                })
                .cloned()
                .collect();
            if !numbers.is_empty() {
                let path = numbers[i % numbers.len()].clone();
                *set(&mut v, &path) = serde_json::json!(EXTREMES[k as usize % EXTREMES.len()]);
            }
        }
        Mutation::Duplicate(i) => {
            let path = pick(i);
            if let (Value::Array(items), Step::Index(j)) =
                (parent(&mut v, &path), path.last().unwrap())
            {
                let copy = items[*j].clone();
                items.push(copy);
            }
        }
        Mutation::RawNumber(k) => {
            let text = serde_json::to_string(&v).unwrap();
            let bad =
                ["NaN", "Infinity", "-Infinity", "1e400", "0x10", "1.", "--1"][k as usize % 7];
            // The first capacity's first number.
            return text.replacen("\"capacity\":[", &format!("\"capacity\":[{bad},"), 1);
        }
        Mutation::Trailing(k) => {
            let text = serde_json::to_string(&v).unwrap();
            let tail = [" xyz", "{}", ",", "\n{\"resources\":[]}", "]", "\u{0}"][k as usize % 6];
            return format!("{text}{tail}");
        }
    }
    serde_json::to_string(&v).unwrap()
}

fn set<'a>(v: &'a mut Value, path: &[Step]) -> &'a mut Value {
    let mut cur = v;
    for s in path {
        cur = match s {
            Step::Key(k) => &mut cur[k.as_str()],
            Step::Index(i) => &mut cur[*i],
        };
    }
    cur
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn a_mutated_instance_is_refused_by_field_or_solved(inst in instance(Shape::small()), m in mutation()) {
        let text = apply(&inst, &m);
        match Instance::from_json_str(&text) {
            Err(e) => {
                for issue in e.issues() {
                    prop_assert!(!issue.reason.is_empty());
                    // Every issue names its field, except what concerns the
                    // document as a whole (its syntax, trailing data).
                    let about_document = matches!(e, InstanceError::Parse { .. })
                        && (issue.reason.contains("line") || issue.reason.contains("trailing"));
                    prop_assert!(
                        !issue.at.is_empty() || about_document,
                        "{m:?}: an issue without a field: {issue}\n{text}"
                    );
                }
            }
            Ok(changed) => {
                for name in ["drfh", "bbf-eg", "psdsf"] {
                    match leontief_cli::solve(&changed, name, &MechParams::default(), VerifyMode::Auto) {
                        Ok(a) => prop_assert!(
                            a.status != Status::Optimal
                                || a.verification.as_ref().is_some_and(|v| v.ok),
                            "{m:?}: {name} optimal but not verified: {:?}\n{text}",
                            a.verification
                        ),
                        Err(f) => prop_assert_eq!(f.code, 2, "{:?}: {} could not run: {}\n{}", m, name, f.message, text),
                    }
                }
            }
        }
    }
}
