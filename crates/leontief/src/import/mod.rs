//! Importers of real cluster snapshots: an instance and the allocation the
//! cluster made, ready for [`crate::audit`].

mod alibaba;
mod alibaba_workload;
mod google;
mod kubernetes;
mod kueue;
mod placement;
mod quantity;
mod snapshot;
mod yarn;

pub(crate) use alibaba::read_nodes;
pub use alibaba::{alibaba_gpu, AlibabaGroup, AlibabaOptions};
pub use alibaba_workload::alibaba_workload;
pub use google::{google_trace, TraceGroup, TraceOptions};
pub use kubernetes::{kubernetes, pod_request, GroupBy, KubernetesOptions};
pub use kueue::{kueue, MAX_KUEUE_OBJECTS};
pub use quantity::{parse_quantity, QuantityError};
pub use snapshot::{ImportSummary, Imported, Merge};
pub use yarn::{cluster_metrics, yarn, MAX_YARN_OBJECTS};

use leontief_core::RawInstance;

/// An allocation as the CSV `leontief audit` reads: `user,server,tasks`,
/// one row per nonzero entry (names quoted where needed).
pub fn allocation_csv(instance: &RawInstance, tasks: &[Vec<f64>]) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    // Writing to memory cannot fail.
    let _ = w.write_record(["user", "server", "tasks"]);
    for (n, row) in tasks.iter().enumerate() {
        for (i, &t) in row.iter().enumerate().filter(|(_, &t)| t != 0.0) {
            let _ = w.write_record([
                instance.users[n].name.as_str(),
                instance.servers[i].name.as_str(),
                &t.to_string(),
            ]);
        }
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}
