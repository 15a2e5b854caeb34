//! Secret-looking strings: found in prompts (a prompt that is mostly a secret is not searched) and
//! removed from documents before they are chunked and indexed, and again from every string that
//! goes into a context block. The patterns are a documented, tested list, not a guarantee: they
//! catch the common token formats, private keys (whole, or the tail of one), passwords in URLs and
//! `password = …` style assignments.
//!
//! Redaction must run on whole texts, before anything cuts them (a token cut at 100 characters
//! no longer matches its pattern), and it must never eat markup: no pattern matches `<` or `>`,
//! and a `"` only as the quote right before or after the `:`/`=` of an assignment to a secret-named
//! key. In an escaped XML block a raw `"` only delimits an attribute, and no attribute is named
//! like a secret, so running redaction over a block replaces text, never a tag or a quote.

use regex::Regex;
use std::borrow::Cow;
use std::sync::LazyLock;

/// (name, lowercase literals one of which any match contains, pattern). The literals are a cheap
/// prefilter: the hook runs in a fresh process per prompt, and compiling every pattern each time
/// cost more than the rest of the hook's own work.
pub(crate) const PATTERNS: &[(&str, &[&str], &str)] = &[
    // Up to the END line; an unterminated key runs to the end of the text or the next markup.
    // The END line is found in code (`redact`), so the match never runs past it.
    ("private key", &["-----begin"], r#"-----BEGIN [A-Z ]*PRIVATE KEY-----[^<>"]*"#),
    // The tail of a key whose BEGIN line is elsewhere (a file cut in two, a pasted fragment).
    ("private key tail", &["-----end"], r"(?:[A-Za-z0-9+/=]{16,}\s*)+-----END [A-Z ]*PRIVATE KEY-----"),
    ("AWS access key id", &["akia", "asia", "agpa", "aida", "aroa"], r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"),
    ("GitHub token", &["gh", "github_pat_"], r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b"),
    ("GitLab token", &["glpat-"], r"\bglpat-[A-Za-z0-9_-]{20,}\b"),
    ("Slack token", &["xox"], r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b"),
    ("Anthropic/OpenAI key", &["sk-"], r"\bsk-(?:ant-)?[A-Za-z0-9_-]{20,}\b"),
    ("Stripe key", &["_live_", "_test_"], r"\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}\b"),
    ("Google API key", &["aiza"], r"\bAIza[0-9A-Za-z_-]{35}\b"),
    ("JSON web token", &["eyj"], r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("password in URL", &["://"], r#"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@<>"]+:[^@\s/<>"]+@"#),
    // `password = hunter2hunter2`, `"api_key": "…"` (JSON, also once escaped as `&quot;`). Only
    // the value (the group) is replaced, so a JSON record stays valid JSON. A value followed by
    // `(` or `[` is code (`token = self.next_token()`), not a secret: see `spans`.
    (
        "secret assignment",
        &["pass", "pwd", "secret", "key", "token"],
        r#"(?i)\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?key|auth[_-]?token|token|client[_-]?secret)\b(?:"|'|&quot;|&apos;)?\s*[:=]\s*(?:"|'|&quot;|&apos;)?([^\s"'<>()\[\]]{8,})"#,
    ),
];

/// Index of the private-key pattern, whose matches are cut at their END line.
const PRIVATE_KEY: usize = 0;
/// Index of the assignment pattern: only its value is secret, and not when it is code.
const ASSIGNMENT: usize = PATTERNS.len() - 1;

static REGEXES: LazyLock<Vec<std::sync::OnceLock<Regex>>> =
    LazyLock::new(|| PATTERNS.iter().map(|_| std::sync::OnceLock::new()).collect());
static KEY_END: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"-----END [A-Z ]*PRIVATE KEY-----").expect("valid pattern"));

/// The patterns whose prefilter the text passes, compiled on first use: (index, name, regex).
fn candidates(text: &str) -> impl Iterator<Item = (usize, &'static str, &'static Regex)> {
    let lower = text.to_ascii_lowercase();
    PATTERNS.iter().enumerate().filter(move |(_, (_, lits, _))| lits.iter().any(|l| lower.contains(l))).map(
        |(i, (name, _, pattern))| {
            (i, *name, REGEXES[i].get_or_init(|| Regex::new(pattern).expect("valid secret pattern")))
        },
    )
}

/// The byte spans of `text` that are secret, sorted and merged.
fn spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for (i, _, re) in candidates(text) {
        if i == ASSIGNMENT {
            for value in re.captures_iter(text).filter_map(|c| c.get(1)) {
                if !matches!(text[value.end()..].chars().next(), Some('(' | '[')) {
                    spans.push((value.start(), value.end()));
                }
            }
            continue;
        }
        for m in re.find_iter(text) {
            let (s, mut e) = (m.start(), m.end());
            if i == PRIVATE_KEY {
                if let Some(end) = KEY_END.find(m.as_str()) {
                    e = s + end.end();
                }
            }
            spans.push((s, e));
        }
    }
    spans.sort();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (s, e) in spans {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    merged
}

/// The replacement for a secret.
pub(crate) const REDACTED: &str = "[redacted]";

/// `text` with every secret-looking span replaced, and how many bytes were secret.
pub(crate) fn redact(text: &str) -> (String, usize) {
    match redact_counted(text) {
        (Cow::Borrowed(t), _) => (t.to_string(), 0),
        (Cow::Owned(t), n) => (t, n),
    }
}

/// [`redact`] without a copy when nothing is secret.
pub fn redacted(text: &str) -> Cow<'_, str> {
    redact_counted(text).0
}

/// [`redact`] for a text the caller owns: no copy when nothing is secret.
pub(crate) fn redact_owned(text: String) -> String {
    match redacted(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(clean) => clean,
    }
}

fn redact_counted(text: &str) -> (Cow<'_, str>, usize) {
    let spans = spans(text);
    if spans.is_empty() {
        return (Cow::Borrowed(text), 0);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let mut secret = 0;
    for (s, e) in spans {
        out.push_str(&text[at..s]);
        out.push_str(REDACTED);
        secret += e - s;
        at = e;
    }
    out.push_str(&text[at..]);
    (Cow::Owned(out), secret)
}

/// Names of the patterns that match (for messages; never the secret itself).
pub(crate) fn kinds(text: &str) -> Vec<&'static str> {
    candidates(text).filter(|(_, _, r)| r.is_match(text)).map(|(_, n, _)| n).collect()
}

/// Whether most of the text (by non-whitespace bytes) is secret.
pub(crate) fn mostly_secret(text: &str) -> bool {
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
    fn keys_are_cut_at_their_end_line_and_tails_are_caught() {
        let key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----";
        let (out, _) = redact(&format!("intro\n{key}\nafter the key"));
        assert_eq!(out, format!("intro\n{REDACTED}\nafter the key"));
        // The tail of a key whose BEGIN line is in another chunk.
        let tail =
            "MIIEowIBAAKCAQEAvLxq0Zt0c9kq3pX0\nQ7n2h9x1b3BlbnNzaC1rZXktdjEAAAAA==\n-----END RSA PRIVATE KEY-----\nnext";
        assert_eq!(redact(tail).0, format!("{REDACTED}\nnext"));
        // Unterminated: to the end of the text, or to the next markup, never past it.
        let block = "<result>\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0\n</result>\n</memory-context>";
        assert_eq!(redact(block).0, format!("<result>\n{REDACTED}</result>\n</memory-context>"));
    }

    #[test]
    fn assignments_never_eat_markup_and_code_is_not_a_secret() {
        let block = "<result title=\"x\">password=hunter2hunter2</result>";
        assert_eq!(redact(block).0, format!("<result title=\"x\">password={REDACTED}</result>"));
        let attr = "<memory-compact title=\"token: abcdefgh1234\"/>";
        assert_eq!(redact(attr).0, format!("<memory-compact title=\"token: {REDACTED}\"/>"));
        // JSON stays JSON: only the value goes.
        let json = r#"{"api_key": "abcdef0123456789", "key": "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n"}"#;
        let out = redact(json).0;
        let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        assert_eq!(v["api_key"], REDACTED);
        assert_eq!(v["key"], format!("{REDACTED}\n"));
        let escaped = redact("{&quot;api_key&quot;: &quot;abcdef0123456789&quot;}").0;
        assert!(escaped.contains(REDACTED) && !escaped.contains("abcdef0123456789"), "{escaped}");
        for code in [
            "token = self.next_token()",
            "password = os.environ[\"DB_PASSWORD\"]",
            "let token = lexer.next_token(&mut state);",
        ] {
            assert_eq!(redact(code), (code.to_string(), 0), "{code}");
        }
        // Idempotent: the replacement matches nothing.
        let once = redact("password = correct-horse-battery").0;
        assert_eq!(redact(&once), (once.clone(), 0));
    }

    #[test]
    fn a_prompt_that_is_mostly_a_secret_is_recognised() {
        assert!(mostly_secret("ghp_0123456789abcdefghijABCDEFGHIJ012345"));
        assert!(mostly_secret("here: sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"));
        assert!(!mostly_secret("why does login fail when the token sk-ant-api03-abcdefghijklmnopqrstuv expires after the session store moved to redis last march"));
        assert!(!mostly_secret("   "));
    }
}
