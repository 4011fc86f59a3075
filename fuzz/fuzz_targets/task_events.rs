//! The Google task_events reader on any bytes: a workload or an error
//! naming the line, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = leontief_sim::workload::parse_task_events(data, "fuzz.csv");
});
