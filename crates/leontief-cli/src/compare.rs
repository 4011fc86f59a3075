//! `leontief audit INSTANCE --against hdrf,yarn-fair,...` without an
//! allocation: the mechanisms' own answers side by side per queue, as
//! JSON or as readable tables.

use crate::args::AuditArgs;
use crate::audit::{aligned, holds, opt};
use crate::failure::Failure;
use anyhow::Context;
use leontief::audit::{compare_algorithms, parse_against, AlgorithmsReport};
use leontief::Instance;
use leontief_audit::verdicts::g;

pub(crate) fn cmd(instance: &Instance, args: &AuditArgs) -> Result<(), Failure> {
    let mechanisms = parse_against(&args.against)?;
    let report = compare_algorithms(instance, &mechanisms, args.verify.into(), args.time_limit)?;
    if args.table {
        print!("{}", tables(&report));
    } else if args.pretty {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).context("serialising")?
        );
    } else {
        println!("{}", serde_json::to_string(&report).context("serialising")?);
    }
    Ok(())
}

/// The report as tables: the summary, the queues, the losses and the
/// properties.
pub(crate) fn tables(r: &AlgorithmsReport) -> String {
    let all: Vec<&leontief::audit::Algorithm> =
        std::iter::once(&r.reference).chain(&r.algorithms).collect();
    let mut rows = vec![vec![
        "mechanism".to_string(),
        "status".into(),
        "verified".into(),
        "fairness %".into(),
        "efficiency %".into(),
        "tasks".into(),
        "violates".into(),
    ]];
    for a in &all {
        let violated: Vec<&str> = a
            .properties
            .iter()
            .filter(|p| p.holds == Some(false))
            .map(|p| p.property.as_str())
            .collect();
        rows.push(vec![
            a.mechanism.clone(),
            a.status.clone(),
            if a.verified { "yes" } else { "no" }.into(),
            opt(a.fairness_percent),
            opt(a.efficiency_percent),
            g(a.total_tasks),
            if violated.is_empty() {
                "-".into()
            } else {
                violated.join(", ")
            },
        ]);
    }
    let mut out = aligned(&rows, 1);
    if !r.reference.queues.is_empty() {
        out.push('\n');
        let mut head = vec!["queue".to_string()];
        for a in &all {
            head.push(format!("{} dom. share", a.mechanism));
            head.push("tasks".into());
        }
        let mut rows = vec![head];
        for (q, line) in r.reference.queues.iter().enumerate() {
            let mut row = vec![line.queue.clone()];
            for a in &all {
                let l = &a.queues[q];
                let share = match l.ratio {
                    Some(x) if a.mechanism != r.reference.mechanism => {
                        format!("{} ({}x)", g(l.dominant_share), g(x))
                    }
                    _ => g(l.dominant_share),
                };
                row.push(share);
                row.push(g(l.tasks));
            }
            rows.push(row);
        }
        out.push_str(&aligned(&rows, 1));
    }
    let losses: Vec<Vec<String>> = r
        .algorithms
        .iter()
        .flat_map(|a| {
            a.lost_most.iter().map(move |l| {
                vec![
                    a.mechanism.clone(),
                    l.queue.clone(),
                    g(l.ratio),
                    l.why.clone(),
                ]
            })
        })
        .collect();
    if !losses.is_empty() {
        out.push('\n');
        let mut rows = vec![vec![
            "mechanism".to_string(),
            "lost most".into(),
            "ratio".into(),
            "why".into(),
        ]];
        rows.extend(losses);
        out.push_str(&aligned(&rows, 4));
    }
    out.push('\n');
    let mut rows = vec![vec![
        "mechanism".to_string(),
        "property".into(),
        "holds".into(),
        "witness".into(),
    ]];
    for a in &all {
        for p in &a.properties {
            rows.push(vec![
                a.mechanism.clone(),
                p.property.clone(),
                holds(p.holds).into(),
                p.detail.clone(),
            ]);
        }
    }
    out.push_str(&aligned(&rows, 4));
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}
