//! The operator's LP and its duality: built once ([`build`]), priced and
//! proved ([`duality`]), grown ([`colgen`], [`pricing`]), closed to the
//! users still rising ([`closing`]), solved to an answer ([`retry`]), and
//! read back as an allocation ([`finish`]), its round-off idle capacity
//! given to users that can take it ([`idle`]), and checked against its
//! rounds' prices ([`proof`]).
//!
//! ```text
//!   columns  x'_{n,i} >= 0    user n on entry i (only where n may run on i)
//!            y'_n in [lo_n, T_n / coef_n]  user n's level
//!            theta >= 0        the level of the active users
//!   rows     sum_n D_{n,r} coef_n x'_{n,i} / c_{i,r} <= 1   (i, r) demanded by someone
//!            sum_i x'_{n,i} - y'_n = 0              link
//!            y'_n - theta >= 0                      level (active users)
//!   maximise theta
//! ```
//!
//! Every column of user n is in level units: x_{n,i} = coef_n x'_{n,i}
//! with coef_n = w_n / (sigma_n s), s making the smallest "alone" level 1.
//! So the LP's absolute tolerances are the same fraction of every user's
//! level whatever the weights (a ratio of 1e9 included) and the size of a
//! task, and, each capacity row being divided by its capacity, the same
//! fraction of every server. (With tasks as columns, a user of weight 1
//! next to one of weight 1e9 held 2e-8 tasks, inside HiGHS's 1e-7
//! feasibility tolerance, and came out 10% off.)
//!
//! Freezing user n sets its level row free and `lo_n = w_n theta* /
//! sigma_n`: only bounds change, so the LP is built once and every
//! re-solve is warm-started. Every round records the prices that prove
//! its frozen users blocked ([`crate::outcome::RoundCertificate`]);
//! `leontief-audit` checks them by weak duality in one pass over every
//! pair.

pub mod build;
pub mod closing;
pub mod colgen;
pub mod duality;
pub mod finish;
pub mod idle;
pub mod part;
pub mod pricing;
pub mod proof;
pub mod retry;
