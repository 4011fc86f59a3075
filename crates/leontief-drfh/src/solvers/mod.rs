//! The Clarabel users of the operator: Clarabel on the operator's LP as
//! it stands ([`direct`]), and the block interior point method that
//! factorises its KKT system per server ([`block_ipm`]), which hands what
//! it does not finish to Clarabel. Both are [`leontief_model::LpBackend`]s.

pub mod block_ipm;
pub mod direct;
