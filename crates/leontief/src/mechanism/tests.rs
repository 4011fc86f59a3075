//! The spec strings, parameters and their refusals.

use super::*;

fn every() -> Vec<Mechanism> {
    vec![
        Mechanism::Drf,
        Mechanism::Drfh,
        Mechanism::Kdf { k: 3 },
        Mechanism::NaiveDrf,
        Mechanism::Hdrf,
        Mechanism::Hdrfh,
        Mechanism::HdrfNaive,
        Mechanism::Nfc,
        Mechanism::Tsf,
        Mechanism::FirstFit,
        Mechanism::BestFit {
            normaliser: Some("mem".into()),
        },
        Mechanism::Slots { slots: 14 },
        Mechanism::KdfOnline {
            k: 2,
            on_full: OnFull::Skip,
        },
        Mechanism::YarnFair,
        Mechanism::Kai,
        Mechanism::VolcanoProportion,
        Mechanism::Kueue,
        Mechanism::Fds {
            fairness: Fairness::Alpha(2.0),
        },
        Mechanism::Gfj {
            fairness: Fairness::BetaLambda {
                beta: 2.0,
                lambda: -0.75,
            },
        },
        Mechanism::Pnorm {
            p: f64::INFINITY,
            fairness: Fairness::Alpha(1.0),
        },
        Mechanism::BbfEg {
            method: EgMethod::Dual,
        },
        Mechanism::BbfOde {
            by: OdeVariable::T,
            trajectory: Some("t.csv".into()),
        },
        Mechanism::Psdsf {
            select: PsdsfSelect::MaxTasks,
        },
        Mechanism::Vds {
            alpha: 2.0,
            schedule: VdsSchedule::Jacobi(0.5),
        },
    ]
}

#[test]
fn spec_strings_and_json_round_trip() {
    for m in every() {
        let text = m.to_string();
        assert_eq!(text.parse::<Mechanism>().as_ref(), Ok(&m), "{text}");
        let json = serde_json::to_string(&m).unwrap();
        let back: Mechanism = serde_json::from_str(&json).unwrap();
        assert_eq!(back, m, "{json}");
        assert_eq!(Mechanism::from_params(m.name(), &m.params()), Ok(m));
    }
}

#[test]
fn parameters_are_named_in_errors() {
    let e = "kdf".parse::<Mechanism>().unwrap_err();
    assert_eq!(e.to_string(), "kdf needs k K (K >= 1; K = 1 is DRF)");
    assert_eq!(
        e.render(true),
        "--mechanism kdf needs --k K (K >= 1; K = 1 is DRF)"
    );
    let e = "drfh:k=2".parse::<Mechanism>().unwrap_err();
    assert_eq!(e.render(true), "--k does not apply to drfh");
    let e = "kdf-online:k=1,on_full=never"
        .parse::<Mechanism>()
        .unwrap_err();
    assert!(e.render(true).starts_with("--on-full never"), "{e}");
    assert!(matches!(
        "vds:alpha=1,jacobi=0.5".parse::<Mechanism>(),
        Err(ParamError::JacobiAtAlphaOne)
    ));
    assert!(matches!(
        "nosuch".parse::<Mechanism>(),
        Err(ParamError::UnknownMechanism(_))
    ));
    assert!("pnorm:p=0.5,alpha=1".parse::<Mechanism>().is_err());
    assert!("fds:alpha=1,beta=2".parse::<Mechanism>().is_err());
    assert!("slots:slots=0".parse::<Mechanism>().is_err());
}

#[test]
fn json_names_the_mechanism() {
    let v = serde_json::to_value(Mechanism::Kdf { k: 2 }).unwrap();
    assert_eq!(v, serde_json::json!({"name": "kdf", "k": 2}));
    let m: Mechanism = serde_json::from_value(
        serde_json::json!({"name": "fds", "fairness": {"beta-lambda": {"beta": 2.0, "lambda": 0.0}}}),
    )
    .unwrap();
    assert_eq!(m.name(), "fds");
}
