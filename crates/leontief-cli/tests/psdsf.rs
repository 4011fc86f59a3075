//! `leontief solve --mechanism psdsf`: an unknown selection is bad input
//! (exit 2, nothing solved). The mechanism's behaviour is tested on the
//! library (crates/leontief/tests/psdsf.rs).

mod common;

use common::leontief;

#[test]
fn an_unknown_selection_exits_2() {
    let p = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    )
    .join("../../datasets/paper-examples/vds-fig1-psdsf.json");
    let (code, out, err) = leontief(&[
        "solve",
        p.to_str().unwrap(),
        "--mechanism",
        "psdsf",
        "--select",
        "fastest",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(out.is_empty() && err.contains("--select fastest"), "{err}");
}
