//! `leontief audit INSTANCE ALLOCATION`: judge an allocation made
//! elsewhere, as JSON or as readable tables.

use crate::args::AuditArgs;
use crate::failure::{bad_input, Failure};
use crate::input::load;
use anyhow::Context;
use leontief::audit::{
    audit, default_against, parse_against, read_allocation, AllocationFormat, AuditOptions,
    AuditReport,
};
use leontief_audit::verdicts::g;

/// Users listed in the readable table.
const TABLE_USERS: usize = 20;

pub(crate) fn cmd(args: &AuditArgs) -> Result<(), Failure> {
    let instance = load(&args.instance)?;
    if let Some(spec) = &args.probe_sp {
        return crate::probe::cmd(&instance, spec, args);
    }
    let Some(path) = &args.allocation else {
        if !matches!(args.against.as_str(), "auto" | "none" | "") {
            return crate::compare::cmd(&instance, args);
        }
        return Err(bad_input(
            "audit needs an ALLOCATION (or --probe-sp MECHANISM, or --against MECHANISMS to compare their answers on INSTANCE)",
        ));
    };
    let text =
        std::fs::read_to_string(path).map_err(|e| bad_input(format!("{}: {e}", path.display())))?;
    let format = AllocationFormat::from_path(path);
    let tasks = read_allocation(&instance, &text, format)
        .map_err(|e| bad_input(format!("{}: {e}", path.display())))?;
    let (against, note) = match args.against.as_str() {
        "auto" => default_against(&instance),
        list => (parse_against(list)?, None),
    };
    let options = AuditOptions {
        against,
        mode: args.verify.into(),
        time_limit: args.time_limit,
    };
    let mut report = audit(&instance, &tasks, &options)?;
    report.notes.extend(note);
    if let Some(shares) = &args.exact {
        let shares: Option<leontief::Mechanism> = match shares.as_str() {
            "" => None,
            s => Some(s.parse()?),
        };
        leontief::audit::exact_into(&mut report, &instance, &text, &tasks, shares.as_ref())
            .map_err(|e| bad_input(format!("{}: {e}", path.display())))?;
    } else {
        leontief::audit::suggest_exact(&mut report, &instance, &text);
    }
    if args.table {
        let view = View {
            top: args.top.map(|n| n as usize),
            nodes: args.nodes,
        };
        print!("{}", tables(&report, &view));
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

/// Left-aligned first column, the others right-aligned, widths from the
/// content.
pub(crate) fn aligned(rows: &[Vec<String>], left: usize) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, s)| {
                if c < left {
                    format!("{s:<w$}", w = width[c])
                } else {
                    format!("{s:>w$}", w = width[c])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

pub(crate) fn opt(v: Option<f64>) -> String {
    v.map_or("-".into(), g)
}

/// A property's verdict in a table: yes, NO, or - (not checked).
pub(crate) fn holds(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "yes",
        Some(false) => "NO",
        None => "-",
    }
}

/// What the readable tables show.
#[derive(Debug, Clone, Default)]
pub(crate) struct View {
    /// Rows per table, ranked (users: lowest ratio to the first reference,
    /// then level; pending: most tasks waiting; nodes: fullest); `None`:
    /// the first 20 in instance order.
    pub top: Option<usize>,
    /// Add the per-node table.
    pub nodes: bool,
}

/// The rows to show of `len`, ranked by `key` (ascending) under `--top`.
fn pick(len: usize, top: Option<usize>, key: impl Fn(usize) -> (f64, f64)) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    if top.is_some() {
        order.sort_by(|&a, &b| {
            let (ka, kb) = (key(a), key(b));
            ka.0.total_cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
        });
    }
    order.truncate(top.unwrap_or(TABLE_USERS));
    order
}

fn more(out: &mut String, shown: usize, len: usize, what: &str) {
    if len > shown {
        out.push_str(&format!("({} more {what} in the JSON)\n", len - shown));
    }
}

/// The report as tables: properties, users, pending users, nodes (asked),
/// mechanisms.
pub(crate) fn tables(r: &AuditReport, view: &View) -> String {
    let j = &r.judgement;
    let mut rows = vec![vec!["property".into(), "holds".into(), "witness".into()]];
    for v in &j.summary {
        rows.push(vec![
            v.property.to_string(),
            holds(v.holds).into(),
            v.detail.clone(),
        ]);
    }
    let mut out = aligned(&rows, 3);
    out.push('\n');
    let mut head = vec![
        "user".to_string(),
        "tasks".into(),
        "dom. share".into(),
        "level".into(),
        "equal split".into(),
    ];
    for c in &r.against {
        head.push(c.mechanism.clone());
        head.push("ratio".into());
    }
    let mut rows = vec![head];
    let ratio = |n: usize| {
        r.against
            .first()
            .and_then(|c| c.users[n].ratio)
            .unwrap_or(f64::INFINITY)
    };
    let shown = pick(j.users.len(), view.top, |n| (ratio(n), j.users[n].level));
    for &n in &shown {
        let u = &j.users[n];
        let mut row = vec![
            u.user.clone(),
            g(u.tasks),
            g(u.dominant_share),
            g(u.level),
            g(u.equal_split),
        ];
        for c in &r.against {
            row.push(g(c.users[n].mechanism_tasks));
            row.push(opt(c.users[n].ratio));
        }
        rows.push(row);
    }
    out.push_str(&aligned(&rows, 1));
    more(&mut out, shown.len(), j.users.len(), "users");
    if !j.pending.is_empty() {
        out.push('\n');
        let mut rows = vec![vec![
            "pending".to_string(),
            "tasks".into(),
            "cap".into(),
            "why it waits".into(),
        ]];
        let shown = pick(j.pending.len(), view.top, |p| {
            (j.pending[p].tasks - j.pending[p].cap, 0.0)
        });
        for &p in &shown {
            let p = &j.pending[p];
            rows.push(vec![p.user.clone(), g(p.tasks), g(p.cap), p.reason.clone()]);
        }
        out.push_str(&aligned(&rows, 4));
        more(&mut out, shown.len(), j.pending.len(), "pending users");
    }
    if view.nodes {
        out.push('\n');
        let mut rows = vec![vec![
            "node".to_string(),
            "fullest".into(),
            "load %".into(),
            "users (tasks)".into(),
        ]];
        let shown = pick(j.nodes.len(), view.top, |i| (-j.nodes[i].load_percent, 0.0));
        for &i in &shown {
            let v = &j.nodes[i];
            let mut users: Vec<String> = v
                .users
                .iter()
                .take(3)
                .map(|(u, t)| format!("{u} ({})", g(*t)))
                .collect();
            if v.users.len() > 3 {
                users.push(format!("{} more", v.users.len() - 3));
            }
            rows.push(vec![
                v.server.clone(),
                v.fullest.clone(),
                g(v.load_percent),
                users.join(", "),
            ]);
        }
        out.push_str(&aligned(&rows, 4));
        more(&mut out, shown.len(), j.nodes.len(), "nodes");
    }
    if !r.against.is_empty() {
        out.push('\n');
        let mut rows = vec![vec![
            "against".to_string(),
            "status".into(),
            "verified".into(),
            "fairness %".into(),
            "efficiency %".into(),
            "lost most (tasks / mechanism's)".into(),
        ]];
        for c in &r.against {
            let lost: Vec<String> = c
                .lost_most
                .iter()
                .map(|l| format!("{} {}", l.user, opt(l.ratio)))
                .collect();
            rows.push(vec![
                c.mechanism.clone(),
                c.status.clone(),
                if c.verified { "yes" } else { "no" }.into(),
                opt(c.fairness_percent),
                opt(c.efficiency_percent),
                if lost.is_empty() {
                    "nobody".into()
                } else {
                    lost.join(", ")
                },
            ]);
        }
        out.push_str(&aligned(&rows, 3));
    }
    for n in &r.notes {
        out.push_str(&format!("\nnote: {n}\n"));
    }
    if let Some(e) = &r.exact {
        out.push_str(&format!(
            "\nexact certificate: {}; {} rounds, {} pairs; proven rise bound {} (relative), capacity excess {}, negative prices {}\n",
            if e.ok { "proved" } else { "NOT proved" },
            e.rounds,
            e.pairs,
            g(e.proven_rise_bound),
            g(e.capacity_excess),
            e.negative_prices
        ));
        for v in &e.violations {
            out.push_str(&format!("  {v}\n"));
        }
    }
    out
}
