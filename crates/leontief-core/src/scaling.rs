//! Units chosen by the solver, not by the user.
//!
//! Every mechanism of leontief is invariant to the unit of each resource
//! (shares are ratios of demand to capacity), but the solvers' tolerances are not: an LP's feasibility
//! tolerance of 1e-7 is a whole server when a capacity is 1e-10 (memory in
//! exabytes), and nothing at all when it is 1e11 (bytes). So every solve
//! runs on [`Instance::normalised`]: each resource scaled so that its
//! largest server capacity lies in (0.5, 1]. The factors are powers of two, so the scaled
//! instance holds exactly the same numbers up to their exponents: task
//! counts mean the same on both, and a price per unit maps back exactly
//! ([`Scaling::price_to_original`]).

use crate::instance::Instance;

/// The factors of [`Instance::normalised`]: scaled = original x factor.
#[derive(Debug, Clone, PartialEq)]
pub struct Scaling {
    /// Per resource: scaled capacity = original capacity x this.
    pub resource: Vec<f64>,
}

/// The power of two `2^-e` that puts `x > 0` in (0.5, 1]; 1 for 0.
fn power_of_two_below(x: f64) -> f64 {
    if !(x > 0.0 && x.is_finite()) {
        return 1.0;
    }
    // x = f 2^e with f in [0.5, 1): e = floor(log2 x) + 1, exact through
    // the exponent bits for normal numbers.
    let e = x.log2().floor() as i32 + 1;
    let mut s = 2f64.powi(-e);
    // Guard the rounding of log2 at exact powers of two.
    while x * s >= 1.0 {
        s *= 0.5;
    }
    while x * s < 0.5 {
        s *= 2.0;
    }
    // (0.5, 1] rather than [0.5, 1): a power of two lands on 1, so the
    // common unit values (capacity 1, weight 1) are left as they are.
    if x * s == 0.5 {
        s *= 2.0;
    }
    s
}

impl Scaling {
    /// No scaling.
    pub fn identity(m: usize) -> Scaling {
        Scaling {
            resource: vec![1.0; m],
        }
    }

    /// A price per scaled unit of resource `r` as a price per original
    /// unit (what a user pays for one original unit): p = p' x factor_r.
    pub fn price_to_original(&self, r: usize, scaled_price: f64) -> f64 {
        scaled_price * self.resource[r]
    }

    /// An amount of resource `r` in scaled units as an amount in original
    /// units: a = a' / factor_r.
    pub fn amount_to_original(&self, r: usize, scaled_amount: f64) -> f64 {
        scaled_amount / self.resource[r]
    }
}

impl Instance {
    /// The instance in the solver's units (see the module docs) and the
    /// factors that lead there.
    pub fn normalised(&self) -> (Instance, Scaling) {
        let m = self.num_resources();
        let resource: Vec<f64> = (0..m)
            .map(|r| {
                let cap = self
                    .servers()
                    .iter()
                    .map(|s| s.capacity[r])
                    .fold(0.0, f64::max);
                let reference = if cap > 0.0 {
                    cap
                } else {
                    // Nobody has this resource: scale its demands instead.
                    self.users().iter().map(|u| u.demand[r]).fold(0.0, f64::max)
                };
                power_of_two_below(reference)
            })
            .collect();
        // Weights stay as they are: a common factor of the weights changes
        // the printed levels, and the solvers measure levels relatively.
        (self.rescaled(&resource), Scaling { resource })
    }
}

impl Instance {
    /// The instance with every weight multiplied by the power of two that
    /// puts the largest in (0.5, 1], and that factor. The mechanisms whose
    /// solvers weigh utilities (FDS/GFJ, alphaPF-VDS) solve on it: their
    /// maximisers do not change with a common factor of the weights, but a
    /// conic solver's absolute tolerances do (GFJ with every weight 1e-7
    /// came out 0.4% from optimal).
    pub fn weights_normalised(&self) -> (Instance, f64) {
        let wmax = self.users().iter().map(|u| u.weight).fold(0.0, f64::max);
        let f = power_of_two_below(wmax);
        (self.reweighted(f), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_of_two_land_in_half_open_unit() {
        for x in [1e-150, 3e-11, 0.5, 1.0, 2.0, 7.0, 1e11, 1e150] {
            let s = power_of_two_below(x);
            assert!(x * s > 0.5 && x * s <= 1.0, "{x} -> {}", x * s);
            assert_eq!(s.log2().fract(), 0.0);
        }
    }

    #[test]
    fn normalised_instance_has_the_same_tasks_and_exact_numbers() {
        let inst = Instance::from_json_str(
            r#"{"resources": ["cpu", "mem"],
                "servers": [{"name": "s", "capacity": [1e-10, 1e11], "count": 3}],
                "users": [{"name": "a", "demand": [1e-11, 1e9], "weight": 3},
                          {"name": "b", "demand": [1e-12, 1e10]}]}"#,
        )
        .unwrap();
        let (n, s) = inst.normalised();
        for (u, v) in inst.users().iter().zip(n.users()) {
            for r in 0..2 {
                assert_eq!(v.demand[r] / s.resource[r], u.demand[r]);
            }
            assert_eq!(v.weight, u.weight);
        }
        for r in 0..2 {
            let c = n.servers()[0].capacity[r];
            assert!(c > 0.5 && c <= 1.0, "{c}");
        }
        assert_eq!(
            n.class_capacity(crate::ServerId(0), crate::ResourceId(0)),
            3.0 * n.servers()[0].capacity[0]
        );
        for i in inst.server_ids() {
            for nn in inst.user_ids() {
                assert_eq!(n.gamma(nn, i), inst.gamma(nn, i));
            }
        }
    }
}
