//! `leontief solve` on small instances from any bytes: the first byte
//! picks the mechanism, the rest is the instance. Never a panic, never
//! "could not run" on a valid instance, and an `optimal` answer is always
//! verified.
#![no_main]

use leontief::VerifyMode;
use leontief_cli::MechParams;
use leontief_core::{Instance, Status};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let Ok(inst) = Instance::from_json_str(text) else {
        return;
    };
    // Small instances only: a fuzzer wants many runs a second.
    if inst.num_users() > 6 || inst.num_entries() > 4 || inst.num_resources() > 4 {
        return;
    }
    let mut p = MechParams::default();
    let name = match pick % 10 {
        0 => "drfh",
        1 => "drf",
        2 => "tsf",
        3 => {
            p.k = Some(2);
            "kdf"
        }
        4 => "nfc",
        5 => "naive-drf",
        6 => {
            p.alpha = Some(2.0);
            "fds"
        }
        7 => "bbf-eg",
        8 => "psdsf",
        _ => {
            p.alpha = Some(1.0);
            "gfj"
        }
    };
    match leontief_cli::solve(&inst, name, &p, VerifyMode::Auto) {
        Ok(a) => {
            if a.status == Status::Optimal {
                let ok = a.verification.as_ref().map(|v| v.ok);
                assert_eq!(
                    ok,
                    Some(true),
                    "{name}: optimal but not verified: {:?}",
                    a.verification
                );
            }
        }
        Err(f) => assert_eq!(f.code, 2, "{name} could not run: {}", f.message),
    }
});
