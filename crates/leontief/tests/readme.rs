//! The README's Rust library section works as printed: its lines are the
//! body of `readme_snippet` below, and the test runs it.

/// The snippet exactly as the README prints it.
const SNIPPET: &str = r#"use leontief::{solve, Instance, Mechanism, Options};

let instance = Instance::from_path("datasets/paper-examples/drfh-fig1.json")?;
let a = solve(&instance, &"kdf:k=2".parse::<Mechanism>()?, &Options::default())?;
let verified = a.verification.as_ref().is_some_and(|v| v.ok);
println!("{} {:?} verified: {verified}", a.status, a.user_tasks);
"#;

fn readme_snippet() -> Result<bool, Box<dyn std::error::Error>> {
    use leontief::{solve, Instance, Mechanism, Options};

    let instance = Instance::from_path("datasets/paper-examples/drfh-fig1.json")?;
    let a = solve(
        &instance,
        &"kdf:k=2".parse::<Mechanism>()?,
        &Options::default(),
    )?;
    let verified = a.verification.as_ref().is_some_and(|v| v.ok);
    println!("{} {:?} verified: {verified}", a.status, a.user_tasks);
    Ok(verified)
}

#[test]
fn the_readme_library_snippet_is_printed_as_it_runs() {
    let root = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    )
    .join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(
        readme.contains(SNIPPET),
        "the README's snippet differs from this test's"
    );
    std::env::set_current_dir(root).unwrap();
    assert!(readme_snippet().unwrap());
}
