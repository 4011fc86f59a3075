//! The instance parsed with its placement lists borrowed from the text:
//! 2.5 x 10^7 listed names as owned strings took 1.2 GB more and an
//! allocation each. The fields mirror [`RawInstance`] and [`RawUser`] one
//! for one (a test parses every fixture both ways; a field added to
//! either fails to compile in [`borrowed`] until mirrored here). A text
//! this parse rejects (a name with an escape cannot be borrowed) is
//! parsed again as [`RawInstance`], whose errors carry the path.

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
    let (users, lists): (Vec<RawUser>, Lists) = parsed
        .users
        .into_iter()
        .map(|u| {
            let user = RawUser {
                name: u.name,
                demand: u.demand,
                weight: u.weight,
                tasks: u.tasks,
                servers: None,
                rank_weights: u.rank_weights,
                queue: u.queue,
            };
            (user, u.servers)
        })
        .unzip();
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
