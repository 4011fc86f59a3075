//! Why each user got what it got under a scheduler's algorithm, in one
//! sentence (shares as percentages of the cluster: the same in any unit).

use crate::tree::Tree;
use crate::{Outcome, Scheduler};
use leontief_core::Instance;

/// One sentence per user: its share and what stops it.
pub(crate) fn users(
    instance: &Instance,
    tree: &Tree,
    o: &Outcome,
    scheduler: Scheduler,
) -> Vec<String> {
    let (x, share, bound) = (&o.tasks, &o.user_share, &o.bound);
    let resources = instance.resources();
    let total = instance.total_capacity();
    (0..x.len())
        .map(|u| {
            let name = &instance.users()[u].name;
            let shown: Vec<String> = share[u]
                .iter()
                .zip(total)
                .zip(resources)
                .map(|((s, c), r)| format!("{r} {:.4}%", 100.0 * s / c))
                .collect();
            let what = match (scheduler, bound[u]) {
                (Scheduler::YarnFair | Scheduler::Kai, Some(r)) => {
                    let d = instance.users()[u].demand[r];
                    format!(
                        "its {} share fits {:.6} tasks, {} whole; the other resources' shares go partly unused",
                        resources[r],
                        share[u][r] / d,
                        x[u]
                    )
                }
                (_, _) if x[u] >= tree.user_max_tasks[u] => {
                    format!("it runs every task it asks for ({})", x[u])
                }
                (Scheduler::VolcanoProportion, _) => format!(
                    "its queue's deserved vector has no room for another of its tasks ({} whole tasks)",
                    x[u]
                ),
                (Scheduler::Kueue, _) => format!(
                    "no further task of it fits a limit or the cluster after the admissions ({} whole tasks)",
                    x[u]
                ),
                _ => format!("{} whole tasks", x[u]),
            };
            format!("{name}: share of the cluster [{}]; {what}", shown.join(", "))
        })
        .collect()
}
