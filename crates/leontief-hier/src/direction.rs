//! Which users grow next, and how fast, from the shares at one point.
//!
//! Every node hands its growth to its open children at the lowest share
//! (water-filling); siblings growing together keep equal shares. A node
//! whose share does not rise while its growing children rise (its largest
//! resource is one they do not use) is *flat*: it stays lowest and takes
//! all of its parent's growth until a resource it uses overtakes; flat
//! siblings tied at the lowest share grow side by side at equal rates of
//! their own children's level.
//!
//! Within one phase every quantity is linear in the phase parameter
//! theta; the phase ends at the first event: a sibling caught up, a
//! node's largest resource changed, or (outside this file) a cap, a limit
//! or the capacity.

use crate::shares::{Point, Shares};
use crate::tree::Child;

/// Shares closer than this (relative) are tied.
pub(crate) const TIE: f64 = 1e-9;

/// How an open node grows per unit of its own parameter.
#[derive(Debug, Clone)]
enum Mode {
    /// Its share rises: `d` is its vector's growth per unit of share.
    Rising { d: Vec<f64> },
    /// Its share stays: `f` is its vector's growth per unit of its
    /// children's level.
    Flat { f: Vec<f64> },
}

/// How an open node passes growth to its children.
#[derive(Debug, Clone)]
struct Plan {
    mode: Mode,
    /// The children that grow.
    growing: Vec<Child>,
    /// True when they are flat (they grow by level, not by share).
    flat_children: bool,
    /// Children's rate per unit of the node's own rate.
    gain: f64,
    /// The lowest share among the open children.
    low: f64,
}

/// The direction of one phase.
#[derive(Debug, Clone)]
pub(crate) struct Direction {
    /// Tasks per unit of theta, per user.
    pub rate: Vec<f64>,
    /// The largest theta before a tie, catch-up or change of largest
    /// resource, and what it is.
    pub until: f64,
    /// What ends it at `until`.
    pub event: String,
}

fn tied(a: f64, low: f64) -> bool {
    a <= low + TIE * low.abs() + 1e-300
}

/// The right derivative of `max_r (vec_r + t dv_r) / C_r` (over the
/// resources not ignored, over the weight) at t = 0.
fn slope(vec: &[f64], dv: &[f64], total: &[f64], ignored: &[bool], w: f64) -> f64 {
    let vals = || {
        vec.iter()
            .zip(dv)
            .zip(total)
            .zip(ignored)
            .filter(|(((_, _), &c), &i)| !i && c > 0.0)
            .map(|(((&v, &d), &c), _)| (v / c, d / c))
    };
    let top = vals().map(|v| v.0).fold(0.0, f64::max);
    vals()
        .filter(|v| v.0 >= top - TIE * top)
        .map(|v| v.1)
        .fold(0.0, f64::max)
        / w
}

/// The largest dv/C among the resources not ignored, over the weight
/// (the scale against which a slope counts as zero).
fn scale(dv: &[f64], total: &[f64], ignored: &[bool], w: f64) -> f64 {
    dv.iter()
        .zip(total)
        .zip(ignored)
        .filter(|((_, &c), &i)| !i && c > 0.0)
        .map(|((&d, &c), _)| d / c)
        .fold(0.0, f64::max)
        / w
}

fn add(a: &mut [f64], b: &[f64], f: f64) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += f * y;
    }
}

/// The next phase's direction at `p`, or `None` when nothing can grow.
pub(crate) fn direction(p: &Point, s: &Shares, rescale: bool) -> Option<Direction> {
    let tree = p.tree;
    let users = p.instance.users();
    let total = p.instance.total_capacity();
    let m = total.len();
    let n = users.len();
    let mut plans: Vec<Option<Plan>> = vec![None; tree.len()];
    let leaf_d = |u: usize| -> Vec<f64> {
        let f = users[u].weight / p.mu[u];
        users[u].demand.iter().map(|&d| d * f).collect()
    };
    for &v in &tree.bottom_up {
        if !s.open[v] {
            continue;
        }
        let kids: Vec<(Child, f64)> = tree.children[v]
            .iter()
            .filter_map(|&c| {
                let (sigma, _, open) = s.child(p, c);
                open.then_some((c, sigma))
            })
            .collect();
        let low = kids.iter().map(|k| k.1).fold(f64::INFINITY, f64::min);
        let active: Vec<Child> = kids
            .iter()
            .filter(|k| tied(k.1, low))
            .map(|k| k.0)
            .collect();
        let flat: Vec<Child> = active
            .iter()
            .copied()
            .filter(|c| matches!(c, Child::Node(u) if matches!(plans[*u].as_ref().map(|p| &p.mode), Some(Mode::Flat { .. }))))
            .collect();
        let w = tree.weight[v];
        let (growing, flat_children, dv) = if !flat.is_empty() {
            let mut f = vec![0.0; m];
            for c in &flat {
                if let Child::Node(u) = c {
                    if let Some(Plan {
                        mode: Mode::Flat { f: fu },
                        ..
                    }) = &plans[*u]
                    {
                        add(&mut f, fu, 1.0);
                    }
                }
            }
            (flat, true, f)
        } else {
            let mut e = vec![0.0; m];
            for &c in &active {
                match c {
                    Child::Leaf(u) => add(&mut e, &leaf_d(u), 1.0),
                    Child::Node(u) => {
                        if let Some(Plan {
                            mode: Mode::Rising { d },
                            ..
                        }) = &plans[u]
                        {
                            add(&mut e, d, 1.0);
                        }
                    }
                }
            }
            if rescale {
                for &(c, sigma) in &kids {
                    if !tied(sigma, low) && sigma > 0.0 {
                        let (_, vec, _) = s.child(p, c);
                        add(&mut e, &vec, 1.0 / sigma);
                    }
                }
            }
            (active, false, e)
        };
        let g = slope(&s.vector[v], &dv, total, &s.ignored, w);
        let sc = scale(&dv, total, &s.ignored, w);
        let plan = if g > 1e-12 * sc && g > 0.0 {
            Plan {
                mode: Mode::Rising {
                    d: dv.iter().map(|x| x / g).collect(),
                },
                growing,
                flat_children,
                gain: 1.0 / g,
                low,
            }
        } else {
            Plan {
                mode: Mode::Flat { f: dv },
                growing,
                flat_children,
                gain: 1.0,
                low,
            }
        };
        plans[v] = Some(plan);
    }
    let root = plans[0].as_ref()?;
    // Top-down: each growing node's rate in its own unit (share for a
    // rising node, level for a flat one); the root grows by level.
    let mut rate = vec![0.0; n];
    let mut node_rate = vec![0.0; tree.len()];
    let mut stack = vec![(0usize, 1.0f64)];
    let mut until = f64::INFINITY;
    let mut event = String::from("none");
    let tighten = |t: f64, what: String, until: &mut f64, event: &mut String| {
        if t < *until {
            *until = t;
            *event = what;
        }
    };
    while let Some((v, r)) = stack.pop() {
        node_rate[v] = r;
        let plan = plans[v].as_ref().expect("growing nodes are open");
        // The root passes its rate on unchanged (it has no share).
        let child_rate = if v == 0 { r } else { r * plan.gain };
        for &c in &plan.growing {
            match c {
                Child::Leaf(u) => rate[u] += child_rate * users[u].weight / p.mu[u],
                Child::Node(u) => stack.push((u, child_rate)),
            }
        }
        // Catch-up: the growing children's share (hence the lowest) rises
        // at child_rate unless they are flat.
        if !plan.flat_children && child_rate > 0.0 {
            for &c in &tree.children[v] {
                let (sigma, _, open) = s.child(p, c);
                if open && !tied(sigma, plan.low) {
                    let t = (sigma - plan.low) / child_rate;
                    tighten(
                        t,
                        format!("{} caught up", name(p, c)),
                        &mut until,
                        &mut event,
                    );
                }
            }
        }
        // A change of the node's largest resource.
        if v != 0 {
            let dv: Vec<f64> = match &plan.mode {
                Mode::Rising { d } => d.iter().map(|x| x * r).collect(),
                Mode::Flat { f } => f.iter().map(|x| x * r).collect(),
            };
            if let Some(t) = overtake(&s.vector[v], &dv, total, &s.ignored) {
                tighten(
                    t,
                    format!(
                        "another resource became the largest of {}",
                        name(p, Child::Node(v))
                    ),
                    &mut until,
                    &mut event,
                );
            }
        }
    }
    let _ = root;
    Some(Direction { rate, until, event })
}

/// The first t > 0 at which a resource outside the current argmax of
/// `(vec_r + t dv_r) / C_r` overtakes it.
fn overtake(vec: &[f64], dv: &[f64], total: &[f64], ignored: &[bool]) -> Option<f64> {
    let vals: Vec<(f64, f64)> = vec
        .iter()
        .zip(dv)
        .zip(total)
        .zip(ignored)
        .filter(|(((_, _), &c), &i)| !i && c > 0.0)
        .map(|(((&v, &d), &c), _)| (v / c, d / c))
        .collect();
    let top = vals.iter().map(|v| v.0).fold(0.0, f64::max);
    let lead = vals
        .iter()
        .filter(|v| v.0 >= top - TIE * top)
        .map(|v| v.1)
        .fold(0.0, f64::max);
    vals.iter()
        .filter(|v| v.0 < top - TIE * top && v.1 > lead)
        .map(|v| (top - v.0) / (v.1 - lead))
        .fold(None, |a: Option<f64>, t| Some(a.map_or(t, |a| a.min(t))))
}

/// A child's name for the trace.
pub(crate) fn name(p: &Point, c: Child) -> String {
    match c {
        Child::Leaf(u) => format!("user {}", p.instance.users()[u].name),
        Child::Node(v) => format!("queue {}", p.instance.queues()[v - 1].name),
    }
}
