//! The Kubernetes snapshots of the shared data folder (`LEONTIEF_DATA`,
//! default ../shared/data; under CI=true a missing folder fails the
//! test): each imports with its placement rules, and the allocation its
//! scheduler made audits feasible.

mod common;
use leontief::audit::{audit, AuditOptions};
use leontief::import::{kubernetes, KubernetesOptions, Merge};
use leontief::Instance;
use std::path::PathBuf;

fn data() -> Option<PathBuf> {
    common::shared_data("kubernetes")
}

fn servers(imp: &leontief::import::Imported, user: &str) -> Option<Vec<String>> {
    imp.instance
        .users
        .iter()
        .find(|u| u.name == user)
        .unwrap_or_else(|| panic!("no user {user}"))
        .servers
        .clone()
}

#[test]
fn every_snapshot_imports_with_its_placement_rules_and_audits_feasible() {
    let Some(dir) = data() else { return };
    // (folder, nodes, users, placed pods)
    let expected = [
        ("aks-arena", 1, 9, 10),
        ("cloudability-eks-paired", 1, 5, 6),
        ("eck-eks-paired", 3, 4, 10),
        ("honeycomb-eks", 2, 4, 4),
        ("kind-k9s-paired", 1, 10, 11),
        ("kwok-quantities", 10, 6, 7),
    ];
    let options = KubernetesOptions {
        merge: Merge::Split,
        ..Default::default()
    };
    for (name, nodes, users, placed) in expected {
        let read = |f: &str| std::fs::read_to_string(dir.join(name).join(f)).unwrap();
        let imp = kubernetes(&read("nodes.json"), &read("pods.json"), &options)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let s = &imp.summary;
        assert_eq!(
            (s.servers, s.users, s.placed),
            (nodes, users, placed),
            "{name}"
        );
        match name {
            // Both nodes carry type=hound:NoSchedule, which no pod
            // tolerates: each user may use only the node it runs on.
            "honeycomb-eks" => {
                for u in &imp.instance.users {
                    assert_eq!(
                        u.servers,
                        Some(vec!["duckboat-01".to_string()]),
                        "{}",
                        u.name
                    );
                }
                assert!(imp
                    .instance
                    .resources
                    .contains(&"hostPort 80/TCP".to_string()));
            }
            // Static pods are each their own user.
            "kind-k9s-paired" => {
                assert!(imp
                    .instance
                    .users
                    .iter()
                    .any(|u| u.name == "kube-system/Pod/etcd-kind-control-plane"));
            }
            "kwok-quantities" => {
                assert_eq!(imp.instance.servers[0].capacity, [1000.0, 1099511627776.0]);
                assert_eq!(
                    servers(&imp, "kube-system/Pod/etcd-kind-control-plane"),
                    Some(vec!["kwok-node-2".to_string()])
                );
            }
            "cloudability-eks-paired" => {
                assert!(imp
                    .instance
                    .resources
                    .contains(&"hostPort 61678/TCP".to_string()));
            }
            _ => {}
        }
        let instance = Instance::new(imp.instance.clone()).unwrap();
        let report = audit(
            &instance,
            &leontief::audit::Tasks::from(imp.tasks.clone()),
            &AuditOptions::default(),
        )
        .unwrap();
        assert!(report.judgement.feasibility.ok, "{name}");
        assert!(report.judgement.pending.is_empty(), "{name}");
    }
}
