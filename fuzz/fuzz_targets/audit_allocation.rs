//! `leontief audit` on any allocation text (CSV or JSON, the first byte
//! picks) for a fixed instance: refused naming its line or field, or
//! audited; never a panic.
#![no_main]

use leontief::audit::{audit, read_allocation, AllocationFormat, AuditOptions};
use leontief::VerifyMode;
use libfuzzer_sys::fuzz_target;

const INSTANCE: &str = r#"{"resources": ["cpu", "mem"],
  "servers": [{"name": "s1", "capacity": [2, 12]}, {"name": "s2", "capacity": [12, 2]}],
  "queues": [{"name": "A"}],
  "users": [{"name": "u1", "demand": [0.2, 1], "queue": "A"}, {"name": "u2", "demand": [1, 0.2], "tasks": 5}]}"#;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(instance) = leontief_core::Instance::from_json_str(INSTANCE) else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let format = if pick & 1 == 0 {
        AllocationFormat::Csv
    } else {
        AllocationFormat::Json
    };
    if let Ok(tasks) = read_allocation(&instance, &text, format) {
        let options = AuditOptions {
            against: Vec::new(),
            mode: VerifyMode::Auto,
            time_limit: Some(5.0),
        };
        let _ = audit(&instance, &tasks, &options);
    }
});
