//! Secret-looking strings: found in prompts (a prompt that is mostly a secret is not searched) and
//! removed from every context block the hook prints. The patterns are a documented, tested list,
//! not a guarantee: they catch the common token formats, private keys, passwords in URLs and
//! `password = …` style assignments.

use regex::Regex;
use std::sync::LazyLock;

/// (name, lowercase literals one of which any match contains, pattern). The literals are a cheap
/// prefilter: the hook runs in a fresh process per prompt, and compiling every pattern each time
/// cost more than the rest of the hook's own work.
pub const PATTERNS: &[(&str, &[&str], &str)] = &[
    (
        "private key",
        &["-----begin"],
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z ]*PRIVATE KEY-----|\z)",
    ),
    ("AWS access key id", &["akia", "asia", "agpa", "aida", "aroa"], r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"),
    ("GitHub token", &["gh", "github_pat_"], r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b"),
    ("GitLab token", &["glpat-"], r"\bglpat-[A-Za-z0-9_-]{20,}\b"),
    ("Slack token", &["xox"], r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b"),
    ("Anthropic/OpenAI key", &["sk-"], r"\bsk-(?:ant-)?[A-Za-z0-9_-]{20,}\b"),
    ("Stripe key", &["_live_", "_test_"], r"\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}\b"),
    ("Google API key", &["aiza"], r"\bAIza[0-9A-Za-z_-]{35}\b"),
    ("JSON web token", &["eyj"], r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("password in URL", &["://"], r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]+:[^@\s/]+@"),
    (
        "secret assignment",
        &["pass", "pwd", "secret", "key", "token"],
        r#"(?i)\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?key|auth[_-]?token|token|client[_-]?secret)\b\s*[:=]\s*["']?[^\s"']{8,}"#,
    ),
];

static REGEXES: LazyLock<Vec<std::sync::OnceLock<Regex>>> =
    LazyLock::new(|| PATTERNS.iter().map(|_| std::sync::OnceLock::new()).collect());

/// The patterns whose prefilter the text passes, compiled on first use.
fn candidates(text: &str) -> impl Iterator<Item = (&'static str, &'static Regex)> {
    let lower = text.to_ascii_lowercase();
    PATTERNS.iter().enumerate().filter(move |(_, (_, lits, _))| lits.iter().any(|l| lower.contains(l))).map(
        |(i, (name, _, pattern))| {
            (*name, REGEXES[i].get_or_init(|| Regex::new(pattern).expect("valid secret pattern")))
        },
    )
}

/// The replacement for a secret.
pub const REDACTED: &str = "[redacted]";

/// `text` with every secret-looking span replaced, and how many bytes were secret.
pub fn redact(text: &str) -> (String, usize) {
    let mut spans: Vec<(usize, usize)> =
        candidates(text).flat_map(|(_, r)| r.find_iter(text).map(|m| (m.start(), m.end()))).collect();
    if spans.is_empty() {
        return (text.to_string(), 0);
    }
    spans.sort();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (s, e) in spans {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let mut secret = 0;
    for (s, e) in merged {
        out.push_str(&text[at..s]);
        out.push_str(REDACTED);
        secret += e - s;
        at = e;
    }
    out.push_str(&text[at..]);
    (out, secret)
}

/// Names of the patterns that match (for messages; never the secret itself).
pub fn kinds(text: &str) -> Vec<&'static str> {
    candidates(text).filter(|(_, r)| r.is_match(text)).map(|(n, _)| n).collect()
}

/// Whether most of the text (by non-whitespace bytes) is secret.
pub fn mostly_secret(text: &str) -> bool {
    mostly(text, redact(text).1)
}

/// [`mostly_secret`] for a text whose secret bytes [`redact`] already counted.
pub fn mostly(text: &str, secret_bytes: usize) -> bool {
    let solid = text.bytes().filter(|b| !b.is_ascii_whitespace()).count();
    solid > 0 && secret_bytes * 2 > solid
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_catches_its_example_and_keeps_the_rest() {
        let examples = [
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
            "AKIAIOSFODNN7EXAMPLE",
            "ghp_0123456789abcdefghijABCDEFGHIJ012345",
            "glpat-abcdefghij0123456789",
            "xoxb-123456789012-abcdefghij",
            "sk-ant-api03-abcdefghijklmnopqrstuv",
            "sk_live_0123456789abcdefABCD",
            "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
            "postgres://admin:hunter2hunter2@db.internal:5432/app",
            "password = \"correct-horse-battery\"",
            "API_KEY: abcdef0123456789",
        ];
        for e in examples {
            let text = format!("before {e} after");
            let (out, n) = redact(&text);
            assert!(n > 0 && out.contains(REDACTED), "{e:?} not caught: {out}");
            assert!(out.starts_with("before ") && out.ends_with(" after") || out.ends_with(REDACTED), "{out}");
            assert!(!kinds(&text).is_empty());
        }
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        for t in [
            "why did we switch the session store?",
            "the password reset flow sends an email",
            "token bucket rate limiter in redis",
            "see https://docs.rs/tantivy/latest and skip_list",
            "fn parse_config(path: &Path) -> Result<Config>",
        ] {
            assert_eq!(redact(t), (t.to_string(), 0), "{t}");
        }
    }

    #[test]
    fn a_prompt_that_is_mostly_a_secret_is_recognised() {
        assert!(mostly_secret("ghp_0123456789abcdefghijABCDEFGHIJ012345"));
        assert!(mostly_secret("here: sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"));
        assert!(!mostly_secret("why does login fail when the token sk-ant-api03-abcdefghijklmnopqrstuv expires after the session store moved to redis last march"));
        assert!(!mostly_secret("   "));
    }
}
