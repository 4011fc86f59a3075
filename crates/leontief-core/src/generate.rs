//! Seeded instance generators shared by the demo, the tests and the benches.
//!
//! * [`google_cell`]: the Google cell of Table I of 000 (12,583 servers in
//!   10 classes, CPU and memory normalised to the largest server) with
//!   `users` users whose per-task demands are drawn uniformly from
//!   [0.01, 0.2] CPU and [0.01, 0.2] memory (the scale of the tasks in the
//!   paper's Sec. VI example).
//! * [`heterogeneous`]: `servers` servers, no two alike, with capacities
//!   drawn uniformly from [0.25, 1] per resource, and `users` users as above
//!   over `m` resources.
//!
//! * [`placement`]: [`heterogeneous`] with unequal weights (1 to 4) and each
//!   user restricted to `eligible` servers drawn at random (the server-based
//!   mechanisms of 004).
//!
//! All are deterministic for a seed (ChaCha8).

use crate::instance::{Instance, RawInstance, RawServer, RawUser};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Table I of 000: (number of servers, CPU, memory).
pub const GOOGLE_CELL: [(u64, f64, f64); 10] = [
    (6732, 0.50, 0.50),
    (3863, 0.50, 0.25),
    (1001, 0.50, 0.75),
    (795, 1.00, 1.00),
    (126, 0.25, 0.25),
    (52, 0.50, 0.12),
    (5, 0.50, 0.03),
    (5, 0.50, 0.97),
    (3, 1.00, 0.50),
    (1, 0.50, 0.06),
];

fn users(rng: &mut ChaCha8Rng, n: usize, m: usize) -> Vec<RawUser> {
    (0..n)
        .map(|j| RawUser {
            name: format!("u{}", j + 1),
            demand: (0..m).map(|_| rng.gen_range(0.01..0.2)).collect(),
            weight: None,
            tasks: None,
            servers: None,
            rank_weights: None,
        })
        .collect()
}

/// The Google cell with `n_users` random users.
pub fn google_cell(n_users: usize, seed: u64) -> Instance {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let raw = RawInstance {
        name: Some(format!("google-cell-{n_users}-users-seed-{seed}")),
        description: None,
        resources: vec!["cpu".into(), "mem".into()],
        servers: GOOGLE_CELL
            .iter()
            .enumerate()
            .map(|(c, &(count, cpu, mem))| RawServer {
                name: format!("class{}", c + 1),
                capacity: vec![cpu, mem],
                count: Some(count),
            })
            .collect(),
        users: users(&mut rng, n_users, 2),
    };
    Instance::new(raw).expect("generated instances are valid")
}

/// `n_servers` distinct servers and `n_users` users over `m` resources.
pub fn heterogeneous(n_users: usize, n_servers: usize, m: usize, seed: u64) -> Instance {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let servers = (0..n_servers)
        .map(|i| RawServer {
            name: format!("s{}", i + 1),
            capacity: (0..m).map(|_| rng.gen_range(0.25..1.0)).collect(),
            count: None,
        })
        .collect();
    let raw = RawInstance {
        name: Some(format!("heterogeneous-{n_users}x{n_servers}-seed-{seed}")),
        description: None,
        resources: (0..m).map(|r| format!("r{}", r + 1)).collect(),
        servers,
        users: users(&mut rng, n_users, m),
    };
    Instance::new(raw).expect("generated instances are valid")
}

/// [`heterogeneous`] with weights drawn from [1, 4] and each user eligible
/// on `eligible` distinct servers drawn at random (all of them when
/// `eligible >= n_servers`).
pub fn placement(
    n_users: usize,
    n_servers: usize,
    m: usize,
    eligible: usize,
    seed: u64,
) -> Instance {
    let mut raw = heterogeneous(n_users, n_servers, m, seed).to_raw();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15);
    raw.name = Some(format!(
        "placement-{n_users}x{n_servers}-eligible-{eligible}-seed-{seed}"
    ));
    for u in &mut raw.users {
        u.weight = Some(rng.gen_range(1.0..4.0));
        if eligible < n_servers {
            let picks = rand::seq::index::sample(&mut rng, n_servers, eligible);
            let mut names: Vec<usize> = picks.into_iter().collect();
            names.sort_unstable();
            u.servers = Some(names.into_iter().map(|i| format!("s{}", i + 1)).collect());
        }
    }
    Instance::new(raw).expect("generated instances are valid")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn google_cell_has_12583_servers_in_10_classes() {
        let g = google_cell(3, 1);
        assert_eq!(g.num_entries(), 10);
        assert_eq!(g.num_physical_servers(), 12_583);
        assert_eq!(g, google_cell(3, 1));
        assert_ne!(g, google_cell(3, 2));
    }

    #[test]
    fn placement_restricts_every_user_to_its_draw() {
        let p = placement(20, 50, 3, 5, 1);
        for n in p.user_ids() {
            let k = p.server_ids().filter(|&i| p.can_run_on(n, i)).count();
            assert!(k <= 5, "{k}");
        }
        assert_eq!(p, placement(20, 50, 3, 5, 1));
    }
}
