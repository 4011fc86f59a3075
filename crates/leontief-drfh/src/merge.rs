//! Identical server entries merged into one class before the max-min
//! operator runs, and the answer split back.
//!
//! Entries with the same capacity vector are interchangeable: merged into
//! one class (counts added), any allocation of the class splits onto its
//! members in proportion to their counts, each member then using that
//! fraction of the class's use, within its capacity. Merging only enlarges
//! the feasible set and the split realises every merged allocation, so the
//! lexicographic max-min is the same, and the class's prices, repeated on
//! every member, are the same certificate. So the Google cell listed as
//! 12,583 separate entries costs what its 10-class form costs. Not done
//! when placement lists distinguish entries.

use crate::maxmin::MaxMinOutcome;
use leontief_core::{Instance, RawServer};
use std::collections::HashMap;

/// An instance with identical entries merged.
pub(crate) struct Merged {
    /// The merged instance (classes in order of first appearance).
    pub instance: Instance,
    /// The class of each original entry.
    pub class_of: Vec<usize>,
    /// Each original entry's share of its class (count / class count).
    pub share: Vec<f64>,
}

/// Merge entries with bitwise-equal capacity vectors; `None` when no two
/// are alike or placement lists may tell them apart.
pub(crate) fn merge_identical(instance: &Instance, placement: bool) -> Option<Merged> {
    if placement && instance.has_placement() {
        return None;
    }
    let servers = instance.servers();
    let mut index: HashMap<Vec<u64>, usize> = HashMap::new();
    let mut class_of = Vec::with_capacity(servers.len());
    let mut classes: Vec<RawServer> = Vec::new();
    for s in servers {
        let key: Vec<u64> = s.capacity.iter().map(|c| c.to_bits()).collect();
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
    let mut raw = instance.to_raw();
    raw.servers = classes;
    for u in &mut raw.users {
        u.servers = None;
    }
    let instance = Instance::new(raw).ok()?;
    Some(Merged {
        instance,
        class_of,
        share,
    })
}

/// Split an outcome on the merged instance back onto the original entries
/// (tasks by count share, prices repeated on every member).
pub(crate) fn split(o: &mut MaxMinOutcome, merged: &Merged, m: usize) {
    let classes = merged.instance.num_entries();
    o.tasks = o
        .tasks
        .iter()
        .map(|row| {
            merged
                .class_of
                .iter()
                .zip(&merged.share)
                .map(|(&c, &s)| row[c] * s)
                .collect()
        })
        .collect();
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
