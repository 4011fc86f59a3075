//! The shortcut paths of the operator: each answers a shape of instance
//! in fewer or smaller LPs than the rounds, or declines.

pub(crate) mod capped;
pub(crate) mod groups;
pub mod merge;
pub mod patterns;
pub(crate) mod pooled;
