//! Double-double arithmetic (about 32 digits): each number an unevaluated
//! sum hi + lo of two f64, the error-free sums and products of Dekker and
//! Knuth.

/// A double-double number hi + lo, |lo| <= ulp(hi) / 2.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Dd {
    pub(crate) hi: f64,
    pub(crate) lo: f64,
}

fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

fn quick_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    (s, b - (s - a))
}

impl Dd {
    /// The exact value of an f64.
    pub fn from(v: f64) -> Dd {
        Dd { hi: v, lo: 0.0 }
    }
    /// Rounded to the nearest f64.
    pub fn f64(self) -> f64 {
        self.hi + self.lo
    }
    pub(crate) fn add(self, o: Dd) -> Dd {
        let (s, e) = two_sum(self.hi, o.hi);
        let (t, f) = two_sum(self.lo, o.lo);
        let (s, e) = quick_two_sum(s, e + t);
        let (hi, lo) = quick_two_sum(s, e + f);
        Dd { hi, lo }
    }
    pub(crate) fn neg(self) -> Dd {
        Dd {
            hi: -self.hi,
            lo: -self.lo,
        }
    }
    pub(crate) fn sub(self, o: Dd) -> Dd {
        self.add(o.neg())
    }
    pub(crate) fn mul_f(self, b: f64) -> Dd {
        let p = self.hi * b;
        let e = self.hi.mul_add(b, -p) + self.lo * b;
        let (hi, lo) = quick_two_sum(p, e);
        Dd { hi, lo }
    }
    pub(crate) fn div(self, o: Dd) -> Dd {
        let q1 = self.hi / o.hi;
        let r = self.sub(o.mul_f(q1));
        let q2 = r.hi / o.hi;
        let r = r.sub(o.mul_f(q2));
        let q3 = r.hi / o.hi;
        let (hi, lo) = quick_two_sum(q1, q2);
        Dd { hi, lo }.add(Dd::from(q3))
    }
    pub(crate) fn abs(self) -> Dd {
        if self.hi < 0.0 {
            self.neg()
        } else {
            self
        }
    }
    pub(crate) fn lt(self, o: Dd) -> bool {
        self.hi < o.hi || (self.hi == o.hi && self.lo < o.lo)
    }
}
