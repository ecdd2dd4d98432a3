//! The error budget of `--max-error`: the largest vertex position error a
//! bake may spend on its encodings, in model units or relative to the
//! model's size.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A budget for the position error of every clip (`--max-error`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ErrorBudget {
    /// Model units (glTF's metres): `0.1mm`, `2cm`, `0.001m`, or a bare
    /// number.
    Units(f64),
    /// A fraction of the model's size (the diagonal of its rest-pose box):
    /// `0.01%` is `Relative(1e-4)`.
    Relative(f64),
}

impl ErrorBudget {
    /// The budget in model units for a model of size `size`.
    pub fn units(self, size: f64) -> f64 {
        match self {
            Self::Units(u) => u,
            Self::Relative(r) => r * size,
        }
    }
}

/// The units `--max-error` takes, with their size in metres; longest
/// suffix first.
const UNITS: [(&str, f64); 4] = [("mm", 1e-3), ("cm", 1e-2), ("m", 1.0), ("%", 0.0)];

impl FromStr for ErrorBudget {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let (number, unit) = UNITS
            .iter()
            .find_map(|&(suffix, scale)| {
                t.strip_suffix(suffix)
                    .map(|n| (n.trim(), Some((suffix, scale))))
            })
            .unwrap_or((t, None));
        let value: f64 = number.parse().map_err(|_| {
            format!("`{text}`: expected an error such as `0.1mm`, `2cm`, `0.001` (model units) or `0.01%` (of the model's size)")
        })?;
        if !(value.is_finite() && value >= 0.0) {
            return Err(format!(
                "`{text}`: an error budget is a finite number at least 0"
            ));
        }
        Ok(match unit {
            Some(("%", _)) => Self::Relative(value / 100.0),
            Some((_, scale)) => Self::Units(value * scale),
            None => Self::Units(value),
        })
    }
}

impl fmt::Display for ErrorBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Units(u) => write!(f, "{u:e}"),
            Self::Relative(r) => write!(f, "{}%", r * 100.0),
        }
    }
}

/// As its text: the bake key and reports read `1e-4` or `0.01%`.
impl Serialize for ErrorBudget {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

/// From text (`"0.1mm"`, `"0.01%"`) or a number (model units).
impl<'de> Deserialize<'de> for ErrorBudget {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Given {
            Number(f64),
            Text(String),
        }
        let text = match Given::deserialize(d)? {
            Given::Number(n) => n.to_string(),
            Given::Text(t) => t,
        };
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_read_with_their_units() {
        let read = |t: &str| t.parse::<ErrorBudget>();
        assert_eq!(read("0.1mm"), Ok(ErrorBudget::Units(0.1 * 1e-3)));
        assert_eq!(read("2 cm"), Ok(ErrorBudget::Units(2.0 * 1e-2)));
        assert_eq!(read("0.001m"), Ok(ErrorBudget::Units(0.001)));
        assert_eq!(read("1e-4"), Ok(ErrorBudget::Units(1e-4)));
        assert_eq!(read("0.01%"), Ok(ErrorBudget::Relative(0.01 / 100.0)));
        for bad in ["", "mm", "-1mm", "inf", "NaN", "1 inch", "1e400"] {
            assert!(read(bad).is_err(), "{bad}");
        }
        assert_eq!(ErrorBudget::Relative(1e-4).units(2.0), 2e-4);
    }

    #[test]
    fn a_manifest_takes_text_or_a_number() {
        #[derive(Deserialize)]
        struct T {
            e: ErrorBudget,
        }
        let t: T = toml::from_str("e = \"0.5mm\"").unwrap();
        assert_eq!(t.e, ErrorBudget::Units(0.5e-3));
        let t: T = toml::from_str("e = 0.002").unwrap();
        assert_eq!(t.e, ErrorBudget::Units(0.002));
        assert!(toml::from_str::<T>("e = \"-2\"").is_err());
    }
}
