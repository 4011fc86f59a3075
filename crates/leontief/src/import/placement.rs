//! Where the Kubernetes scheduler may put a new pod: `spec.nodeSelector`,
//! required node affinity, taints and tolerations, and the taints a
//! cordoned (`spec.unschedulable`) or NotReady node carries implicitly
//! (`node.kubernetes.io/unschedulable`, `node.kubernetes.io/not-ready`,
//! both `NoSchedule`, as the node lifecycle controller writes them).
//! Pods already bound to a node stay there whatever these rules say now;
//! the importer adds those nodes to their user's list.

use crate::error::{bad_input, Error};
use serde_json::{Map, Value};

/// What placement reads of a node.
#[derive(Debug, Clone)]
pub(crate) struct NodeFacts {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.labels`.
    pub labels: Map<String, Value>,
    /// `spec.taints` with `NoSchedule` or `NoExecute`, plus the implicit
    /// ones of a cordoned or NotReady node.
    pub taints: Vec<Taint>,
}

/// A taint that keeps new pods off a node unless tolerated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Taint {
    pub key: String,
    pub value: String,
    pub effect: String,
}

const UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";
const NOT_READY: &str = "node.kubernetes.io/not-ready";

fn str_at<'a>(v: &'a Value, key: &str, at: &str) -> Result<Option<&'a str>, Error> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(bad_input(format!("{at}.{key} is not a string"))),
    }
}

fn array_at<'a>(v: Option<&'a Value>, at: &str) -> Result<&'a [Value], Error> {
    match v {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(_) => Err(bad_input(format!("{at} is not an array"))),
    }
}

impl NodeFacts {
    /// Read node `n` (`at`: `nodes.items[i] (name)`).
    pub fn read(n: &Value, name: &str, at: &str) -> Result<NodeFacts, Error> {
        let labels = match n.pointer("/metadata/labels") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => return Err(bad_input(format!("{at}.metadata.labels is not an object"))),
        };
        let mut taints = Vec::new();
        for (t, v) in array_at(n.pointer("/spec/taints"), &format!("{at}.spec.taints"))?
            .iter()
            .enumerate()
        {
            let tat = format!("{at}.spec.taints[{t}]");
            let key = str_at(v, "key", &tat)?
                .ok_or_else(|| bad_input(format!("{tat}.key is missing")))?;
            let effect = str_at(v, "effect", &tat)?.unwrap_or("");
            match effect {
                "NoSchedule" | "NoExecute" => taints.push(Taint {
                    key: key.to_string(),
                    value: str_at(v, "value", &tat)?.unwrap_or("").to_string(),
                    effect: effect.to_string(),
                }),
                "PreferNoSchedule" => {}
                _ => {
                    return Err(bad_input(format!(
                        "{tat}.effect \"{effect}\": use NoSchedule, PreferNoSchedule or NoExecute"
                    )))
                }
            }
        }
        let mut implicit = |key: &str| {
            if !taints.iter().any(|t| t.key == key) {
                taints.push(Taint {
                    key: key.to_string(),
                    value: String::new(),
                    effect: "NoSchedule".into(),
                });
            }
        };
        if n.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true) {
            implicit(UNSCHEDULABLE);
        }
        let ready = array_at(
            n.pointer("/status/conditions"),
            &format!("{at}.status.conditions"),
        )?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))
        .map(|c| c.get("status").and_then(Value::as_str) == Some("True"));
        // A node without a Ready condition (kwok, hand-written lists) is
        // taken as ready; one whose Ready is False or Unknown is not.
        if ready == Some(false) {
            implicit(NOT_READY);
        }
        Ok(NodeFacts {
            name: name.to_string(),
            labels,
            taints,
        })
    }

    /// The value of label `key`.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels.get(key).and_then(Value::as_str)
    }
}

/// One toleration of a pod.
struct Toleration {
    key: String,
    exists: bool,
    value: String,
    effect: String,
}

impl Toleration {
    fn tolerates(&self, t: &Taint) -> bool {
        (self.effect.is_empty() || self.effect == t.effect)
            && (if self.key.is_empty() {
                self.exists
            } else {
                self.key == t.key && (self.exists || self.value == t.value)
            })
    }
}

/// One requirement of a node selector term.
struct Requirement {
    key: String,
    op: Op,
    values: Vec<String>,
    /// `matchFields` (only `metadata.name`) rather than a label.
    field: bool,
}

enum Op {
    In,
    NotIn,
    Exists,
    DoesNotExist,
    Gt(i64),
    Lt(i64),
}

impl Requirement {
    fn matches(&self, node: &NodeFacts) -> bool {
        let value = if self.field {
            Some(node.name.as_str())
        } else {
            node.label(&self.key)
        };
        match (&self.op, value) {
            (Op::In, Some(v)) => self.values.iter().any(|x| x == v),
            (Op::In, None) => false,
            (Op::NotIn, Some(v)) => !self.values.iter().any(|x| x == v),
            (Op::NotIn, None) => true,
            (Op::Exists, v) => v.is_some(),
            (Op::DoesNotExist, v) => v.is_none(),
            (Op::Gt(b), Some(v)) => v.parse::<i64>().is_ok_and(|x| x > *b),
            (Op::Lt(b), Some(v)) => v.parse::<i64>().is_ok_and(|x| x < *b),
            (Op::Gt(_) | Op::Lt(_), None) => false,
        }
    }

    fn read(v: &Value, field: bool, at: &str) -> Result<Requirement, Error> {
        let key = str_at(v, "key", at)?
            .ok_or_else(|| bad_input(format!("{at}.key is missing")))?
            .to_string();
        if field && key != "metadata.name" {
            return Err(bad_input(format!(
                "{at}.key \"{key}\": matchFields supports only metadata.name"
            )));
        }
        let values: Vec<String> = array_at(v.get("values"), &format!("{at}.values"))?
            .iter()
            .enumerate()
            .map(|(k, x)| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| bad_input(format!("{at}.values[{k}] is not a string")))
            })
            .collect::<Result<_, _>>()?;
        let one_integer = || -> Result<i64, Error> {
            match values.as_slice() {
                [x] => x
                    .parse()
                    .map_err(|_| bad_input(format!("{at}.values[0] \"{x}\" is not an integer"))),
                _ => Err(bad_input(format!(
                    "{at}.values must hold exactly one integer for Gt and Lt"
                ))),
            }
        };
        let op = match str_at(v, "operator", at)?.unwrap_or("") {
            "In" => Op::In,
            "NotIn" => Op::NotIn,
            "Exists" if !field => Op::Exists,
            "DoesNotExist" if !field => Op::DoesNotExist,
            "Gt" if !field => Op::Gt(one_integer()?),
            "Lt" if !field => Op::Lt(one_integer()?),
            other => {
                return Err(bad_input(format!(
                    "{at}.operator \"{other}\": use {}",
                    if field {
                        "In or NotIn (matchFields)"
                    } else {
                        "In, NotIn, Exists, DoesNotExist, Gt or Lt"
                    }
                )))
            }
        };
        if matches!(op, Op::In | Op::NotIn) && values.is_empty() {
            return Err(bad_input(format!(
                "{at}.values is empty (In and NotIn need values)"
            )));
        }
        Ok(Requirement {
            key,
            op,
            values,
            field,
        })
    }
}

/// A pod's placement rules, read once and matched against every node.
pub(crate) struct PodRules {
    selector: Vec<(String, String)>,
    /// Required node affinity: OR over terms, AND within a term; `None`
    /// when the pod has none.
    terms: Option<Vec<Vec<Requirement>>>,
    tolerations: Vec<Toleration>,
}

impl PodRules {
    /// Read pod `p`'s rules (`at`: `pods.items[j]`).
    pub fn read(p: &Value, at: &str) -> Result<PodRules, Error> {
        let selector = match p.pointer("/spec/nodeSelector") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Object(m)) => m
                .iter()
                .map(|(k, v)| {
                    v.as_str()
                        .map(|s| (k.clone(), s.to_string()))
                        .ok_or_else(|| {
                            bad_input(format!("{at}.spec.nodeSelector.{k} is not a string"))
                        })
                })
                .collect::<Result<_, _>>()?,
            Some(_) => {
                return Err(bad_input(format!(
                    "{at}.spec.nodeSelector is not an object"
                )))
            }
        };
        let req_at = format!(
            "{at}.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        );
        let terms = match p
            .pointer("/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution")
        {
            None | Some(Value::Null) => None,
            Some(r) => {
                let list = array_at(
                    r.get("nodeSelectorTerms"),
                    &format!("{req_at}.nodeSelectorTerms"),
                )?;
                let mut terms = Vec::with_capacity(list.len());
                for (t, term) in list.iter().enumerate() {
                    let tat = format!("{req_at}.nodeSelectorTerms[{t}]");
                    let mut reqs = Vec::new();
                    for (field, name) in [(false, "matchExpressions"), (true, "matchFields")] {
                        for (e, x) in array_at(term.get(name), &format!("{tat}.{name}"))?
                            .iter()
                            .enumerate()
                        {
                            reqs.push(Requirement::read(x, field, &format!("{tat}.{name}[{e}]"))?);
                        }
                    }
                    terms.push(reqs);
                }
                Some(terms)
            }
        };
        let mut tolerations = Vec::new();
        for (t, v) in array_at(
            p.pointer("/spec/tolerations"),
            &format!("{at}.spec.tolerations"),
        )?
        .iter()
        .enumerate()
        {
            let tat = format!("{at}.spec.tolerations[{t}]");
            let exists = match str_at(v, "operator", &tat)?.unwrap_or("Equal") {
                "Equal" => false,
                "Exists" => true,
                other => {
                    return Err(bad_input(format!(
                        "{tat}.operator \"{other}\": use Equal or Exists"
                    )))
                }
            };
            tolerations.push(Toleration {
                key: str_at(v, "key", &tat)?.unwrap_or("").to_string(),
                exists,
                value: str_at(v, "value", &tat)?.unwrap_or("").to_string(),
                effect: str_at(v, "effect", &tat)?.unwrap_or("").to_string(),
            });
        }
        Ok(PodRules {
            selector,
            terms,
            tolerations,
        })
    }

    /// Why a new pod may not go on `node`, or `None` when it may.
    pub fn refusal(&self, node: &NodeFacts) -> Option<String> {
        if let Some((k, v)) = self
            .selector
            .iter()
            .find(|(k, v)| node.label(k) != Some(v.as_str()))
        {
            return Some(format!("nodeSelector {k}={v} does not match"));
        }
        if let Some(terms) = &self.terms {
            // A term with no requirement matches no node.
            if !terms
                .iter()
                .any(|t| !t.is_empty() && t.iter().all(|r| r.matches(node)))
            {
                return Some("required node affinity does not match".into());
            }
        }
        node.taints
            .iter()
            .find(|t| !self.tolerations.iter().any(|o| o.tolerates(t)))
            .map(|t| {
                format!(
                    "taint {}{}:{} not tolerated",
                    t.key,
                    if t.value.is_empty() {
                        String::new()
                    } else {
                        format!("={}", t.value)
                    },
                    t.effect
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(v: Value) -> NodeFacts {
        NodeFacts::read(&v, v["metadata"]["name"].as_str().unwrap(), "n").unwrap()
    }

    #[test]
    fn operators_terms_and_taints() {
        let a = node(json!({"metadata": {"name": "a", "labels": {"zone": "x", "gen": "5"}}}));
        let b = node(json!({"metadata": {"name": "b", "labels": {"zone": "y"}},
            "spec": {"taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"},
                                {"key": "soft", "effect": "PreferNoSchedule"}]}}));
        let c = node(
            json!({"metadata": {"name": "c"}, "spec": {"unschedulable": true},
            "status": {"conditions": [{"type": "Ready", "status": "False"}]}}),
        );
        assert_eq!(c.taints.len(), 2);
        let rules = |spec: Value| PodRules::read(&json!({ "spec": spec }), "p").unwrap();
        let fits = |r: &PodRules| -> Vec<bool> {
            [&a, &b, &c]
                .iter()
                .map(|n| r.refusal(n).is_none())
                .collect()
        };
        let aff = |exprs: Value| {
            json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                {"nodeSelectorTerms": exprs}}}})
        };
        let expr = |op: &str, vals: Value| json!([{"matchExpressions": [{"key": "gen", "operator": op, "values": vals}]}]);
        assert_eq!(fits(&rules(json!({}))), [true, false, false]);
        let all = json!({"tolerations": [{"operator": "Exists"}]});
        assert_eq!(fits(&rules(all)), [true, true, true]);
        let gpu = json!({"tolerations": [{"key": "gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}]});
        assert_eq!(fits(&rules(gpu)), [true, true, false]);
        let wrong = json!({"tolerations": [{"key": "gpu", "value": "false"}]});
        assert_eq!(fits(&rules(wrong)), [true, false, false]);
        assert_eq!(
            rules(json!({"nodeSelector": {"zone": "y"}})).refusal(&a),
            Some("nodeSelector zone=y does not match".into())
        );
        let mut t = aff(expr("Gt", json!(["4"])));
        t["tolerations"] = json!([{"operator": "Exists"}]);
        assert_eq!(fits(&rules(t.clone())), [true, false, false]);
        t["affinity"] = aff(expr("DoesNotExist", json!([])))["affinity"].clone();
        assert_eq!(fits(&rules(t.clone())), [false, true, true]);
        t["affinity"] = aff(expr("Lt", json!(["5"])))["affinity"].clone();
        assert_eq!(fits(&rules(t.clone())), [false, false, false]);
        t["affinity"] = aff(expr("NotIn", json!(["5"])))["affinity"].clone();
        assert_eq!(fits(&rules(t.clone())), [false, true, true]);
        // Terms are OR-ed; a field term pins a node by name.
        t["affinity"] = aff(json!([
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["x"]}]},
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["c"]}]}
        ]))["affinity"]
            .clone();
        assert_eq!(fits(&rules(t.clone())), [true, false, true]);
        t["affinity"] = aff(json!([{}]))["affinity"].clone();
        assert_eq!(fits(&rules(t)), [false, false, false]);
        let bad = |spec: Value| {
            PodRules::read(&json!({ "spec": spec }), "pods.items[0]")
                .err()
                .unwrap()
                .to_string()
        };
        assert_eq!(
            bad(aff(expr("Near", json!(["1"])))),
            "pods.items[0].spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator \"Near\": use In, NotIn, Exists, DoesNotExist, Gt or Lt"
        );
        assert_eq!(
            bad(aff(expr("Gt", json!(["x"])))),
            "pods.items[0].spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0] \"x\" is not an integer"
        );
        assert_eq!(
            bad(json!({"tolerations": [{"key": "k", "operator": "Has"}]})),
            "pods.items[0].spec.tolerations[0].operator \"Has\": use Equal or Exists"
        );
    }
}
