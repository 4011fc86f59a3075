//! Kubernetes resource quantities (`500m`, `16Gi`, `1e3`, `1.5`), by the
//! grammar of k8s.io/apimachinery's `resource.Quantity`:
//!
//! ```text
//! quantity        ::= signedNumber suffix
//! suffix          ::= binarySI | decimalExponent | decimalSI
//! binarySI        ::= Ki | Mi | Gi | Ti | Pi | Ei
//! decimalSI       ::= n | u | m | "" | k | M | G | T | P | E
//! decimalExponent ::= "e" signedNumber | "E" signedNumber
//! signedNumber    ::= sign number      (sign ::= "+" | "-" | "")
//! number          ::= digits | digits "." digits | digits "." | "." digits
//! ```
//!
//! (`E` alone is exa; `E3` is an exponent.) The value is in the base unit:
//! cores for cpu, bytes for memory.

/// Why a quantity was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("\"{text}\" is not a Kubernetes quantity: {reason}")]
pub struct QuantityError {
    /// The text.
    pub text: String,
    /// What is wrong.
    pub reason: String,
}

/// Parse a quantity into its value in the base unit.
///
/// ```
/// use leontief::import::parse_quantity;
/// assert_eq!(parse_quantity("500m").unwrap(), 0.5);
/// assert_eq!(parse_quantity("16Gi").unwrap(), 16.0 * 1024f64.powi(3));
/// assert_eq!(parse_quantity("1e3").unwrap(), 1000.0);
/// assert_eq!(parse_quantity("2E").unwrap(), 2e18);
/// assert!(parse_quantity("12GB").is_err());
/// ```
pub fn parse_quantity(text: &str) -> Result<f64, QuantityError> {
    let fail = |reason: &str| QuantityError {
        text: text.to_string(),
        reason: reason.to_string(),
    };
    let s = text.trim();
    if s.is_empty() {
        return Err(fail("it is empty"));
    }
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let negative = s.starts_with('-');
    let split = body
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(body.len());
    let (number, suffix) = body.split_at(split);
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    if int.is_empty() && frac.is_empty() {
        return Err(fail("no digits"));
    }
    if frac.contains('.') {
        return Err(fail("two decimal points"));
    }
    // The value is the decimal number times a power of ten or of 1024,
    // rounded once: `1900m` is the double nearest 1.9, not 1900 * 0.001.
    let (exp10, exp2): (i64, i32) = match suffix {
        "" => (0, 0),
        "Ki" => (0, 10),
        "Mi" => (0, 20),
        "Gi" => (0, 30),
        "Ti" => (0, 40),
        "Pi" => (0, 50),
        "Ei" => (0, 60),
        "n" => (-9, 0),
        "u" => (-6, 0),
        "m" => (-3, 0),
        "k" => (3, 0),
        "M" => (6, 0),
        "G" => (9, 0),
        "T" => (12, 0),
        "P" => (15, 0),
        "E" => (18, 0),
        _ => {
            let exp = suffix
                .strip_prefix(['e', 'E'])
                .ok_or_else(|| fail(&format!("unknown suffix \"{suffix}\" (use Ki, Mi, Gi, Ti, Pi, Ei, n, u, m, k, M, G, T, P, E or e<exponent>)")))?;
            let digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(fail(&format!("the exponent \"{exp}\" is not an integer")));
            }
            let e: i64 = exp
                .parse()
                .ok()
                .filter(|e: &i64| e.abs() <= 10_000)
                .ok_or_else(|| fail("the exponent is out of range"))?;
            (e, 0)
        }
    };
    let decimal: f64 = format!("{int}{frac}e{}", exp10 - frac.len() as i64)
        .parse()
        .map_err(|_| fail("the number does not parse"))?;
    // A power of two scales exactly (short of overflow).
    let v = decimal * 2f64.powi(exp2);
    if !v.is_finite() {
        return Err(fail("it overflows"));
    }
    Ok(if negative { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::parse_quantity;

    #[test]
    fn grammar() {
        for (t, v) in [
            ("1", 1.0),
            ("+1", 1.0),
            ("-2", -2.0),
            ("0.5", 0.5),
            ("5.", 5.0),
            (".5", 0.5),
            ("100m", 0.1),
            ("250u", 250e-6),
            ("7n", 7e-9),
            ("2k", 2000.0),
            ("3M", 3e6),
            ("1G", 1e9),
            ("1T", 1e12),
            ("1P", 1e15),
            ("1E", 1e18),
            ("1Ki", 1024.0),
            ("1.5Mi", 1.5 * 1048576.0),
            ("64Gi", 64.0 * 1073741824.0),
            ("1Ti", 1099511627776.0),
            ("1Pi", 1125899906842624.0),
            ("1Ei", 1152921504606846976.0),
            ("1e3", 1e3),
            ("1E3", 1e3),
            ("12e-3", 0.012),
            ("5e+2", 500.0),
            (" 4 ", 4.0),
        ] {
            let got = parse_quantity(t).unwrap_or_else(|e| panic!("{t}: {e}"));
            assert!((got - v).abs() <= 1e-12 * v.abs(), "{t}: {got} != {v}");
        }
        // Exact decimals: each the double nearest the written number.
        assert_eq!(parse_quantity("1900m").unwrap(), 1.9);
        assert_eq!(parse_quantity("100m").unwrap(), 0.1);
        assert_eq!(parse_quantity("0.3").unwrap(), 0.3);
        assert_eq!(parse_quantity("300m").unwrap(), 0.3);
        assert_eq!(parse_quantity("7n").unwrap(), 7e-9);
        assert_eq!(parse_quantity("1.1Gi").unwrap(), 1.1 * 1073741824.0);
        assert_eq!(parse_quantity("12e-3").unwrap(), 0.012);
        for t in [
            "", "m", "Gi", ".", "1..2", "1.2.3", "12GB", "1gi", "1 Gi", "1e", "1e1.5", "1ee3",
            "0x10", "abc", "1Kb", "1e400", "--1",
        ] {
            assert!(parse_quantity(t).is_err(), "{t:?} accepted");
        }
        assert_eq!(
            parse_quantity("12GB").unwrap_err().to_string(),
            "\"12GB\" is not a Kubernetes quantity: unknown suffix \"GB\" (use Ki, Mi, Gi, Ti, Pi, Ei, n, u, m, k, M, G, T, P, E or e<exponent>)"
        );
    }
}
