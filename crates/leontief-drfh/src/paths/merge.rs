//! Identical server entries merged into one class before the max-min
//! operator, NFC or PS-DSF runs, and the answer split back
//! (docs/mechanisms.md, "Interchangeable servers").
//!
//! Entries with the same capacity vector are interchangeable: merged into
//! one class (counts added), any allocation of the class splits onto its
//! members in proportion to their counts, each member then using that
//! fraction of the class's use, within its capacity. Merging only enlarges
//! the feasible set and the split realises every merged allocation, so the
//! lexicographic max-min is the same, and the class's prices, repeated on
//! every member, are the same certificate. So the Google cell listed as
//! 12,583 separate entries costs what its 10-class form costs. The
//! max-min operator places a class's tasks with [`super::pack`] instead
//! (the same use on each member, most users on one member); NFC, PS-DSF
//! and the queues split by count ([`split_allocation`]).
//!
//! With placement lists, two entries are interchangeable when their
//! capacities are equal and every user's list holds both or neither (node
//! pools and placement by attribute: a real GPU cluster of 1,523 nodes
//! has 27 such classes). Each user's list then names whole classes, and
//! the same argument holds: a class's allocation splits onto its members
//! by count, every user eligible on all of them.

use crate::outcome::MaxMinOutcome;
use leontief_core::{Allocation, Instance, Metrics, RawInstance, RawServer, Tasks};
use std::collections::HashMap;

/// An instance with identical entries merged.
pub struct Merged {
    /// The merged instance (classes in order of first appearance).
    pub instance: Instance,
    /// The class of each original entry.
    pub class_of: Vec<usize>,
    /// Each original entry's share of its class (count / class count).
    pub share: Vec<f64>,
}

/// Merge entries with bitwise-equal capacity vectors and (with
/// `placement`) the same users listing them; `None` when no two are alike.
pub fn merge_identical(instance: &Instance, placement: bool) -> Option<Merged> {
    let servers = instance.servers();
    let lists = placement && instance.has_placement();
    // Per entry, the users whose lists name it (users without a list are
    // eligible everywhere and tell no entries apart), in one pass over
    // the lists.
    let mut listed_by: Vec<Vec<u64>> = vec![Vec::new(); if lists { servers.len() } else { 0 }];
    if lists {
        for (n, u) in instance.users().iter().enumerate() {
            for i in u.servers.iter().flatten() {
                listed_by[i.0].push(n as u64);
            }
        }
    }
    let mut index: HashMap<Vec<u64>, usize> = HashMap::new();
    let mut class_of = Vec::with_capacity(servers.len());
    let mut classes: Vec<RawServer> = Vec::new();
    for (i, s) in servers.iter().enumerate() {
        let mut key: Vec<u64> = s.capacity.iter().map(|c| c.to_bits()).collect();
        if lists {
            key.push(u64::MAX);
            key.extend_from_slice(&listed_by[i]);
        }
        let c = *index.entry(key).or_insert_with(|| {
            classes.push(RawServer {
                name: s.name.clone(),
                capacity: s.capacity.clone(),
                count: Some(0),
            });
            classes.len() - 1
        });
        let class = &mut classes[c];
        class.count = Some(class.count.unwrap_or(0) + s.count);
        class_of.push(c);
    }
    if classes.len() == servers.len() {
        return None;
    }
    let share: Vec<f64> = servers
        .iter()
        .zip(&class_of)
        .map(|(s, &c)| s.count as f64 / classes[c].count.unwrap_or(1) as f64)
        .collect();
    // The users with their lists on the classes, built directly (not
    // through `to_raw`, which names every listed server: lists of a
    // thousand nodes each cost more than the merge).
    let raw = on_entries(instance, classes, &class_of, lists);
    let instance = Instance::new(raw).ok()?;
    Some(Merged {
        instance,
        class_of,
        share,
    })
}

/// The entries every placement list holds alike and that hold the same
/// resources pooled into one entry each, capacities added (node pools
/// and placement by attribute: a few such groups however many entries):
/// a relaxation of `instance`, not an equivalent (the entries of a group
/// need not be interchangeable), in which a user runs on a group exactly
/// when it runs on each of the group's entries.
pub struct ListPools {
    /// The pooled instance (groups in order of first appearance, each
    /// named after its first entry).
    pub instance: Instance,
    /// The group of each original entry.
    pub group_of: Vec<usize>,
}

/// [`ListPools`] of `instance`; `None` without placement lists, when no
/// two entries share a group, or past `max_groups` groups (the pass ends
/// there).
pub fn pool_by_lists(instance: &Instance, max_groups: usize) -> Option<ListPools> {
    if !instance.has_placement() {
        return None;
    }
    pool(instance, max_groups, true)
}

/// The entries that hold the same resources pooled into one entry each
/// (a GPU on some servers makes two kinds), without placement lists: a
/// relaxation of `instance`, tighter than one pool (a user demanding a
/// resource only some entries hold runs only on their pools). `None`
/// with fewer than two kinds or past `max_groups`.
pub fn pool_by_kinds(instance: &Instance, max_groups: usize) -> Option<ListPools> {
    pool(instance, max_groups, false).filter(|p| p.instance.num_entries() >= 2)
}

/// The entries with the same resources present (and, with `lists`, the
/// same users listing them) pooled; `None` when no two entries share a
/// group or past `max_groups` groups.
fn pool(instance: &Instance, max_groups: usize, lists: bool) -> Option<ListPools> {
    let servers = instance.servers();
    let m = instance.num_resources();
    let mut listed_by: Vec<Vec<usize>> = vec![Vec::new(); if lists { servers.len() } else { 0 }];
    if lists {
        for (n, u) in instance.users().iter().enumerate() {
            for i in u.servers.iter().flatten() {
                listed_by[i.0].push(n);
            }
        }
    }
    let mut index: HashMap<Vec<usize>, usize> = HashMap::new();
    let mut group_of = Vec::with_capacity(servers.len());
    let mut groups: Vec<RawServer> = Vec::new();
    for (i, s) in servers.iter().enumerate() {
        // The same users listing it, and the same resources present: a
        // user that can run on the group can run on each of its entries.
        let mut key = if lists {
            listed_by[i].clone()
        } else {
            Vec::new()
        };
        key.push(usize::MAX);
        key.extend((0..m).filter(|&r| s.capacity[r] > 0.0));
        let g = *index.entry(key).or_insert_with(|| {
            groups.push(RawServer {
                name: s.name.clone(),
                capacity: vec![0.0; m],
                count: None,
            });
            groups.len() - 1
        });
        if groups.len() > max_groups {
            return None;
        }
        for (c, &v) in groups[g].capacity.iter_mut().zip(&s.capacity) {
            *c += v * s.count as f64;
        }
        group_of.push(g);
    }
    if groups.len() == servers.len() {
        return None;
    }
    let raw = on_entries(instance, groups, &group_of, lists);
    let instance = Instance::new(raw).ok()?;
    Some(ListPools { instance, group_of })
}

/// `instance` on the entries `entries` (each original entry `i` now
/// `entry_of[i]`): its users with their lists renamed onto the new
/// entries (with `lists`; without, no lists), its queues and resources.
fn on_entries(
    instance: &Instance,
    entries: Vec<RawServer>,
    entry_of: &[usize],
    lists: bool,
) -> RawInstance {
    instance.to_raw_on(entries, lists.then_some(entry_of))
}

/// An outcome's certificates on the merged instance back on the original
/// entries (each class's prices repeated on every member); its tasks are
/// placed by the caller.
pub(crate) fn split_certificates(o: &mut MaxMinOutcome, merged: &Merged, m: usize) {
    let classes = merged.instance.num_entries();
    for c in &mut o.certificates {
        let by_class = std::mem::take(&mut c.prices);
        c.prices = merged
            .class_of
            .iter()
            .flat_map(|&k| by_class[k * m..(k + 1) * m].iter().copied())
            .collect();
    }
    o.merged_classes = Some(classes);
}

/// An allocation on the merged instance back on the original entries:
/// tasks by count share, every per-entry price row repeated on each
/// member, metrics recomputed on `instance`.
pub fn split_allocation(instance: &Instance, merged: &Merged, mut a: Allocation) -> Allocation {
    let per_entry = |rows: Vec<Vec<f64>>| -> Vec<Vec<f64>> {
        merged.class_of.iter().map(|&c| rows[c].clone()).collect()
    };
    a.tasks = split_tasks(&a.tasks, merged);
    if let Some(c) = a.total_certificate.as_mut() {
        c.prices = per_entry(std::mem::take(&mut c.prices));
    }
    if let Some(c) = a.certificate.as_mut() {
        for round in &mut c.rounds {
            round.prices = per_entry(std::mem::take(&mut round.prices));
        }
    }
    a.metrics = Metrics::compute(instance, &a.tasks);
    a.notes.push(format!(
        "{} server entries solved as {} classes of interchangeable servers (equal capacities, every placement list holding all of a class or none), each class's tasks split over its servers by count",
        instance.num_entries(),
        merged.instance.num_entries()
    ));
    a
}

/// Tasks per class back on the original entries, by count share.
fn split_tasks(tasks: &Tasks, merged: &Merged) -> Tasks {
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); merged.instance.num_entries()];
    for (i, &c) in merged.class_of.iter().enumerate() {
        members[c].push(i);
    }
    let rows = tasks
        .rows()
        .map(|row| {
            row.iter()
                .flat_map(|(c, x)| members[c].iter().map(move |&i| (i, x * merged.share[i])))
                .collect()
        })
        .collect();
    Tasks::from_rows(merged.class_of.len(), rows)
}
