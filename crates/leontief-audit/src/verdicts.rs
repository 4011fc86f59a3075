//! The one-line verdicts of a [`Judgement`]: each property, whether it
//! holds, and its witness in words.

use crate::judge::{Judgement, Verdict, LP_CHECKS_UP_TO};
use crate::Change;
use leontief_core::checks::ParetoCheck;

/// A number to 6 significant digits, without trailing zeros (from 1e15 up
/// in exponent form: `1e308` is not 309 digits).
pub fn g(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    if v.abs() >= 1e15 {
        let s = format!("{v:.5e}");
        let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
        let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
        return format!("{mantissa}e{exponent}");
    }
    let digits = (5 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `detail`, with how it was decided when not by the flat LP.
fn by(how: &str, detail: String) -> String {
    if how == "flat LP" {
        detail
    } else {
        format!("{detail} ({how})")
    }
}

fn change(c: &Change) -> String {
    format!("{} {} -> {}", c.user, g(c.has), g(c.gets))
}

fn list(cs: &[Change], most: usize) -> String {
    let mut s: Vec<String> = cs.iter().take(most).map(change).collect();
    if cs.len() > most {
        s.push(format!("and {} more", cs.len() - most));
    }
    s.join(", ")
}

/// The feasibility line.
fn feasibility(j: &Judgement) -> Verdict {
    let f = &j.feasibility;
    Verdict {
        property: "feasibility",
        holds: Some(f.ok),
        detail: match (&f.violations.first(), &f.fullest) {
            (Some(v), _) => format!("{v} ({} violations)", f.violations.len()),
            (None, Some(l)) => format!(
                "fullest: {} on {} at {}% of capacity",
                l.resource,
                l.server,
                g(100.0 * l.load)
            ),
            (None, None) => "nothing allocated".into(),
        },
    }
}

/// Every verdict of an infeasible allocation: the fairness properties
/// are not applicable and no optimality property holds.
fn infeasible(j: &Judgement) -> Vec<Verdict> {
    let na = |property| Verdict {
        property,
        holds: None,
        detail: "not applicable: the allocation is infeasible".into(),
    };
    let no = |property| Verdict {
        property,
        holds: Some(false),
        detail: "no: the allocation is infeasible".into(),
    };
    vec![
        feasibility(j),
        na("whole tasks"),
        na("sharing incentive"),
        na("envy-freeness"),
        no("Pareto optimality"),
        no("DRFH max-min"),
        no("BBF condition (2)"),
        no("PS-DSF (Definition 4)"),
    ]
}

pub(crate) fn verdicts(j: &Judgement, size: usize) -> Vec<Verdict> {
    let skipped = || {
        format!("not checked: {size} eligible user-server pairs (the flat LP runs up to {LP_CHECKS_UP_TO}; --verify always runs it at any size)")
    };
    let f = &j.feasibility;
    if !f.ok {
        return infeasible(j);
    }
    let mut out = vec![feasibility(j)];
    out.push(Verdict {
        property: "whole tasks",
        holds: j.whole_tasks.integral.then_some(j.whole_tasks.holds),
        detail: match &j.whole_tasks.fractional {
            Some((u, s, t)) => format!("not applicable: {u} runs {} tasks on {s}", g(*t)),
            None if j.whole_tasks.holds => "every count is an integer".into(),
            None => "integral but infeasible".into(),
        },
    });
    let si = &j.sharing_incentive;
    out.push(Verdict {
        property: "sharing incentive",
        holds: Some(si.holds),
        detail: match &si.witness {
            Some(w) => format!(
                "{} runs {} tasks, {} with an equal split of every server",
                w.user,
                g(w.has),
                g(w.equal_split)
            ),
            None => "every user runs at least its equal-split tasks".into(),
        },
    });
    out.push(Verdict {
        property: "envy-freeness",
        holds: Some(j.envy_freeness.holds),
        detail: match &j.envy_freeness.witness {
            Some(e) => format!(
                "{} envies {}: {} tasks with its bundle against {}",
                e.user,
                e.envies,
                g(e.could_run),
                g(e.has)
            ),
            None => "nobody prefers another's bundle".into(),
        },
    });
    out.push(match &j.pareto {
        None => Verdict {
            property: "Pareto optimality",
            holds: None,
            detail: skipped(),
        },
        Some(ParetoCheck {
            failed_status: Some(s),
            ..
        }) => Verdict {
            property: "Pareto optimality",
            holds: None,
            detail: format!("undetermined: its LP ended {s}"),
        },
        Some(p) if !p.ok && !p.resolved && p.failed_status.is_none() => Verdict {
            property: "Pareto optimality",
            holds: None,
            detail: format!(
                "undetermined: the LP finds a gain of {} in dominant shares, within what its tolerances allow for these users' demands",
                g(p.total_gain)
            ),
        },
        Some(p) => Verdict {
            property: "Pareto optimality",
            holds: Some(p.ok),
            detail: match (&p.improvement, &p.failed_status) {
                (_, Some(s)) => format!("its LP ended {s}"),
                (Some(i), _) => format!(
                    "all keep their tasks while {} (a total gain of {} in dominant shares)",
                    list(&i.gainers, 3),
                    g(p.total_gain)
                ),
                (None, None) if j.drfh_max_min.as_ref().is_some_and(|m| m.by != "flat LP") => {
                    "implied by the DRFH max-min (a lexicographic max-min is Pareto optimal)".into()
                }
                (None, None) => "no allocation is better for one and as good for all".into(),
            },
        },
    });
    out.push(match &j.drfh_max_min {
        None => Verdict {
            property: "DRFH max-min",
            holds: None,
            detail: skipped(),
        },
        Some(m) if m.check.failed_status.is_some() => Verdict {
            property: "DRFH max-min",
            holds: None,
            detail: format!(
                "undetermined: its LP ended {}",
                m.check.failed_status.as_deref().unwrap_or("")
            ),
        },
        Some(m) if m.check.witness.as_ref().is_some_and(|w| !w.resolved) => Verdict {
            property: "DRFH max-min",
            holds: None,
            detail: format!(
                "undetermined: {} could rise by {} in dominant share, within what the LP's tolerances allow for its demand",
                m.check.witness.as_ref().map_or("", |w| w.user.as_str()),
                g(m.check.witness.as_ref().map_or(0.0, |w| w.share_gain))
            ),
        },
        Some(m) => Verdict {
            property: "DRFH max-min",
            holds: Some(m.check.ok),
            detail: by(m.by, match (&m.rise, &m.check.witness, &m.check.failed_status) {
                (_, _, Some(s)) => format!("its LP ended {s}"),
                (Some(r), _, _) if r.payers.is_empty() => {
                    format!("{} can rise and nobody pays", change(&r.user))
                }
                (Some(r), _, _) => format!(
                    "{} can rise; paid by {}",
                    change(&r.user),
                    list(&r.payers, 3)
                ),
                (None, Some(w), _) => format!(
                    "{} can rise from {} to {} tasks",
                    w.user,
                    g(w.has),
                    g(w.can_reach)
                ),
                (None, None, _) => {
                    "no user can rise without lowering one whose level is no larger".into()
                }
            }),
        },
    });
    out.push(match &j.bbf {
        None => Verdict {
            property: "BBF condition (2)",
            holds: None,
            detail: "not applicable: a user demands a resource no server has".into(),
        },
        Some(b) => {
            let worst = b
                .users
                .iter()
                .zip(&j.users)
                .filter(|(c, _)| c.violation > b.tolerance)
                .max_by(|a, b| a.0.violation.total_cmp(&b.0.violation));
            Verdict {
                property: "BBF condition (2)",
                holds: Some(b.holds),
                detail: match worst {
                    Some((_, u)) if b.bottlenecks.is_empty() => format!(
                        "no resource of the pooled servers is saturated (fullest at {}%), and {} is not full",
                        g(100.0 * b.loads.iter().fold(0.0f64, |a, &l| a.max(l))),
                        u.user
                    ),
                    Some((c, u)) => format!(
                        "{} is neither full nor at its entitlement on a bottleneck ({} short)",
                        u.user,
                        g(c.violation)
                    ),
                    None if b.infeasibility > b.tolerance => "infeasible on the pool".into(),
                    None => format!("bottlenecks: {}", b.bottlenecks.join(", ")),
                },
            }
        }
    });
    let p = &j.psdsf;
    let worst = p
        .users
        .iter()
        .zip(&j.users)
        .filter(|(c, _)| c.violation > 0.0)
        .max_by(|a, b| a.0.violation.total_cmp(&b.0.violation));
    out.push(Verdict {
        property: "PS-DSF (Definition 4)",
        holds: Some(p.holds),
        detail: match worst {
            Some((c, u)) => format!(
                "{} is not blocked on {} ({} relative)",
                u.user,
                c.server.as_deref().unwrap_or("a server"),
                g(c.violation)
            ),
            None if p.infeasibility > p.tolerance => "infeasible".into(),
            None => "every user is blocked on every server it may use".into(),
        },
    });
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn numbers_read_short() {
        assert_eq!(super::g(1e308), "1e308");
        assert_eq!(super::g(-2.5e20), "-2.5e20");
        assert_eq!(super::g(96.080912), "96.0809");
        assert_eq!(super::g(0.5), "0.5");
    }
}
