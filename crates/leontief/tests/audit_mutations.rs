//! Mutated allocations given to the audit: a DRFH answer written as the
//! CSV an operator would hand in (`user,server,tasks`), then broken (a
//! cell emptied, a non-number, a negative, huge or non-finite count, an
//! unknown user or server, a column missing, a line repeated or cut
//! short). Each is refused as bad input naming its line, or audited: the
//! audit runs (never "could not run", never a panic), and on an
//! allocation it finds infeasible no optimality property holds.

mod csv_mutation;
use csv_mutation::mutate_csv;
use leontief::audit::{audit, read_allocation, AllocationFormat, AuditOptions};
use leontief::{Mechanism, Options, VerifyMode};
use leontief_core::strategies::{config, instance, Shape};
use proptest::prelude::*;

fn csv(inst: &leontief::Instance, tasks: &[Vec<f64>]) -> String {
    let mut out = String::from("user,server,tasks\n");
    for (n, row) in tasks.iter().enumerate() {
        for (i, &x) in row.iter().enumerate() {
            if x > 0.0 {
                out.push_str(&format!(
                    "{},{},{}\n",
                    inst.users()[n].name,
                    inst.servers()[i].name,
                    x
                ));
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn a_mutated_allocation_is_refused_by_line_or_audited(
        inst in instance(Shape::small()),
        what in any::<u8>(),
        line in any::<usize>(),
        cell in any::<usize>(),
    ) {
        let drfh = leontief::solve(&inst, &Mechanism::Drfh, &Options::default()).unwrap();
        let text = mutate_csv(&csv(&inst, &drfh.tasks.to_dense()), what, line, cell);
        match read_allocation(&inst, &text, AllocationFormat::Csv) {
            Err(e) => {
                prop_assert!(e.is_bad_input(), "could not run: {e}\n{text}");
                prop_assert!(e.to_string().contains("allocation"), "{e}\n{text}");
            }
            Ok(tasks) => {
                let options = AuditOptions {
                    against: vec![Mechanism::Drfh],
                    mode: VerifyMode::Auto,
                    time_limit: None,
                };
                let report = audit(&inst, &tasks, &options);
                prop_assert!(report.is_ok(), "could not run: {:?}\n{text}", report.err());
                let report = report.unwrap();
                if !report.judgement.feasibility.ok {
                    for v in &report.judgement.summary {
                        prop_assert!(
                            v.property == "feasibility" || v.holds != Some(true)
                                || ["whole tasks", "sharing incentive", "envy-freeness"].contains(&v.property),
                            "infeasible, yet {} holds: {}\n{text}",
                            v.property,
                            v.detail
                        );
                    }
                    prop_assert!(report.judgement.pareto.as_ref().is_none_or(|p| !p.ok));
                    prop_assert!(report.judgement.drfh_max_min.as_ref().is_none_or(|m| !m.check.ok));
                }
            }
        }
    }
}
