//! The instance parser and validator on any bytes: an instance or an
//! error naming a field, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Err(e) = leontief_core::Instance::from_json_str(text) {
            for issue in e.issues() {
                assert!(!issue.reason.is_empty());
            }
        }
    }
});
