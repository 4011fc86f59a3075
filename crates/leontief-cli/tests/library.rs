//! `leontief solve` and `leontief::solve` print the same bytes: on every
//! paper example, and for every mechanism on one instance. Only measured
//! times (`*seconds` fields) are set to 0 on both sides before comparing.

use leontief::{Layout, Mechanism, Options, NAMES};
use leontief_cli::cases::load_cases;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    )
    .join("../..")
}

/// The text with the value of every `...seconds"` key (a number, or an
/// object of numbers such as bbf's `seconds`) replaced by 0.
fn without_times(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("seconds\":") {
        let end = at + "seconds\":".len();
        out.push_str(&rest[..end]);
        rest = &rest[end..];
        rest = match rest.strip_prefix('{') {
            Some(inner) => &inner[inner.find('}').map_or(inner.len(), |i| i + 1)..],
            None => rest.trim_start_matches(|c: char| {
                c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+')
            }),
        };
        out.push('0');
    }
    out.push_str(rest);
    out
}

/// The CLI's stdout and the library's JSON for one run, times removed.
fn both(instance: &Path, cli_args: &[String], mechanism: &Mechanism) -> (String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_leontief"))
        .arg("solve")
        .arg(instance)
        .args(cli_args)
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "{}: {}",
        instance.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let cli = String::from_utf8(out.stdout).expect("UTF-8");
    let inst = leontief::Instance::from_path(instance).expect("a valid instance");
    let a = leontief::solve(&inst, mechanism, &Options::default()).expect("solves");
    let lib = leontief::to_json(a, Layout::Auto, false).expect("serialises") + "\n";
    (without_times(&cli), without_times(&lib))
}

#[test]
fn the_library_prints_what_the_cli_prints_on_every_paper_example() {
    let cases = load_cases(&root().join("datasets/paper-examples")).expect("readable");
    let mut ran = 0;
    for case in &cases {
        if case.mechanism() == "enumerate-bbf" {
            continue;
        }
        let mechanism = leontief_cli::mechanism(case.mechanism(), &case.params())
            .unwrap_or_else(|f| panic!("{}: {}", case.name, f.message));
        let mut args = vec!["--mechanism".to_string(), case.mechanism().to_string()];
        args.extend(case.flags());
        let (cli, lib) = both(&case.instance, &args, &mechanism);
        assert_eq!(cli, lib, "{}", case.name);
        ran += 1;
    }
    assert!(ran >= 55, "only {ran} cases");
}

#[test]
fn the_library_prints_what_the_cli_prints_for_every_mechanism() {
    let instance = root().join("datasets/paper-examples/drfh-fig1.json");
    let runs: &[(&str, &[&str])] = &[
        ("drf", &[]),
        ("drfh", &[]),
        ("kdf:k=2", &["--k", "2"]),
        ("naive-drf", &[]),
        ("hdrf", &[]),
        ("hdrfh", &[]),
        ("hdrf-naive", &[]),
        ("yarn-fair", &[]),
        ("kai", &[]),
        ("volcano-proportion", &[]),
        ("kueue", &[]),
        ("nfc", &[]),
        ("psdsf", &[]),
        ("psdsf:select=max-tasks", &["--select", "max-tasks"]),
        ("vds:alpha=2", &["--alpha", "2"]),
        ("vds:alpha=1", &["--alpha", "1"]),
        (
            "vds:alpha=2,jacobi=0.5",
            &["--alpha", "2", "--jacobi", "0.5"],
        ),
        ("tsf", &[]),
        ("first-fit", &[]),
        ("best-fit:normaliser=mem", &["--normaliser", "mem"]),
        ("slots:slots=4", &["--slots", "4"]),
        (
            "kdf-online:k=2,on_full=skip",
            &["--k", "2", "--on-full", "skip"],
        ),
        ("fds:alpha=2", &["--alpha", "2"]),
        ("fds:beta=0.5,lambda=3", &["--beta", "0.5", "--lambda", "3"]),
        ("gfj:alpha=1", &["--alpha", "1"]),
        ("pnorm:p=2,alpha=1", &["--p", "2", "--alpha", "1"]),
        ("pnorm:p=inf,beta=2", &["--p", "inf", "--beta", "2"]),
        ("bbf-eg", &[]),
        ("bbf-eg:method=dual", &["--method", "dual"]),
        ("bbf-ode", &[]),
    ];
    let mut seen = BTreeSet::new();
    for (spec, flags) in runs {
        let mechanism: Mechanism = spec.parse().unwrap_or_else(|e| panic!("{spec}: {e}"));
        seen.insert(mechanism.name());
        let mut args = vec!["--mechanism".to_string(), mechanism.name().to_string()];
        args.extend(flags.iter().map(|f| f.to_string()));
        let (cli, lib) = both(&instance, &args, &mechanism);
        assert_eq!(cli, lib, "{spec}");
    }
    let all: BTreeSet<&str> = NAMES.into_iter().collect();
    assert_eq!(seen, all, "every mechanism is compared");
}

#[test]
fn times_are_the_only_thing_removed() {
    assert_eq!(
        without_times(
            r#"{"solve_seconds":1.5e-3,"x":[1.25],"build_seconds":2,"seconds":{"a":1.5},"y":3}"#
        ),
        r#"{"solve_seconds":0,"x":[1.25],"build_seconds":0,"seconds":0,"y":3}"#
    );
}
