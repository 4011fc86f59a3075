use super::*;
use crate::{certificate, psdsf_with, PsdsfSettings};
use leontief_core::generate;

/// Two resources, 400 over-relaxed sweeps: every level is right, but
/// the forest's split runs negative and its drops and joins do not
/// find a nonnegative forest within the rounds; the split LP does.
#[test]
fn the_split_lp_finishes_where_the_forest_rounds_do_not() {
    let inst = generate::placement(100, 100, 2, 30, 4);
    let o = psdsf_with(
        &inst,
        &PsdsfSettings {
            exact_finish: false,
            max_sweeps: 400,
            ..PsdsfSettings::default()
        },
    );
    let elig = Eligibility::new(&inst);
    let xp: Vec<f64> = elig
        .on_server
        .iter()
        .enumerate()
        .flat_map(|(i, l)| l.iter().map(|&(n, _)| o.tasks[n][i]).collect::<Vec<_>>())
        .collect();
    let total: Vec<f64> = o.tasks.iter().map(|t| t.iter().sum()).collect();
    NO_SPLIT.with(|c| c.set(true));
    let without = forest_finish(&inst, &elig, &xp, &total, usize::MAX, None);
    NO_SPLIT.with(|c| c.set(false));
    assert!(without.is_none(), "the forest alone finished");
    let with =
        forest_finish(&inst, &elig, &xp, &total, usize::MAX, None).expect("the split LP finishes");
    let c = certificate(&inst, &with, 1e-9);
    assert!(c.holds, "{c:?}");
}
