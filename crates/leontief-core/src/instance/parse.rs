//! The instance parsed with its placement lists borrowed from the text:
//! 10^8 listed pairs as owned strings took 1.4 GB and a malloc each.
//! The fields mirror [`RawInstance`] and [`RawUser`] one for one (a test
//! parses every fixture both ways); a text this parse rejects (a name
//! with an escape cannot be borrowed) is parsed again as
//! [`RawInstance`], whose errors carry the path.

use super::{RawInstance, RawQueue, RawServer, RawUser};
use serde::Deserialize;

/// Each user's eligible server names (`None`: all), as written.
pub(super) type Lists<'a> = Vec<Option<Vec<&'a str>>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Instance<'a> {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    description: Option<String>,
    resources: Vec<String>,
    servers: Vec<RawServer>,
    #[serde(borrow)]
    users: Vec<User<'a>>,
    #[serde(default)]
    queues: Option<Vec<RawQueue>>,
    #[serde(default)]
    quantum: Option<Vec<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct User<'a> {
    name: String,
    demand: Vec<f64>,
    #[serde(default)]
    weight: Option<f64>,
    #[serde(default)]
    tasks: Option<f64>,
    #[serde(default, borrow)]
    servers: Option<Vec<&'a str>>,
    #[serde(default)]
    rank_weights: Option<Vec<f64>>,
    #[serde(default)]
    queue: Option<String>,
}

/// The instance without its users' lists, and the lists; `None` where
/// the text is not a valid instance document.
pub(super) fn borrowed(text: &str) -> Option<(RawInstance, Lists<'_>)> {
    let parsed: Instance = serde_json::from_str(text).ok()?;
    let mut lists = Vec::with_capacity(parsed.users.len());
    let users = parsed
        .users
        .into_iter()
        .map(|u| {
            lists.push(u.servers);
            RawUser {
                name: u.name,
                demand: u.demand,
                weight: u.weight,
                tasks: u.tasks,
                servers: None,
                rank_weights: u.rank_weights,
                queue: u.queue,
            }
        })
        .collect();
    let raw = RawInstance {
        name: parsed.name,
        description: parsed.description,
        resources: parsed.resources,
        servers: parsed.servers,
        users,
        queues: parsed.queues,
        quantum: parsed.quantum,
    };
    Some((raw, lists))
}
