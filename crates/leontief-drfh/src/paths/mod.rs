//! The shortcut paths of the operator: each answers a shape of instance
//! in fewer or smaller LPs than the rounds, or declines.

pub mod capped;
pub mod groups;
pub mod merge;
pub(crate) mod pack;
pub mod patterns;
pub mod pooled;
pub mod realise;
