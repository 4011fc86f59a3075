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
//! * [`family`]: the shapes users meet beyond those two ([`Family`]):
//!   capacity spread (U[low, 1), the Google cell's configurations, node
//!   pools), demand tails (lognormal, bimodal CPU- and memory-heavy, a few
//!   huge tasks), a GPU-like resource most servers lack, weights, task
//!   caps, and placement lists by attribute or at random.
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
            queue: None,
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
        queues: None,
        quantum: None,
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
        queues: None,
        quantum: None,
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

/// How the servers' capacities spread ([`Family::capacities`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Capacities {
    /// Each server and resource drawn from U[low, 1) (the benches'
    /// `heterogeneous` is `low` = 0.25; a spread of 10 is 0.1).
    Uniform {
        /// The lower end, in (0, 1).
        low: f64,
    },
    /// The Google cell's ten configurations of Table I (CPU and memory;
    /// other resources U[0.25, 1)), each server drawn with the cell's
    /// frequencies.
    Google,
    /// Node pools: this many configurations drawn from U[0.25, 1), the
    /// servers dealt among them in turn.
    Pools(usize),
}

/// How the users' per-task demands are drawn ([`Family::demands`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Demands {
    /// U[0.01, 0.2] per resource (`heterogeneous`).
    Uniform,
    /// CPU lognormal with median 0.02 and sigma 1; every other resource
    /// the CPU demand times lognormal(1, 1) (median e); all clipped to
    /// [0.001, 0.5].
    Lognormal,
    /// Half the users CPU-heavy (CPU U[0.1, 0.2], the rest U[0.01,
    /// 0.03]), half memory-heavy (the second resource U[0.1, 0.2], the
    /// rest U[0.01, 0.03]).
    Bimodal,
    /// U[0.01, 0.2] with one user in fifty huge: U[0.3, 0.5] on every
    /// resource.
    FewHuge,
}

/// Which servers each user may use ([`Family::placement`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Every server.
    None,
    /// By attribute: server i carries value i mod `values` (a label, a
    /// GPU model, a zone); each user allows one value, one in four a
    /// second: the servers carrying them.
    Attribute(usize),
    /// This many servers per user, drawn at random (`placement`).
    Random(usize),
}

/// A generated instance of a shape users meet: capacity spread, demand
/// tails, GPU-like resources most servers lack, weights, task caps and
/// placement lists, for `users` users on `servers` servers over
/// `resources` resources. [`family`] draws it; [`Family::from_spec`]
/// reads the compact form `leontief generate shaped --shape` takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    /// Users.
    pub users: usize,
    /// Servers (distinct entries).
    pub servers: usize,
    /// Resources (at least 2 with `gpu`).
    pub resources: usize,
    /// Capacity spread.
    pub capacities: Capacities,
    /// Demand tails.
    pub demands: Demands,
    /// The last resource is GPU-like: only this fraction of the servers
    /// has it, and only this fraction of the users demands it (`None`:
    /// every server has every resource).
    pub gpu: Option<f64>,
    /// Weights drawn from {1, 2, 3, 4} (else 1).
    pub weights: bool,
    /// This fraction of the users capped at a draw of U[0.1, 1) times the
    /// tasks of theirs one full server of capacity 1 would hold.
    pub caps: Option<f64>,
    /// Placement lists.
    pub placement: Placement,
    /// A queue tree of (queues, levels): level sizes grow fourfold, each
    /// queue below the first level under a random queue of the level
    /// above, each user in a random queue of the last level (with
    /// `weights`, queue weights from {1, 2, 3, 4} too).
    pub queues: Option<(usize, usize)>,
    /// Seed.
    pub seed: u64,
}

impl Family {
    /// `users` x `servers` x `resources` with the `heterogeneous`
    /// defaults (U[0.25, 1) capacities, uniform demands, nothing else).
    pub fn new(users: usize, servers: usize, resources: usize, seed: u64) -> Family {
        Family {
            users,
            servers,
            resources,
            capacities: Capacities::Uniform { low: 0.25 },
            demands: Demands::Uniform,
            gpu: None,
            weights: false,
            caps: None,
            placement: Placement::None,
            queues: None,
            seed,
        }
    }

    /// Read `spec`, comma-separated `key=value` (or a bare key for a
    /// switch) over these defaults: `capacity=uniform:LOW|google|pools:K`,
    /// `demand=uniform|lognormal|bimodal|few-huge`, `gpu=FRACTION`,
    /// `weights`, `caps=FRACTION`, `placement=none|attribute:K|random:E`,
    /// `queues=Q:L` (K and E at least 1 and at most the servers; Q queues
    /// in L levels, 1 <= L <= Q <= 100,000 and L <= 64; fractions in
    /// (0, 1]).
    /// The error names the key and says what it takes.
    ///
    /// ```
    /// use leontief_core::generate::{Capacities, Family, Placement};
    /// let f = Family::new(100, 50, 3, 1)
    ///     .from_spec("capacity=pools:4,gpu=0.2,placement=attribute:3,weights")
    ///     .unwrap();
    /// assert_eq!(f.capacities, Capacities::Pools(4));
    /// assert_eq!(f.placement, Placement::Attribute(3));
    /// assert!(Family::new(10, 5, 2, 1).from_spec("gpu=2").is_err());
    /// ```
    pub fn from_spec(mut self, spec: &str) -> Result<Family, String> {
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part.split_once('=').unwrap_or((part, ""));
            let fraction = |v: &str| -> Result<f64, String> {
                match v.parse::<f64>() {
                    Ok(f) if f > 0.0 && f <= 1.0 => Ok(f),
                    _ => Err(format!("{key}={v}: a fraction in (0, 1] is expected")),
                }
            };
            let count = |v: &str| -> Result<usize, String> {
                match v.parse::<usize>() {
                    Ok(k) if k >= 1 => Ok(k),
                    _ => Err(format!(
                        "{key}: a count >= 1 is expected after ':' (got {v:?})"
                    )),
                }
            };
            match key {
                "capacity" => {
                    self.capacities = match value.split_once(':') {
                        Some(("uniform", low)) => match low.parse::<f64>() {
                            Ok(l) if l > 0.0 && l < 1.0 => Capacities::Uniform { low: l },
                            _ => {
                                return Err(format!(
                                    "capacity=uniform:{low}: the lower end must be in (0, 1)"
                                ))
                            }
                        },
                        Some(("pools", k)) => Capacities::Pools(count(k)?),
                        None if value == "google" => Capacities::Google,
                        _ => {
                            return Err(format!(
                                "capacity={value}: uniform:LOW, google or pools:K is expected"
                            ))
                        }
                    }
                }
                "demand" => {
                    self.demands = match value {
                        "uniform" => Demands::Uniform,
                        "lognormal" => Demands::Lognormal,
                        "bimodal" => Demands::Bimodal,
                        "few-huge" => Demands::FewHuge,
                        _ => {
                            return Err(format!(
                            "demand={value}: uniform, lognormal, bimodal or few-huge is expected"
                        ))
                        }
                    }
                }
                "gpu" => self.gpu = Some(fraction(value)?),
                "caps" => self.caps = Some(fraction(value)?),
                "weights" if value.is_empty() => self.weights = true,
                "placement" => {
                    self.placement = match value.split_once(':') {
                        Some(("attribute", k)) => Placement::Attribute(count(k)?),
                        Some(("random", e)) => Placement::Random(count(e)?),
                        None if value == "none" => Placement::None,
                        _ => {
                            return Err(format!(
                                "placement={value}: none, attribute:K or random:E is expected"
                            ))
                        }
                    }
                }
                "queues" => {
                    let parsed = value.split_once(':').and_then(|(q, l)| {
                        Some((q.parse::<usize>().ok()?, l.parse::<usize>().ok()?))
                    });
                    self.queues = match parsed {
                        Some((q, l)) if l >= 1 && l <= q && q <= crate::MAX_QUEUES && l <= crate::MAX_QUEUE_DEPTH => Some((q, l)),
                        _ => {
                            return Err(format!(
                                "queues={value}: Q:L is expected, Q queues in L levels, 1 <= L <= Q <= {}, L <= {}",
                                crate::MAX_QUEUES,
                                crate::MAX_QUEUE_DEPTH
                            ))
                        }
                    }
                }
                _ => {
                    return Err(format!(
                    "unknown key {key:?} (capacity, demand, gpu, weights, caps, placement, queues)"
                ))
                }
            }
        }
        if self.gpu.is_some() && self.resources < 2 {
            return Err("gpu: needs at least 2 resources (the last one is the GPU)".into());
        }
        if matches!(self.demands, Demands::Bimodal) && self.resources < 2 {
            return Err("demand=bimodal: needs at least 2 resources".into());
        }
        if let Capacities::Pools(k) = self.capacities {
            if k > self.servers {
                return Err(format!(
                    "capacity=pools:{k}: more pools than the {} servers",
                    self.servers
                ));
            }
        }
        if let Placement::Attribute(k) = self.placement {
            if k > self.servers {
                return Err(format!(
                    "placement=attribute:{k}: more values than the {} servers",
                    self.servers
                ));
            }
        }
        if let Placement::Random(e) = self.placement {
            if e > self.servers {
                return Err(format!(
                    "placement=random:{e}: more than the {} servers",
                    self.servers
                ));
            }
        }
        Ok(self)
    }
}

/// `q` queues in `l` levels (sizes growing fourfold, each at least 1) and
/// the indices of the last level's.
fn queue_tree(
    rng: &mut ChaCha8Rng,
    q: usize,
    l: usize,
    weights: bool,
) -> (Vec<crate::RawQueue>, Vec<usize>) {
    let parts: Vec<f64> = (0..l).map(|i| 4f64.powi(i as i32)).collect();
    let total: f64 = parts.iter().sum();
    let mut sizes: Vec<usize> = parts
        .iter()
        .map(|p| ((q - l) as f64 * p / total).floor() as usize + 1)
        .collect();
    let short = q - sizes.iter().sum::<usize>();
    sizes[l - 1] += short;
    let mut queues = Vec::with_capacity(q);
    let mut previous: Vec<usize> = Vec::new();
    for (level, &size) in sizes.iter().enumerate() {
        let mut this = Vec::with_capacity(size);
        for j in 0..size {
            let parent: Option<String> = (level > 0).then(|| {
                let at: usize = previous[rng.gen_range(0..previous.len())];
                let up: &crate::RawQueue = &queues[at];
                up.name.clone()
            });
            this.push(queues.len());
            queues.push(crate::RawQueue {
                name: format!("q{}-{}", level + 1, j + 1),
                parent,
                weight: weights.then(|| rng.gen_range(1..=4) as f64),
                guarantee: None,
                limit: None,
                lending_limit: None,
            });
        }
        previous = this;
    }
    (queues, previous)
}

/// A standard normal draw (Box-Muller).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = rng.gen_range(f64::MIN_POSITIVE..1.0);
    let u2: f64 = rng.gen_range(0.0..1.0);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Draw the instance `f` describes (deterministic for its seed).
pub fn family(f: &Family) -> Instance {
    let mut rng = ChaCha8Rng::seed_from_u64(f.seed);
    let m = f.resources;
    let gpu = f.gpu.map(|_| m - 1);
    let uniform = |rng: &mut ChaCha8Rng, low: f64| -> Vec<f64> {
        (0..m).map(|_| rng.gen_range(low..1.0)).collect()
    };
    let pools: Vec<Vec<f64>> = match f.capacities {
        Capacities::Pools(k) => (0..k).map(|_| uniform(&mut rng, 0.25)).collect(),
        _ => Vec::new(),
    };
    let total: u64 = GOOGLE_CELL.iter().map(|c| c.0).sum();
    let servers: Vec<RawServer> = (0..f.servers)
        .map(|i| {
            let mut capacity = match f.capacities {
                Capacities::Uniform { low } => uniform(&mut rng, low),
                Capacities::Pools(k) => pools[i % k].clone(),
                Capacities::Google => {
                    let mut pick = rng.gen_range(0..total);
                    let &(_, cpu, mem) = GOOGLE_CELL
                        .iter()
                        .find(|c| {
                            if pick < c.0 {
                                true
                            } else {
                                pick -= c.0;
                                false
                            }
                        })
                        .unwrap_or(&GOOGLE_CELL[0]);
                    let mut c = uniform(&mut rng, 0.25);
                    c[0] = cpu;
                    if m > 1 {
                        c[1] = mem;
                    }
                    c
                }
            };
            if let (Some(g), Some(fr)) = (gpu, f.gpu) {
                // The first GPU servers by a fixed stride, so that
                // every pool and attribute value gets some.
                let has =
                    ((i as f64 + 0.5) * fr).floor() != ((i as f64 - 0.5) * fr).floor() || fr >= 1.0;
                capacity[g] = if has { rng.gen_range(0.25..1.0) } else { 0.0 };
                if capacity.iter().all(|&c| c == 0.0) {
                    capacity[0] = 0.25;
                }
            }
            RawServer {
                name: format!("s{}", i + 1),
                capacity,
                count: None,
            }
        })
        .collect();
    let clip = |x: f64| x.clamp(0.001, 0.5);
    let users: Vec<RawUser> = (0..f.users)
        .map(|j| {
            let mut demand: Vec<f64> = match f.demands {
                Demands::Uniform => (0..m).map(|_| rng.gen_range(0.01..0.2)).collect(),
                Demands::Lognormal => {
                    let cpu = clip(0.02 * normal(&mut rng).exp());
                    (0..m)
                        .map(|r| {
                            if r == 0 {
                                cpu
                            } else {
                                clip(cpu * (1.0 + normal(&mut rng)).exp())
                            }
                        })
                        .collect()
                }
                Demands::Bimodal => {
                    let heavy = j % 2;
                    (0..m)
                        .map(|r| {
                            if r == heavy {
                                rng.gen_range(0.1..0.2)
                            } else {
                                rng.gen_range(0.01..0.03)
                            }
                        })
                        .collect()
                }
                Demands::FewHuge => {
                    let huge = j % 50 == 49;
                    (0..m)
                        .map(|_| {
                            if huge {
                                rng.gen_range(0.3..0.5)
                            } else {
                                rng.gen_range(0.01..0.2)
                            }
                        })
                        .collect()
                }
            };
            if let (Some(g), Some(fr)) = (gpu, f.gpu) {
                let wants =
                    ((j as f64 + 0.5) * fr).floor() != ((j as f64 - 0.5) * fr).floor() || fr >= 1.0;
                if !wants {
                    demand[g] = 0.0;
                }
            }
            let weight = f.weights.then(|| rng.gen_range(1..=4) as f64);
            let tasks = f.caps.and_then(|c| {
                let draw: f64 = rng.gen_range(0.0..1.0);
                let top = demand.iter().copied().fold(0.0, f64::max);
                (draw < c && top > 0.0).then(|| (rng.gen_range(0.1..1.0) / top).max(1.0).round())
            });
            let servers = match f.placement {
                Placement::None => None,
                Placement::Attribute(k) => {
                    let first = rng.gen_range(0..k);
                    let second = (k > 1 && rng.gen_range(0..4) == 0).then(|| (first + 1) % k);
                    let list: Vec<String> = (0..f.servers)
                        .filter(|i| i % k == first || Some(i % k) == second)
                        .map(|i| format!("s{}", i + 1))
                        .collect();
                    (list.len() < f.servers).then_some(list)
                }
                Placement::Random(e) => (e < f.servers).then(|| {
                    let mut picks: Vec<usize> = rand::seq::index::sample(&mut rng, f.servers, e)
                        .into_iter()
                        .collect();
                    picks.sort_unstable();
                    picks.into_iter().map(|i| format!("s{}", i + 1)).collect()
                }),
            };
            RawUser {
                queue: None,
                name: format!("u{}", j + 1),
                demand,
                weight,
                tasks,
                servers: servers.filter(|l: &Vec<String>| !l.is_empty()),
                rank_weights: None,
            }
        })
        .collect();
    let mut resources: Vec<String> = (0..m).map(|r| format!("r{}", r + 1)).collect();
    if let Some(g) = gpu {
        resources[g] = "gpu".into();
    }
    let mut users = users;
    let queues = f.queues.map(|(q, l)| {
        let (queues, leaves) = queue_tree(&mut rng, q, l, f.weights);
        for u in users.iter_mut() {
            u.queue = Some(queues[leaves[rng.gen_range(0..leaves.len())]].name.clone());
        }
        queues
    });
    let raw = RawInstance {
        queues,
        quantum: None,
        name: Some(format!(
            "shaped-{}x{}x{}-seed-{}",
            f.users, f.servers, m, f.seed
        )),
        description: Some(format!("{f:?}")),
        resources,
        servers,
        users,
    };
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
    fn every_knob_of_the_family_does_what_it_says() {
        let f = Family::new(200, 60, 3, 7)
            .from_spec(
                "capacity=pools:4,demand=lognormal,gpu=0.25,weights,caps=0.5,placement=attribute:3",
            )
            .unwrap();
        let i = family(&f);
        assert_eq!(i, family(&f));
        // Four configurations.
        let mut configs: Vec<Vec<u64>> = i
            .servers()
            .iter()
            .map(|s| s.capacity[..2].iter().map(|c| c.to_bits()).collect())
            .collect();
        configs.sort();
        configs.dedup();
        assert_eq!(configs.len(), 4);
        // A quarter of the servers have the GPU, a quarter of the users want it.
        let gpu_servers = i.servers().iter().filter(|s| s.capacity[2] > 0.0).count();
        let gpu_users = i.users().iter().filter(|u| u.demand[2] > 0.0).count();
        assert_eq!(gpu_servers, 15);
        assert_eq!(gpu_users, 50);
        assert_eq!(i.resources()[2], "gpu");
        // Lognormal demands clipped to [0.001, 0.5].
        assert!(i
            .users()
            .iter()
            .all(|u| u.demand[..2].iter().all(|&d| (0.001..=0.5).contains(&d))));
        // Weights in {1, ..., 4}, about half the users capped.
        assert!(i
            .users()
            .iter()
            .all(|u| [1.0, 2.0, 3.0, 4.0].contains(&u.weight)));
        let capped = i.users().iter().filter(|u| u.tasks.is_some()).count();
        assert!((60..=140).contains(&capped), "{capped}");
        // Placement by attribute: at most 3 + 3 distinct lists.
        let mut lists: Vec<_> = i.users().iter().map(|u| u.servers.clone()).collect();
        lists.sort();
        lists.dedup();
        assert!(lists.len() <= 6, "{}", lists.len());
        // Capacity spread U[0.1, 1): some server below 0.25.
        let wide = family(
            &Family::new(5, 200, 2, 1)
                .from_spec("capacity=uniform:0.1")
                .unwrap(),
        );
        assert!(wide
            .servers()
            .iter()
            .any(|s| s.capacity.iter().any(|&c| c < 0.25)));
        // Bimodal: odd users memory-heavy.
        let b = family(
            &Family::new(10, 5, 2, 1)
                .from_spec("demand=bimodal")
                .unwrap(),
        );
        assert!(b.users()[0].demand[0] >= 0.1 && b.users()[1].demand[1] >= 0.1);
    }

    #[test]
    fn a_bad_family_spec_names_its_key() {
        for (spec, key) in [
            ("capacity=uniform:1.5", "capacity"),
            ("demand=heavy", "demand"),
            ("gpu=0", "gpu"),
            ("caps=2", "caps"),
            ("placement=random:500", "placement"),
            ("placement=attribute:0", "placement"),
            ("placement=attribute:21", "placement"),
            ("capacity=pools:18446744073709551615", "capacity"),
            ("colour=red", "colour"),
        ] {
            let e = Family::new(10, 20, 2, 1).from_spec(spec).unwrap_err();
            assert!(e.contains(key), "{spec}: {e}");
        }
        assert!(Family::new(10, 20, 1, 1).from_spec("gpu=0.5").is_err());
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
