//! The relaxation an `hdrfh` answer found on the groups of servers every
//! placement list holds alike is checked on: this crate's own merge, not
//! the solver's.
//!
//! Entries that every user's list holds alike and that hold the same
//! resources are pooled into one entry, capacities (times counts) added,
//! and each user's list names the groups of its entries. Any allocation
//! on the servers sums to one on the groups within each group's capacity
//! and each user's list, so the groups' feasible totals contain the
//! servers': a user that cannot grow on the groups while every other user
//! keeps its tasks cannot grow on the servers either.

use leontief_core::{Instance, RawServer};
use std::collections::HashMap;

/// The pooled groups of `instance` (every entry in one group when no user
/// has a list); `None` only if the merged instance is refused (it keeps
/// every user and queue as they are, so it is not).
pub(crate) fn pooled_by_lists(instance: &Instance) -> Option<Instance> {
    let servers = instance.servers();
    let mut listed_by: Vec<Vec<usize>> = vec![Vec::new(); servers.len()];
    for (n, u) in instance.users().iter().enumerate() {
        for i in u.servers.iter().flatten() {
            listed_by[i.0].push(n);
        }
    }
    let mut index: HashMap<(Vec<bool>, Vec<usize>), usize> = HashMap::new();
    let mut group_of = Vec::with_capacity(servers.len());
    let mut groups: Vec<RawServer> = Vec::new();
    for (i, s) in servers.iter().enumerate() {
        let held: Vec<bool> = s.capacity.iter().map(|&c| c > 0.0).collect();
        let key = (held, std::mem::take(&mut listed_by[i]));
        let g = *index.entry(key).or_insert_with(|| {
            groups.push(RawServer {
                name: format!("group {}", groups.len() + 1),
                capacity: vec![0.0; s.capacity.len()],
                count: None,
            });
            groups.len() - 1
        });
        let class = instance.class_capacities(leontief_core::ServerId(i));
        for (c, &x) in groups[g].capacity.iter_mut().zip(class) {
            *c += x;
        }
        group_of.push(g);
    }
    Instance::new(instance.to_raw_on(groups, Some(&group_of))).ok()
}

#[cfg(test)]
mod tests {
    use super::pooled_by_lists;
    use leontief_core::Instance;

    /// Four servers in two pools (a list names one pool) and a GPU on one
    /// server of the first pool: three groups, capacities (times counts)
    /// added, each list on its groups.
    #[test]
    fn groups_follow_the_lists_and_the_resources_held() {
        let inst = Instance::from_json_str(
            r#"{"resources": ["cpu", "gpu"],
                "servers": [
                  {"name": "a1", "capacity": [4, 0]},
                  {"name": "a2", "capacity": [8, 0], "count": 2},
                  {"name": "a3", "capacity": [8, 1]},
                  {"name": "b1", "capacity": [2, 0]}],
                "users": [
                  {"name": "u", "demand": [1, 0], "servers": ["a1", "a2", "a3"]},
                  {"name": "v", "demand": [1, 1], "servers": ["a3"]},
                  {"name": "w", "demand": [1, 0]}]}"#,
        )
        .unwrap();
        let g = pooled_by_lists(&inst).unwrap();
        assert_eq!(g.num_entries(), 3);
        let caps: Vec<Vec<f64>> = g.servers().iter().map(|s| s.capacity.clone()).collect();
        assert_eq!(caps, vec![vec![20.0, 0.0], vec![8.0, 1.0], vec![2.0, 0.0]]);
        let lists: Vec<Option<usize>> = g
            .users()
            .iter()
            .map(|u| u.servers.as_ref().map(Vec::len))
            .collect();
        assert_eq!(lists, vec![Some(2), Some(1), None]);
    }
}
