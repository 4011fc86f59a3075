//! Every importer on any bytes (the first byte picks it; 0xFF separates
//! its files): an instance leontief accepts, or bad input naming where it
//! comes from; never a panic, and never an instance the format refuses.
#![no_main]

use leontief::import::{
    alibaba_gpu, kubernetes, kueue, yarn, AlibabaGroup, AlibabaOptions, KubernetesOptions,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let parts: Vec<String> = rest
        .split(|&b| b == 0xFF)
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    let part = |k: usize| parts.get(k).map(String::as_str).unwrap_or("");
    let imported = match pick % 4 {
        0 => kubernetes(part(0), part(1), &KubernetesOptions::default()),
        1 => alibaba_gpu(
            part(0).as_bytes(),
            "nodes.csv",
            part(1).as_bytes(),
            "pods.csv",
            &AlibabaOptions {
                at: None,
                group_by: AlibabaGroup::Shape,
                queues_by_qos: pick & 4 != 0,
            },
        ),
        2 => kueue(part(0), part(1), part(2), parts.get(3).map(String::as_str)),
        _ => yarn(part(0), part(1), [100_000.0, 100.0]),
    };
    if let Ok(i) = imported {
        // The CLI refuses an imported instance the format does not accept
        // (exit 2); it must never panic on one.
        let _ = leontief_core::Instance::new(i.instance);
    }
});
