//! A part of an instance (some of its entries and users) as an instance
//! of its own, for the paths that solve parts apart (groups, live parts).

use leontief_core::{Instance, RawInstance, RawServer, RawUser, ServerId};

/// User `n` of `instance` as it is written (its task cap when `caps`),
/// without a placement list.
pub(crate) fn raw_user(instance: &Instance, n: usize, caps: bool) -> RawUser {
    let u = &instance.users()[n];
    RawUser {
        queue: None,
        name: u.name.clone(),
        demand: u.demand.clone(),
        weight: Some(u.weight),
        tasks: if caps { u.tasks } else { None },
        servers: None,
        rank_weights: None,
    }
}

/// The server entries `entries` of `instance`, as they are written.
pub(crate) fn raw_servers(instance: &Instance, entries: &[ServerId]) -> Vec<RawServer> {
    entries
        .iter()
        .map(|&i| {
            let s = &instance.servers()[i.0];
            RawServer {
                name: s.name.clone(),
                capacity: s.capacity.clone(),
                count: Some(s.count),
            }
        })
        .collect()
}

/// An instance on `instance`'s resources.
pub(crate) fn part_of(
    instance: &Instance,
    servers: Vec<RawServer>,
    users: Vec<RawUser>,
) -> RawInstance {
    RawInstance {
        queues: None,
        quantum: None,
        name: None,
        description: None,
        resources: instance.resources().to_vec(),
        servers,
        users,
    }
}
