//! The Kubernetes importer on snapshots written here in the real schemas
//! (`kubectl get nodes/pods -o json`): requests by the Kubernetes rule,
//! grouping, merging, refusals that name the field.

use leontief::import::{kubernetes, GroupBy, KubernetesOptions, Merge};
use serde_json::{json, Value};

fn node(name: &str, cpu: &str, mem: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
           "status": {"allocatable": {"cpu": cpu, "memory": mem, "pods": "110"},
                      "capacity": {"cpu": cpu, "memory": mem, "pods": "110"}}})
}

fn pod(
    ns: &str,
    name: &str,
    owner: Option<(&str, &str)>,
    node: Option<&str>,
    spec: Value,
) -> Value {
    let owners: Vec<Value> = owner
        .map(|(k, n)| json!({"apiVersion": "apps/v1", "kind": k, "name": n, "controller": true}))
        .into_iter()
        .collect();
    let mut spec = spec;
    if let Some(n) = node {
        spec["nodeName"] = json!(n);
    }
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": ns, "ownerReferences": owners, "labels": {"team": ns}},
           "spec": spec,
           "status": {"phase": if node.is_some() { "Running" } else { "Pending" }}})
}

fn containers(reqs: &[(&str, &str)]) -> Value {
    json!({"containers": reqs.iter().enumerate().map(|(j, (c, m))| json!({
        "name": format!("c{j}"), "image": "x", "resources": {"requests": {"cpu": c, "memory": m}}
    })).collect::<Vec<_>>()})
}

fn list(items: Vec<Value>) -> String {
    json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items})
        .to_string()
}

fn nodes() -> String {
    list(vec![node("n1", "4", "8Gi"), node("n2", "8000m", "16384Mi")])
}

const GI: f64 = 1073741824.0;

#[test]
fn servers_users_and_pods_per_node() {
    let pods = list(vec![
        pod(
            "a",
            "w-1",
            Some(("ReplicaSet", "w")),
            Some("n1"),
            containers(&[("500m", "1Gi")]),
        ),
        pod(
            "a",
            "w-2",
            Some(("ReplicaSet", "w")),
            Some("n2"),
            containers(&[("0.5", "1024Mi")]),
        ),
        pod(
            "a",
            "w-3",
            Some(("ReplicaSet", "w")),
            None,
            containers(&[("500m", "1Gi")]),
        ),
        pod(
            "b",
            "solo",
            None,
            Some("n2"),
            containers(&[("1", "1Gi"), ("1", "1Gi")]),
        ),
    ]);
    let imp = kubernetes(&nodes(), &pods, &KubernetesOptions::default()).unwrap();
    let i = &imp.instance;
    assert_eq!(i.resources, vec!["cpu", "memory"]);
    assert_eq!(i.servers[1].name, "n2");
    assert_eq!(i.servers[1].capacity, vec![8.0, 16.0 * GI]);
    assert_eq!(i.users.len(), 2);
    assert_eq!(i.users[0].name, "a/ReplicaSet/w");
    assert_eq!(i.users[0].demand, vec![0.5, GI]);
    // The cap is the number of pods, the pending one included.
    assert_eq!(i.users[0].tasks, Some(3.0));
    assert_eq!(i.users[1].name, "b/Pod/solo");
    assert_eq!(i.users[1].demand, vec![2.0, 2.0 * GI]);
    assert_eq!(imp.tasks, vec![vec![1.0, 1.0], vec![0.0, 1.0]]);
    assert_eq!(imp.summary.placed, 3);
    assert_eq!(imp.summary.pending, 1);
    // The instance is one leontief accepts, and the audit reads the pair.
    let inst = leontief::Instance::new(imp.instance.clone()).unwrap();
    let csv = leontief::import::allocation_csv(&imp.instance, &imp.tasks);
    let t = leontief::audit::read_allocation(&inst, &csv, leontief::audit::AllocationFormat::Csv)
        .unwrap();
    assert_eq!(t.to_dense(), imp.tasks);
}

#[test]
fn effective_request_follows_the_kubernetes_rule() {
    // App containers 1 + 0.5 cpu; init 3 cpu alone; sidecar 0.25 cpu
    // started before a second init of 2.9 cpu: max(1.5 + 0.25, 3, 0.25,
    // 0.25 + 2.9) = 3.15; memory: max(2Gi + 1Gi, 1Gi, 1Gi + 1Gi) = 3Gi;
    // plus overhead 0.1 cpu.
    let mut spec = containers(&[("1", "1Gi"), ("500m", "1Gi")]);
    spec["initContainers"] = json!([
        {"name": "i1", "resources": {"requests": {"cpu": "3", "memory": "1Gi"}}},
        {"name": "side", "restartPolicy": "Always", "resources": {"requests": {"cpu": "250m", "memory": "1Gi"}}},
        {"name": "i2", "resources": {"requests": {"cpu": "2900m", "memory": "1Gi"}}}
    ]);
    spec["overhead"] = json!({"cpu": "100m"});
    // Limits stand in for absent requests.
    let limits = json!({"containers": [{"name": "l", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}]});
    let pods = list(vec![
        pod("a", "p", None, Some("n2"), spec),
        pod("a", "q", None, Some("n2"), limits),
    ]);
    let imp = kubernetes(&nodes(), &pods, &KubernetesOptions::default()).unwrap();
    let d = &imp.instance.users[0].demand;
    assert!((d[0] - 3.25).abs() < 1e-12, "{d:?}");
    assert_eq!(d[1], 3.0 * GI);
    assert_eq!(imp.instance.users[1].demand, vec![2.0, GI]);
}

#[test]
fn grouping_and_merging() {
    let pods = list(vec![
        pod(
            "a",
            "x-1",
            Some(("ReplicaSet", "x")),
            Some("n1"),
            containers(&[("1", "1Gi")]),
        ),
        pod(
            "a",
            "y-1",
            Some(("ReplicaSet", "y")),
            Some("n1"),
            containers(&[("2", "1Gi")]),
        ),
        pod(
            "a",
            "y-2",
            Some(("ReplicaSet", "y")),
            Some("n2"),
            containers(&[("2", "1Gi")]),
        ),
        pod(
            "b",
            "z-1",
            Some(("Job", "z")),
            Some("n2"),
            containers(&[("1", "1Gi")]),
        ),
    ]);
    let by = |group_by: GroupBy, merge: Merge| {
        kubernetes(
            &nodes(),
            &pods,
            &KubernetesOptions {
                group_by,
                merge,
                ..KubernetesOptions::default()
            },
        )
    };
    let owner = by(GroupBy::Owner, Merge::Refuse).unwrap();
    assert_eq!(owner.instance.users.len(), 3);
    // Namespace a holds two request vectors: refused with the user named...
    let e = by(GroupBy::Namespace, Merge::Refuse).unwrap_err();
    assert!(e.is_bad_input());
    let msg = e.to_string();
    assert!(msg.starts_with("user a: pod a/x-1 requests [1.0, 1073741824.0] but pod a/y-1 requests [2.0, 1073741824.0]"), "{msg}");
    // ...split into one user per vector...
    let split = by(GroupBy::Namespace, Merge::Split).unwrap();
    let names: Vec<&str> = split
        .instance
        .users
        .iter()
        .map(|u| u.name.as_str())
        .collect();
    assert_eq!(names, ["a", "a#2", "b"]);
    assert_eq!(
        split.tasks,
        vec![vec![1.0, 0.0], vec![1.0, 1.0], vec![0.0, 1.0]]
    );
    // ...or merged at the largest request.
    let max = by(GroupBy::Namespace, Merge::Max).unwrap();
    assert_eq!(max.instance.users[0].demand, vec![2.0, GI]);
    assert_eq!(max.instance.users[0].tasks, Some(3.0));
    let label = by(GroupBy::Label("team".into()), Merge::Split).unwrap();
    assert_eq!(label.instance.users[0].name, "team=a");
}

#[test]
fn refusals_name_the_field() {
    let bad = |nodes: String, pods: String| {
        let e = kubernetes(&nodes, &pods, &KubernetesOptions::default()).unwrap_err();
        assert!(e.is_bad_input());
        e.to_string()
    };
    let ok_pods = list(vec![pod(
        "a",
        "p",
        None,
        Some("n1"),
        containers(&[("1", "1Gi")]),
    )]);
    assert_eq!(
        bad(list(vec![node("n1", "4", "8GB")]), ok_pods.clone()),
        "nodes.items[0] (n1).status.allocatable.memory: \"8GB\" is not a Kubernetes quantity: unknown suffix \"GB\" (use Ki, Mi, Gi, Ti, Pi, Ei, n, u, m, k, M, G, T, P, E or e<exponent>)"
    );
    assert_eq!(
        bad(
            nodes(),
            list(vec![pod(
                "a",
                "p",
                None,
                Some("n1"),
                containers(&[("-1", "1Gi")])
            )])
        ),
        "pods.items[0].spec.containers[0].resources.requests.cpu is negative"
    );
    assert_eq!(
        bad(list(vec![node("n1", "4", "8Gi")]), list(vec![node("n2", "4", "8Gi")])),
        "pods.items[0] is a Node, not a Pod: expected `kubectl get pods -o json` (are the two files swapped?)"
    );
    let pod_list = json!({"apiVersion": "v1", "kind": "PodList", "items": []}).to_string();
    assert_eq!(
        bad(pod_list.clone(), pod_list),
        "NODES holds PodList, not a NodeList: expected `kubectl get nodes -o json` (are the two files swapped?)"
    );
    assert_eq!(
        bad("apiVersion: v1\nitems: []\n".into(), nodes()),
        "nodes: this is YAML; write it with `kubectl get nodes -o json`"
    );
    assert_eq!(
        bad("{\"kind\": \"List\"}".into(), ok_pods.clone()),
        "nodes: no \"items\" array (expected `kubectl get nodes -o json`)"
    );
    assert_eq!(
        bad(
            list(vec![node("n1", "4", "8Gi"), node("n1", "4", "8Gi")]),
            ok_pods
        ),
        "nodes.items[1]: node \"n1\" appears twice"
    );
    assert!("label=".parse::<GroupBy>().is_err());
    assert!("sum".parse::<Merge>().is_err());
}

#[test]
fn finished_and_best_effort_pods_are_counted_not_imported() {
    let mut done = pod("a", "d", None, Some("n1"), containers(&[("1", "1Gi")]));
    done["status"]["phase"] = json!("Succeeded");
    let empty = pod(
        "a",
        "e",
        None,
        Some("n1"),
        json!({"containers": [{"name": "c", "image": "x"}]}),
    );
    let keep = pod("a", "k", None, Some("n1"), containers(&[("1", "1Gi")]));
    let imp = kubernetes(
        &nodes(),
        &list(vec![done, empty, keep]),
        &KubernetesOptions::default(),
    )
    .unwrap();
    assert_eq!(imp.instance.users.len(), 1);
    assert_eq!(imp.summary.left_out["finished (Succeeded or Failed)"], 1);
    assert_eq!(
        imp.summary.left_out["BestEffort (no request on the chosen resources)"],
        1
    );
    assert_eq!(
        imp.summary.examples,
        [
            "pod a/d: finished (Succeeded or Failed)",
            "pod a/e: BestEffort (no request on the chosen resources)"
        ]
    );
}

mod google {
    use leontief::import::{google_trace, Merge, TraceGroup, TraceOptions};

    /// task_events rows: timestamp, missing, job, index, machine, event,
    /// user, class, priority, cpu, mem, disk, different-machine.
    #[allow(clippy::too_many_arguments)]
    fn ev(
        t: u64,
        job: u64,
        idx: u64,
        machine: &str,
        kind: u8,
        user: &str,
        cpu: f64,
        mem: f64,
    ) -> String {
        format!(
            "{},,{job},{idx},{machine},{kind},{user},0,0,{cpu},{mem},0,0\n",
            t * 1_000_000
        )
    }

    fn machines() -> String {
        // m3 leaves at 100 s, m4 arrives at 500 s: at 300 s only m1, m2.
        [
            "0,1,0,p,0.5,0.5",
            "0,2,0,p,1,1",
            "0,3,0,p,1,1",
            "100000000,3,1,p,,",
            "500000000,4,0,p,1,1",
        ]
        .join("\n")
    }

    fn events() -> String {
        let mut s = String::new();
        s += &ev(10, 10, 0, "", 0, "alice", 0.1, 0.05);
        s += &ev(20, 10, 0, "1", 1, "alice", 0.1, 0.05);
        s += &ev(10, 10, 1, "", 0, "alice", 0.1, 0.05);
        s += &ev(20, 10, 1, "2", 1, "alice", 0.1, 0.05);
        s += &ev(250, 10, 1, "2", 4, "alice", 0.1, 0.05); // finished before T
        s += &ev(10, 10, 2, "", 0, "alice", 0.1, 0.05); // pending at T
        s += &ev(30, 11, 0, "", 0, "bob", 0.2, 0.1);
        s += &ev(30, 11, 0, "2", 1, "bob", 0.2, 0.1);
        s += &ev(400, 11, 1, "", 0, "bob", 0.2, 0.1); // after T
        s += &ev(40, 12, 0, "2", 1, "alice", 0.3, 0.05); // another request
        s
    }

    fn read(
        group_by: TraceGroup,
        merge: Merge,
    ) -> Result<leontief::import::Imported, leontief::Error> {
        google_trace(
            events().as_bytes(),
            "task_events.csv",
            machines().as_bytes(),
            "machine_events.csv",
            &TraceOptions {
                at: 300.0,
                group_by,
                merge,
                uncapped: false,
            },
        )
    }

    #[test]
    fn snapshot_at_t() {
        let e = read(TraceGroup::User, Merge::Refuse).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "user alice: task 10/0 requests [0.1, 0.05] but task 12/0 requests [0.3, 0.05]"
            ),
            "{e}"
        );
        let imp = read(TraceGroup::Job, Merge::Refuse).unwrap();
        let i = &imp.instance;
        let servers: Vec<&str> = i.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(servers, ["m1", "m2"]);
        assert_eq!(i.servers[0].capacity, vec![0.5, 0.5]);
        let users: Vec<&str> = i.users.iter().map(|u| u.name.as_str()).collect();
        assert_eq!(users, ["alice/10", "bob/11", "alice/12"]);
        // alice/10: task 0 runs on m1, task 1 finished, task 2 pending.
        assert_eq!(i.users[0].tasks, Some(2.0));
        assert_eq!(
            imp.tasks,
            vec![vec![1.0, 0.0], vec![0.0, 1.0], vec![0.0, 1.0]]
        );
        assert_eq!(imp.summary.placed, 3);
        assert_eq!(imp.summary.pending, 1);
        assert_eq!(imp.summary.left_out["not running or pending at T"], 1);
        let split = read(TraceGroup::User, Merge::Split).unwrap();
        assert_eq!(split.instance.users.len(), 3);
        assert_eq!(split.instance.users[2].name, "alice#2");
    }

    #[test]
    fn bad_rows_are_named() {
        let bad = |events: &str, machines: &str| {
            google_trace(
                events.as_bytes(),
                "task_events.csv",
                machines.as_bytes(),
                "machine_events.csv",
                &TraceOptions {
                    at: 300.0,
                    ..TraceOptions::default()
                },
            )
            .unwrap_err()
            .to_string()
        };
        assert_eq!(
            bad("", "0,1,0,p,half,0.5"),
            "machine_events.csv:1: column 5 (CPUs) must be a number >= 0: \"half\""
        );
        assert_eq!(
            bad("0,,1,0,x,1,u,0,0,0.1,0.1,0,0", &machines()),
            "task_events.csv:1: column 5 (machine ID) is not an integer: \"x\""
        );
        assert!(bad("", "0,1,9,p,1,1").contains("column 3 (event type) must be 0..=2, found 9"));
    }
}

/// A cluster with a tainted control-plane node, a cordoned node and a
/// NotReady one: the placement lists say where the scheduler may put a
/// user's pods, plus where they already run.
mod placement {
    use super::*;

    fn labelled(name: &str, labels: Value, spec: Value, ready: bool) -> Value {
        let mut n = node(name, "4", "8Gi");
        n["metadata"]["labels"] = labels;
        n["spec"] = spec;
        n["status"]["conditions"] =
            json!([{"type": "Ready", "status": if ready { "True" } else { "False" }}]);
        n
    }

    fn cluster() -> String {
        list(vec![
            labelled(
                "cp",
                json!({"node-role.kubernetes.io/control-plane": ""}),
                json!({"taints": [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]}),
                true,
            ),
            labelled("w1", json!({"zone": "a"}), json!({}), true),
            labelled(
                "w2",
                json!({"zone": "b"}),
                json!({"unschedulable": true}),
                true,
            ),
            labelled("w3", json!({"zone": "b"}), json!({}), false),
        ])
    }

    fn with(mut p: Value, key: &str, v: Value) -> Value {
        p["spec"][key] = v;
        p
    }

    fn pods() -> Vec<Value> {
        let web = |name: &str, node: Option<&str>| {
            pod(
                "shop",
                name,
                Some(("ReplicaSet", "web")),
                node,
                containers(&[("1900m", "1Gi")]),
            )
        };
        let ds = |name: &str, node: &str| {
            let p = pod(
                "sys",
                name,
                Some(("DaemonSet", "agent")),
                Some(node),
                containers(&[("100m", "64Mi")]),
            );
            let p = with(p, "tolerations", json!([{"operator": "Exists"}]));
            with(
                p,
                "affinity",
                json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}),
            )
        };
        let mut etcd = pod(
            "kube-system",
            "etcd-cp",
            Some(("Node", "cp")),
            Some("cp"),
            containers(&[("100m", "100Mi")]),
        );
        etcd["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "abc"});
        let api = pod(
            "kube-system",
            "kube-apiserver-cp",
            Some(("Node", "cp")),
            Some("cp"),
            containers(&[("250m", "200Mi")]),
        );
        let zone_b = with(
            pod("batch", "zb", None, None, containers(&[("1", "1Gi")])),
            "nodeSelector",
            json!({"zone": "b"}),
        );
        let lost = pod(
            "batch",
            "lost",
            None,
            Some("gone"),
            containers(&[("1", "1Gi")]),
        );
        let mut ingress = containers(&[("200m", "128Mi")]);
        ingress["containers"][0]["ports"] =
            json!([{"containerPort": 80, "hostPort": 80}, {"containerPort": 9000}]);
        let ingress = pod("net", "ingress", None, None, ingress);
        let idle = pod(
            "debug",
            "idle",
            None,
            Some("w1"),
            json!({"containers": [{"name": "c", "image": "x"}]}),
        );
        vec![
            web("web-1", Some("w1")),
            web("web-2", None),
            ds("agent-cp", "cp"),
            ds("agent-w1", "w1"),
            ds("agent-w2", "w2"),
            etcd,
            api,
            zone_b,
            lost,
            ingress,
            idle,
        ]
    }

    fn servers(imp: &leontief::import::Imported, user: &str) -> Option<Vec<String>> {
        let u = imp
            .instance
            .users
            .iter()
            .find(|u| u.name == user)
            .unwrap_or_else(|| panic!("no user {user}"));
        u.servers.clone()
    }

    #[test]
    fn selectors_affinity_taints_cordons_and_static_pods() {
        let imp = kubernetes(&cluster(), &list(pods()), &KubernetesOptions::default()).unwrap();
        let names: Vec<&str> = imp.instance.users.iter().map(|u| u.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "shop/ReplicaSet/web",
                "sys/DaemonSet/agent",
                "kube-system/Pod/etcd-cp",
                "kube-system/Pod/kube-apiserver-cp",
                "net/Pod/ingress"
            ]
        );
        // The control plane is tainted, w2 cordoned, w3 NotReady: web's new
        // pods go to w1 only.
        assert_eq!(
            servers(&imp, "shop/ReplicaSet/web"),
            Some(vec!["w1".into()])
        );
        // The DaemonSet: one user, one task per node it runs on.
        assert_eq!(
            servers(&imp, "sys/DaemonSet/agent"),
            Some(vec!["cp".into(), "w1".into(), "w2".into()])
        );
        assert_eq!(imp.instance.users[1].tasks, Some(3.0));
        // Static pods: each its own user, on its own node.
        assert_eq!(
            servers(&imp, "kube-system/Pod/etcd-cp"),
            Some(vec!["cp".into()])
        );
        assert_eq!(
            servers(&imp, "kube-system/Pod/kube-apiserver-cp"),
            Some(vec!["cp".into()])
        );
        // A host port is a resource of capacity 1 on every node.
        let port = imp
            .instance
            .resources
            .iter()
            .position(|r| r == "hostPort 80/TCP")
            .unwrap();
        assert!(imp.instance.servers.iter().all(|s| s.capacity[port] == 1.0));
        assert_eq!(imp.instance.users[4].demand[port], 1.0);
        assert_eq!(imp.instance.users[0].demand[port], 0.0);
        // 1900m is 1.9 exactly (the nearest double).
        assert_eq!(imp.instance.users[0].demand[0], 1.9);
        assert_eq!(
            imp.summary.left_out["bound to a node missing from the node list"],
            1
        );
        assert_eq!(
            imp.summary.left_out["Pending and no node accepts it (nodeSelector, affinity, taints)"],
            1
        );
        assert!(imp.summary.examples.iter().any(|e| e
            == "pod batch/zb (cp: nodeSelector zone=b does not match): Pending and no node accepts it (nodeSelector, affinity, taints)"));
        assert_eq!(
            imp.summary.left_out["BestEffort (no request on the chosen resources)"],
            1
        );
        assert_eq!((imp.summary.placed, imp.summary.pending), (6, 2));
    }

    #[test]
    fn pods_as_a_resource_count_best_effort_pods() {
        let options = KubernetesOptions {
            resources: Some(vec!["cpu".into(), "memory".into(), "pods".into()]),
            ..Default::default()
        };
        let imp = kubernetes(&cluster(), &list(pods()), &options).unwrap();
        let idle = imp
            .instance
            .users
            .iter()
            .find(|u| u.name == "debug/Pod/idle")
            .unwrap();
        assert_eq!(idle.demand, [0.0, 0.0, 1.0, 0.0]);
        assert_eq!(imp.instance.servers[0].capacity[2], 110.0);
        assert!(imp.instance.users.iter().all(|u| u.demand[2] == 1.0));
        assert!(!imp
            .summary
            .left_out
            .contains_key("BestEffort (no request on the chosen resources)"));
    }
}
