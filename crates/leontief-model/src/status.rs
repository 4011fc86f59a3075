use serde::{Deserialize, Serialize};

/// The outcome of a solve, kept lossless across backends.
///
/// Backends map their own statuses onto this enum without merging distinct
/// outcomes; the backend's raw status string travels alongside in
/// [`crate::Solution::raw_status`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Status {
    /// Solved to the requested tolerances.
    Optimal,
    /// A solution was returned, but only to reduced accuracy (for example
    /// Clarabel's "almost solved").
    ReducedAccuracy,
    /// Proven primal infeasible.
    Infeasible,
    /// Proven unbounded.
    Unbounded,
    /// An infeasibility certificate, but only to reduced accuracy
    /// (Clarabel's "almost primal infeasible").
    InfeasibleReducedAccuracy,
    /// An unboundedness certificate, but only to reduced accuracy
    /// (Clarabel's "almost dual infeasible").
    UnboundedReducedAccuracy,
    /// The backend proved that the problem is infeasible *or* unbounded but
    /// not which one. Never reported as either.
    InfeasibleOrUnbounded,
    /// The time limit was reached.
    TimeLimit,
    /// The iteration limit was reached.
    IterationLimit,
    /// Some other limit was reached (memory, solution count, interrupt,
    /// objective bound).
    OtherLimit,
    /// The backend failed numerically.
    NumericalFailure,
    /// The backend returned no usable status.
    Unknown,
}

impl Status {
    /// True for outcomes that carry a solution one may use: optimal, or
    /// optimal to reduced accuracy.
    pub fn has_solution(self) -> bool {
        matches!(self, Status::Optimal | Status::ReducedAccuracy)
    }

    /// The stable lowercase name used in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Optimal => "optimal",
            Status::ReducedAccuracy => "reduced_accuracy",
            Status::Infeasible => "infeasible",
            Status::Unbounded => "unbounded",
            Status::InfeasibleReducedAccuracy => "infeasible_reduced_accuracy",
            Status::UnboundedReducedAccuracy => "unbounded_reduced_accuracy",
            Status::InfeasibleOrUnbounded => "infeasible_or_unbounded",
            Status::TimeLimit => "time_limit",
            Status::IterationLimit => "iteration_limit",
            Status::OtherLimit => "other_limit",
            Status::NumericalFailure => "numerical_failure",
            Status::Unknown => "unknown",
        }
    }

    /// The worse of two outcomes, for a mechanism made of several solves:
    /// anything without a solution beats reduced accuracy, which beats
    /// optimal. Between two non-solutions the first is kept.
    pub fn worst(self, other: Status) -> Status {
        match (self.has_solution(), other.has_solution()) {
            (false, _) => self,
            (true, false) => other,
            (true, true) => {
                if self == Status::ReducedAccuracy || other == Status::ReducedAccuracy {
                    Status::ReducedAccuracy
                } else {
                    Status::Optimal
                }
            }
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worst_keeps_failures_and_reduced_accuracy() {
        assert_eq!(Status::Optimal.worst(Status::Optimal), Status::Optimal);
        assert_eq!(
            Status::Optimal.worst(Status::ReducedAccuracy),
            Status::ReducedAccuracy
        );
        assert_eq!(
            Status::ReducedAccuracy.worst(Status::Infeasible),
            Status::Infeasible
        );
        assert_eq!(
            Status::InfeasibleOrUnbounded.worst(Status::Infeasible),
            Status::InfeasibleOrUnbounded
        );
    }

    #[test]
    fn names_are_distinct() {
        let all = [
            Status::Optimal,
            Status::ReducedAccuracy,
            Status::Infeasible,
            Status::Unbounded,
            Status::InfeasibleReducedAccuracy,
            Status::UnboundedReducedAccuracy,
            Status::InfeasibleOrUnbounded,
            Status::TimeLimit,
            Status::IterationLimit,
            Status::OtherLimit,
            Status::NumericalFailure,
            Status::Unknown,
        ];
        let mut names: Vec<_> = all.iter().map(|s| s.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all.len());
        for s in all {
            // serde's snake_case renaming must agree with as_str, and round-trip.
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.as_str()));
            let back: Status = serde_json::from_str(&json).unwrap();
            assert_eq!(back, s);
        }
    }
}
