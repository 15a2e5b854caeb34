//! Secrets: found in prompts (a prompt that is mostly a secret is not searched) and removed from
//! documents before they are chunked and indexed, from memory records before they reach disk, and
//! again from every string that goes into a context block. What counts as a secret is the rule
//! table in [`rules`], a documented, tested list, not a guarantee:
//!
//! - private key blocks (PEM, OpenSSH, PGP), whole from BEGIN to END, or to the end of the text
//!   or the next markup when unterminated; the tail of a key whose BEGIN line is elsewhere;
//!   base64-encoded private keys, PuTTY private lines, age keys;
//! - provider tokens by their documented shape (AWS, GitHub, GitLab, Slack, Stripe, OpenAI,
//!   Anthropic, Google, Azure, npm, PyPI, Hugging Face and many more), also when glued to a word;
//!   JSON web tokens;
//! - credentials in a known place: the password of a URL, `Authorization` headers and bearer
//!   tokens, session cookies, signed-URL signatures, command-line passwords (`mysql -p…`,
//!   `--password …`, `sshpass -p`, `redis-cli -a`, `-passout pass:`), SQL `PASSWORD '…'` and
//!   `IDENTIFIED BY '…'`, netrc and pgpass lines, connection strings;
//! - the value of a secret-named key (`password`, `secret`, `token`, `api_key`, `AccountKey`,
//!   …) in `.env`, YAML, JSON, TOML, INI, XML, code and markdown tables, and a password stated in
//!   prose ("the staging password is …").
//!
//! Not secrets: public keys and certificates, hashes, checksums and ids, placeholders
//! (`<your-key>`, `xxxx`, `***`, `your_api_key_here`, `REPLACE_ME`), references (`${VAR}`,
//! `{{ vault_x }}`, `${{ secrets.X }}`, `$(cmd)`, `op://…`) and code (`token =
//! self.next_token()`, `password = os.environ["DB_PASSWORD"]`, type names, variables).
//!
//! A span the user marks `<private>…</private>` is treated like a secret wherever text is kept
//! (it becomes `[private]`, its line breaks kept), and left out of what is searched for.
//!
//! Only the secret is replaced: the key name stays (`password = "[redacted]"`), so JSON stays
//! JSON. Redaction must run on whole texts, before anything cuts them (a token cut at 100
//! characters no longer matches its rule), and it never eats markup: a replaced span never holds
//! `<`, `>` or a raw `"`, so running it over an XML-escaped context block replaces text, never a
//! tag or an attribute's quotes. The replacement matches no rule: redaction is idempotent.

mod rules;

use std::borrow::Cow;

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
    match without_private(text, PRIVATE) {
        Cow::Borrowed(text) => redact_rules(text),
        Cow::Owned(text) => {
            let (clean, secret) = redact_rules(&text);
            (Cow::Owned(clean.into_owned()), secret)
        }
    }
}

/// What a `<private>…</private>` span becomes where text is kept: a marker, and the span's line
/// breaks, so line numbers after it still hold.
pub(crate) const PRIVATE: &str = "[private]";

/// `text` with every span the user marked `<private>…</private>` (any case; an unclosed one runs
/// to the end of the text) replaced by `marker` and the span's line breaks.
pub(crate) fn without_private<'t>(text: &'t str, marker: &str) -> Cow<'t, str> {
    static SPAN: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"(?is)<private>.*?(?:</private\s*>|\z)").expect("valid regex"));
    SPAN.replace_all(text, |c: &regex::Captures| {
        let breaks = c[0].bytes().filter(|&b| b == b'\n').count();
        format!("{marker}{}", "\n".repeat(breaks))
    })
}

fn redact_rules(text: &str) -> (Cow<'_, str>, usize) {
    let spans = rules::spans(text);
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

/// Names of the rules that find a secret (for messages; never the secret itself).
pub(crate) fn kinds(text: &str) -> Vec<&'static str> {
    rules::names(text)
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
    fn private_spans_go_whole_keep_their_line_breaks_and_run_to_the_end_when_unclosed() {
        assert_eq!(without_private("a <private>b\nc</private> d", PRIVATE), "a [private]\n d");
        assert_eq!(without_private("a <Private>b</PRIVATE > d <private>e\nf", "_"), "a _ d _\n");
        assert_eq!(without_private("nothing to hide", PRIVATE), "nothing to hide");
        assert!(matches!(without_private("no tags", PRIVATE), Cow::Borrowed(_)));
        // Redaction hides them too, before its rules run.
        assert_eq!(redacted("x <private>password = hunter2hunter2</private> y"), "x [private] y");
    }

    /// One example per family of rules (values made up for these tests), with the part that must
    /// go.
    const EXAMPLES: &[(&str, &str)] = &[
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA"),
        ("MIIEowIBAAKCAQEAvLxq0Zt0c9kq3pX0\nQ7n2h9x1==\n-----END RSA PRIVATE KEY-----", "vLxq0Zt0c9kq3pX0"),
        ("tls.key: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB", "LS0tLS1CRUdJTiBSU0Eg"),
        ("AGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQY", "QYQSZQGP"),
        ("AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
        ("ghp_0123456789abcdefghijABCDEFGHIJ012345", "0123456789abcdefghij"),
        ("the token isghp_0123456789abcdefghijABCDEFGHIJ012345", "0123456789abcdefghij"),
        ("glpat-abcdefghij0123456789", "abcdefghij0123456789"),
        ("xoxb-123456789012-abcdefghij", "123456789012-abcdefghij"),
        ("https://hooks.slack.com/services/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", "aB3dE5fG7hI9jK1lM3nO5pQ7"),
        ("sk-ant-api03-abcdefghijklmnopqrstuv", "api03-abcdefghijklmnop"),
        ("sk-proj-Ab3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5", "Ab3dE5fG7hI9jK1lM3nO5"),
        ("sk_live_0123456789abcdefABCD", "0123456789abcdefABCD"),
        ("AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", "SyA-abcdefghijklmnop"),
        ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "dozjgNryP4J3jVmNHl0w5N"),
        ("npm_Ab3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5", "Ab3dE5fG7hI9jK1lM3nO5"),
        ("hf_Ab3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3x", "Ab3dE5fG7hI9jK1lM3nO5"),
        ("SG.Ab3dE5fG7hI9jK1lM3nO5p.Ab3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7bC9d", "Ab3dE5fG7hI9jK1lM3nO5"),
        ("dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "0123456789abcdef01234"),
        ("the API keyAb3dE5fG7hI9jK1lM3nO5pQ7", "Ab3dE5fG7hI9jK1lM3nO5pQ7"),
        ("postgres://admin:hunter2hunter2@db.internal:5432/app", "hunter2hunter2"),
        ("curl -H \"Authorization: Basic dXNlcjpzM2NyM3QtcGFzcw==\" https://ci", "dXNlcjpzM2NyM3QtcGFzcw=="),
        ("Cookie: sessionid=q8Zr2Lm0Xv7Tn4Kd9Wp1Ab3dE5; theme=dark", "q8Zr2Lm0Xv7Tn4Kd9Wp1Ab3dE5"),
        ("mysql -u root -pQ7w!e9Rt_y2 -h db shop", "Q7w!e9Rt_y2"),
        ("redis-server --requirepass Zx8.Cv6!Bn4 --appendonly yes", "Zx8.Cv6!Bn4"),
        ("sshpass -p 'Lk9^Jh7.Gf5' ssh deploy@host", "Lk9^Jh7.Gf5"),
        ("openssl pkcs12 -export -passout pass:Mn3.Bv5.Cx7", "Mn3.Bv5.Cx7"),
        ("CREATE USER app WITH PASSWORD 'Po0.Iu9.Yt8';", "Po0.Iu9.Yt8"),
        ("machine api.example.com login ci password Qa1.Ws2-Ed3", "Qa1.Ws2-Ed3"),
        ("\ndb.example.com:5432:orders:app:Rf4-Tg5.Yh6\n", "Rf4-Tg5.Yh6"),
        ("Server=tcp:sql;User ID=app;Password=Uj7_Ik8!Ol9;Encrypt=True;", "Uj7_Ik8!Ol9"),
        ("password = \"correct-horse-battery\"", "correct-horse-battery"),
        ("API_KEY: abcdef0123456789", "abcdef0123456789"),
        ("POSTGRES_PASSWORD=postgres", "postgres"),
        ("const API_KEY: &str = \"q8Zr2Lm0Xv7Tn4Kd9Wp1\";", "q8Zr2Lm0Xv7Tn4Kd9Wp1"),
        ("{\"content\":\"HOST=db\\nAPI_TOKEN=Zk2mQ8pL0xR7tW4nV9bC\\nDEBUG=1\"}", "Zk2mQ8pL0xR7tW4nV9bC"),
        ("<password>Pl0!Ok9.Ij8</password>", "Pl0!Ok9.Ij8"),
        ("| DB_PASSWORD | `Hy6-Gt5.Fr4` | prod |", "Hy6-Gt5.Fr4"),
        ("The wifi password is Wq2^Er4-Ty6", "Wq2^Er4-Ty6"),
    ];

    #[test]
    fn every_rule_family_catches_its_example_and_keeps_the_rest() {
        for (example, part) in EXAMPLES {
            let text = format!("before {example} after");
            let (out, n) = redact(&text);
            assert!(n > 0 && out.contains(REDACTED) && !out.contains(part), "{example:?} not caught: {out}");
            assert!(out.starts_with("before ") && out.ends_with(" after"), "{out}");
            assert!(!kinds(&text).is_empty(), "{example:?}");
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
            "commit 3a37dfe702393e0fa6c8bbc2a299e490bbed2cf3",
            "checksum = \"dfc8df07413df4f73ef8c9fcd698014efb68fefd19ae3e8e5df28fb36d4e020e\"",
            "integrity sha512-lIvu1hWcyzI/Hp4LwIv0RKvBolsnAVCqlZPE7fPcfbC48CKLOXmWIfWZ4LGBShVqqyjvIsjI6pZOgWljziaFzg==",
            "request_id=6c03c21b-b00f-4a9e-aa3f-e546dae72c16",
            "max_tokens=4096",
            "mysql -u admin -p orders",
            "ssh -p 2200 ops@192.0.2.10",
            "git@gitlab.com:team/app.git",
            "https://dev@git.example.org/team/app.git",
            "The password is hashed with Argon2id and salted per user.",
            "[sudo] password for dev:",
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIpessC6WL7tYMc97BpDB7tq3gBSGlhzfJ4YTl9CMpqdg dev@workstation",
            "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAL2NFbIhq3hRiTi9YLEN2f//H0GpJdy1ThHtxHobLhss=\n-----END PUBLIC KEY-----",
            "-----BEGIN CERTIFICATE-----\nMIIDbDCCAlSgAwIBAgIURtAY2TY7AfQX4HSlVGiLyNXZ2Ksu9gZa2Chaj6+Syok3\n-----END CERTIFICATE-----",
            "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
            "public_key = \"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIRnIQxj0bysbrw/CW7jNL6WhG4FQRpbWEEruUClCQRA deployer\"",
            "PublicKey = A2nd5efGQWr3Aw4YPAVPHxivj5P879tZUMd0m6Cntp0=",
        ] {
            assert_eq!(redact(t), (t.to_string(), 0), "{t}");
        }
    }

    #[test]
    fn placeholders_and_references_are_not_secrets() {
        for t in [
            "API_KEY=xxxxxxxx",
            "token: ***",
            "OPENAI_API_KEY=your_api_key_here",
            "SECRET_KEY=REPLACE_ME",
            "GITHUB_TOKEN=<your-token>",
            "password = \"********\"",
            "STRIPE_SECRET_KEY=sk_live_...",
            "password: \"[REDACTED]\"",
            "DB_PASSWORD=",
            "api_key: null",
            "Authorization: Bearer $TOKEN",
            "amqp://<user>:<password>@localhost:5672/",
            "redis://${REDIS_USER}:${REDIS_PASSWORD}@${REDIS_HOST}:6379",
            "PASSWORD=${DB_PASSWORD}",
            "password: \"{{ vault_db_password }}\"",
            "token: ${{ secrets.GITHUB_TOKEN }}",
            "password = %(DB_PASSWORD)s",
            "export API_TOKEN=$(op read op://Team/ci/token)",
            "password: op://Vault/db/password",
            "secret: !Ref AppSecretArn",
            "password_file: /run/secrets/db_password",
            "PWD=/home/dev/project",
        ] {
            assert_eq!(redact(t), (t.to_string(), 0), "{t}");
        }
    }

    #[test]
    fn keys_are_cut_at_their_end_line_and_tails_are_caught() {
        let key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----";
        let (out, _) = redact(&format!("intro\n{key}\nafter the key"));
        assert_eq!(out, format!("intro\n{REDACTED}\nafter the key"));
        // The tail of a key whose BEGIN line is in another chunk, its short last line included.
        let tail =
            "MIIEowIBAAKCAQEAvLxq0Zt0c9kq3pX0\nQ7n2h9x1b3BlbnNzaC1rZXktdjEAAAAA==\nEr2pD==\n-----END RSA PRIVATE KEY-----\nnext";
        assert_eq!(redact(tail).0, format!("{REDACTED}\nnext"));
        // Unterminated: to the end of the text, or to the next markup, never past it.
        let block = "<result>\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0\n</result>\n</memory-context>";
        assert_eq!(redact(block).0, format!("<result>\n{REDACTED}</result>\n</memory-context>"));
        assert_eq!(redact("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIDiRCWcB4m0n").0, REDACTED);
    }

    #[test]
    fn assignments_never_eat_markup_and_code_is_not_a_secret() {
        let block = "<result title=\"x\">password=hunter2hunter2</result>";
        assert_eq!(redact(block).0, format!("<result title=\"x\">password={REDACTED}</result>"));
        let attr = "<memory-compact title=\"token: abcdefgh1234\"/>";
        assert_eq!(redact(attr).0, format!("<memory-compact title=\"token: {REDACTED}\"/>"));
        // JSON stays JSON: only the value goes.
        let json = r#"{"api_key": "abcdef0123456789", "key": "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n", "password": "a\"b"}"#;
        let out = redact(json).0;
        let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        assert_eq!(v["api_key"], REDACTED);
        assert_eq!(v["key"], format!("{REDACTED}\n"));
        assert!(!out.contains("a\\\"b"), "{out}");
        let escaped = redact("{&quot;api_key&quot;: &quot;abcdef0123456789&quot;}").0;
        assert_eq!(escaped, format!("{{&quot;api_key&quot;: &quot;{REDACTED}&quot;}}"));
        for code in [
            "token = self.next_token()",
            "password = os.environ[\"DB_PASSWORD\"]",
            "let token = lexer.next_token(&mut state);",
            "self.password = None",
            "api_key = config.OPENAI_KEY",
            "pub api_key: Option<SecretString>,",
            "def connect(host: str, password: str) -> Conn:",
            "return {\"token\": token, \"user\": user.id}",
            "key = serialization.load_pem_private_key(pem, password=None)",
            "const token = await fetchToken(user);",
            "Kind::Secret => self.mask(token),",
            "headers: { Authorization: `Bearer ${accessToken}` },",
        ] {
            assert_eq!(redact(code), (code.to_string(), 0), "{code}");
        }
        // Idempotent: the replacement matches nothing.
        for text in ["password = correct-horse-battery", "PASSWORD=\"a b c\"", "<password>x1!</password>", json] {
            let once = redact(text).0;
            assert_eq!(redact(&once), (once.clone(), 0));
        }
    }

    #[test]
    fn a_prompt_that_is_mostly_a_secret_is_recognised() {
        assert!(mostly_secret("ghp_0123456789abcdefghijABCDEFGHIJ012345"));
        assert_eq!(kinds("ghp_0123456789abcdefghijABCDEFGHIJ012345"), ["GitHub token"]);
        assert!(mostly_secret("here: sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"));
        assert!(!mostly_secret("why does login fail when the token sk-ant-api03-abcdefghijklmnopqrstuv expires after the session store moved to redis last march"));
        assert!(!mostly_secret("   "));
    }
}
