//! Range checks: what each key allows ([`Bound`], declared beside the key), how a value is held to
//! it ([`Bounded`]), and the few rules that relate two keys of a section ([`Rules`]).

use super::{bounds, Weights, LEARNED_FEATURES};
use std::fmt;
use std::ops::RangeInclusive;

/// What a key allows.
#[derive(Debug, Clone)]
pub(crate) enum Bound {
    /// An integer in this range.
    Int(RangeInclusive<i64>),
    /// A finite number in this range.
    Float(RangeInclusive<f32>),
    /// A finite number above 0, at most this.
    Positive(f32),
    /// Every entry a valid glob.
    Globs,
    /// Every entry a relative path inside the project (no `..`).
    InsideProject,
    /// Leg weights, each in 0..=[`bounds::FACTOR_MAX`], not all 0.
    Weights,
    /// Exactly `len` numbers, each in `range`.
    Floats { len: usize, range: RangeInclusive<f32> },
}

impl Bound {
    /// An integer range of any integer type.
    pub fn ints<T: TryInto<i64>>(range: RangeInclusive<T>) -> Bound {
        let (start, end) = range.into_inner();
        Bound::Int(start.try_into().unwrap_or(i64::MIN)..=end.try_into().unwrap_or(i64::MAX))
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bound::Int(r) => write!(f, "{}..={}", r.start(), r.end()),
            Bound::Float(r) => write!(f, "{}..={}", r.start(), r.end()),
            Bound::Positive(max) => write!(f, "above 0, at most {max}"),
            Bound::Globs => write!(f, "glob patterns"),
            Bound::InsideProject => write!(f, "relative paths inside the project"),
            Bound::Weights => write!(f, "each 0..={}, not all 0", bounds::FACTOR_MAX),
            Bound::Floats { len, range } => write!(f, "{len} numbers, each {}..={}", range.start(), range.end()),
        }
    }
}

/// A value that can be held to a [`Bound`].
pub(crate) trait Bounded {
    fn check(&self, key: &str, bound: &Bound, c: &mut Check);
}

macro_rules! bounded_int {
    ($($t:ty),*) => {$(
        impl Bounded for $t {
            fn check(&self, key: &str, bound: &Bound, c: &mut Check) {
                if let Bound::Int(range) = bound {
                    c.int(key, i64::try_from(*self).unwrap_or(i64::MAX), range.clone());
                }
            }
        }
    )*};
}
bounded_int!(usize, u64, i32);

impl Bounded for Option<usize> {
    fn check(&self, key: &str, bound: &Bound, c: &mut Check) {
        if let Some(v) = self {
            v.check(key, bound, c);
        }
    }
}

impl Bounded for f32 {
    fn check(&self, key: &str, bound: &Bound, c: &mut Check) {
        match bound {
            Bound::Float(range) => c.float(key, *self, range.clone()),
            Bound::Positive(max) => c.positive(key, *self, *max),
            _ => {}
        }
    }
}

impl Bounded for Vec<String> {
    fn check(&self, key: &str, bound: &Bound, c: &mut Check) {
        match bound {
            Bound::Globs => {
                for p in self {
                    if let Err(e) = globset::Glob::new(p) {
                        c.problems.push(format!("[{}] {key}: {p:?} is not a valid glob ({e})", c.section));
                    }
                }
            }
            // The walk joins these to the project root: an absolute path or a `..` would index
            // files outside the project.
            Bound::InsideProject => {
                for dir in self {
                    let p = std::path::Path::new(dir);
                    if p.is_absolute() || p.components().any(|c| matches!(c, std::path::Component::ParentDir)) {
                        c.problems.push(format!(
                            "[{}] {key}: {dir:?} must be a path inside the project (relative, without \"..\")",
                            c.section
                        ));
                    }
                }
            }
            _ => {}
        }
    }
}

impl Bounded for Weights {
    fn check(&self, key: &str, _: &Bound, c: &mut Check) {
        let max = bounds::FACTOR_MAX;
        c.float(&format!("{key}.vector"), self.vector, 0.0..=max);
        c.float(&format!("{key}.lexical"), self.lexical, 0.0..=max);
        c.float(&format!("{key}.symbol"), self.symbol, 0.0..=max);
        if self.vector + self.lexical + self.symbol <= 0.0 {
            c.problems.push(format!("[{}] {key}: every weight is 0; at least one must be above 0", c.section));
        }
    }
}

impl Bounded for Vec<f32> {
    fn check(&self, key: &str, bound: &Bound, c: &mut Check) {
        let Bound::Floats { len, range } = bound else { return };
        if self.len() != *len {
            c.problems.push(format!(
                "[{}] {key} has {} values: allowed {len}, one per feature of the learned fusion",
                c.section,
                self.len(),
            ));
        }
        for (i, w) in self.iter().enumerate() {
            c.float(&format!("{key}[{i}]"), *w, range.clone());
        }
    }
}

/// Collects the problems of one section.
pub(crate) struct Check {
    pub section: &'static str,
    pub problems: Vec<String>,
}

impl Check {
    pub fn new(section: &'static str) -> Check {
        Check { section, problems: Vec::new() }
    }

    fn fail(&mut self, key: &str, value: impl fmt::Display, allowed: impl fmt::Display) {
        self.problems.push(format!("[{}] {key} = {value} is out of range: allowed {allowed}", self.section));
    }

    fn int(&mut self, key: &str, value: i64, allowed: RangeInclusive<i64>) {
        if !allowed.contains(&value) {
            self.fail(key, value, format!("{}..={}", allowed.start(), allowed.end()));
        }
    }

    /// A finite float within `allowed` (NaN and infinities never are).
    fn float(&mut self, key: &str, value: f32, allowed: RangeInclusive<f32>) {
        if !value.is_finite() || !allowed.contains(&value) {
            self.fail(key, value, format!("a finite number in {}..={}", allowed.start(), allowed.end()));
        }
    }

    /// A finite float above 0, at most `max`.
    fn positive(&mut self, key: &str, value: f32, max: f32) {
        if !value.is_finite() || value <= 0.0 || value > max {
            self.fail(key, value, format!("a finite number above 0, at most {max}"));
        }
    }

    /// `low_key` must not exceed `high_key`.
    pub fn ordered(&mut self, low_key: &str, low: f32, high_key: &str, high: f32) {
        if low > high {
            self.problems.push(format!(
                "[{}] {low_key} = {low} is above {high_key} = {high}: allowed {low_key} <= {high_key}",
                self.section
            ));
        }
    }
}

/// Rules relating two keys of one section (most sections have none).
pub(crate) trait Rules {
    fn rules(&self, _c: &mut Check) {}
}

/// The number of learned-fusion weights, as a bound.
pub(crate) fn learned_weights() -> Bound {
    Bound::Floats { len: LEARNED_FEATURES, range: -1000.0..=1000.0 }
}
