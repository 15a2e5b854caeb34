//! The secret rules behind [`super::redact`]: a table of named rules, each a regular expression,
//! the lowercase literals one of which any of its matches contains, a finder that turns matches
//! into the byte spans that are secret (often a capture group, after checks in code: the `regex`
//! crate has no lookaround), and for some a gate (below).
//!
//! The rules, in table order:
//! - key material: private key blocks (BEGIN to END, or to the end of the text or the next `<`
//!   when unterminated), the tail of a block whose BEGIN line is elsewhere, base64-encoded
//!   private keys, PuTTY private lines, age keys;
//! - provider token shapes: a distinctive prefix, alphabet and length (gitleaks style). Most need
//!   no word boundary before them, so a token glued to a word (`tokenghp_…`) is still found;
//! - credentials in a known position: URL userinfo, `Authorization` headers, cookies, signature
//!   query parameters, command-line passwords, SQL `PASSWORD '…'`, netrc, pgpass;
//! - a label glued to a random token (`API keyAQVN…`);
//! - a value given to a secret-named key (`password = …`, `"api_key": "…"`, `--token …`,
//!   `<password>…`, ``| DB_PASSWORD | `…` |``), and a password or token stated in prose. The
//!   key's last word sets how sure the value must look: any literal for a password, a token-like
//!   one for a token or an API key. Quoted literals are values; bare ones unless they read as code
//!   (a call, an index, a path like `settings.API_KEY`, a keyword or type name), a reference
//!   (`${VAR}`, `{{ x }}`, `$(cmd)`, `op://…`) or a placeholder (`xxxx`, `<your-key>`,
//!   `your_api_key_here`, `[redacted]`).
//!
//! Spans never contain `<`, `>` or a raw `"` (they are cut around them), so redacting an
//! XML-escaped context block replaces text and never a tag or an attribute's quotes; only the
//! value of an assignment goes, so a key name stays and JSON stays JSON. The replacement matches
//! no rule, which keeps redaction idempotent.
//!
//! Speed: the hook runs in a fresh process for every prompt, so a rule's expression is compiled
//! (once) only when the text holds one of its literals and, for short texts, passes the rule's
//! gate, a cheap check that is true wherever the expression could find something (`password`
//! followed by a separator, not merely the word). Long texts find their literals in one pass.

use aho_corasick::{AhoCorasick, AhoCorasickKind};
use regex::{Captures, Regex};
use std::sync::{LazyLock, OnceLock};

/// Byte spans `[start, end)` of secret text.
type Spans = Vec<(usize, usize)>;
/// Turns the matches of a rule's expression in a text into secret spans.
type Find = fn(&str, &Regex, &mut Spans);
/// A cheap check on the text and its lowercase copy, true whenever the expression could find a
/// secret: it spares compiling the expression for ordinary text that holds a common literal.
type Gate = fn(&str, &str) -> bool;

struct Rule {
    name: &'static str,
    /// Lowercase literals, one of which the text must contain for the rule to run.
    lits: &'static [&'static str],
    pattern: &'static str,
    find: Find,
    gate: Gate,
}

const fn rule(name: &'static str, lits: &'static [&'static str], pattern: &'static str, find: Find) -> Rule {
    Rule { name, lits, pattern, find, gate: |_, _| true }
}

impl Rule {
    const fn gated(self, gate: Gate) -> Rule {
        Rule { gate, ..self }
    }
}

/// A value as written after `=`, `:` or a flag: quoted (the group stops at the closing quote) or
/// bare (up to whitespace). Finders that use it judge the value in code.
macro_rules! value {
    () => {
        r#"('[^'\n]*'|"[^"\n]*"|[^\s'"<>]+)"#
    };
}

const RULES: &[Rule] = &[
    // ---- key material ----
    rule("private key", &["-----begin", "---- begin"], r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|---- BEGIN[ A-Z0-9]*PRIVATE KEY ----", pem_block),
    rule(
        "private key tail",
        &["-----end"],
        r"(?:[A-Za-z0-9+/=]{16,}(?:\s|\\[rn])+)*(?:[A-Za-z0-9+/=]+(?:\s|\\[rn])+)?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----",
        pem_tail,
    ),
    // `-----BEGIN ` in base64 (a Kubernetes `tls.key`, a kubeconfig `client-key-data`).
    rule("encoded private key", &["ls0tls1crudjti"], r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,}={0,2}", encoded_pem),
    rule(
        "PuTTY private key",
        &["private-lines"],
        r"Private-Lines:[ \t]*[0-9]+[ \t]*\r?\n((?:[ \t]*[A-Za-z0-9+/=]+[ \t]*(?:\r?\n|$))+)",
        group,
    ),
    rule("age secret key", &["age-secret-key-1"], r"AGE-SECRET-KEY-1[0-9A-Z]{58}", whole),
    // ---- provider token shapes ----
    rule(
        "AWS access key id",
        &["akia", "asia", "abia", "acca", "agpa", "aida", "aipa", "anpa", "anva", "aroa", "apka", "a3t"],
        r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA)[A-Z0-9]{16}",
        token,
    ),
    rule(
        "AWS secret access key",
        &["akia", "asia"],
        r#"(?:AKIA|ASIA)[A-Z0-9]{16}["']?[ \t]*[,:][ \t]*["']?([A-Za-z0-9/+]{40})"#,
        token,
    ),
    rule(
        "AWS secret access key",
        &["secret"],
        r#"(?i-u:aws[ _-]?secret[ _-]?access[ _-]?key)[^:=\n]{0,16}[:=][ \t]*["']?([A-Za-z0-9/+]{40})"#,
        token,
    )
    .gated(|_, l| l.contains("aws")),
    rule("AWS Bedrock key", &["absk"], r"ABSK[A-Za-z0-9+/]{100,400}={0,2}", unglued),
    rule("GitHub token", &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"], r"gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255}", token),
    rule(
        "GitLab token",
        &[
            "glpat-", "gldt-", "glptt-", "glcbt-", "glft-", "glsoat-", "gloas-", "glrt-", "glrtr-", "glagent-", "glimt-",
            "glffct-", "glwt-", "gr1348941",
        ],
        r"gl(?:pat|dt|ptt|cbt|ft|soat|oas|rt|rtr|agent|imt|ffct|wt)-[A-Za-z0-9_.\-]{20,}|GR1348941[A-Za-z0-9_\-]{20,}",
        token,
    ),
    rule(
        "Slack token",
        &["xox", "xapp-"],
        r"(?:xoxe\.)?xox[abposrec]-[A-Za-z0-9\-]{10,}|xapp-[0-9]-[A-Za-z0-9]+-[0-9]+-[A-Za-z0-9]+",
        token,
    ),
    rule(
        "Slack webhook",
        &["hooks.slack.com"],
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9]+/[A-Za-z0-9]+/(?:[0-9]+/)?([0-9]*[A-Za-z][A-Za-z0-9]{15,})",
        group,
    ),
    rule("Stripe key", &["_live_", "_test_", "_prod_", "whsec_"], r"(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9+/]{24,}", token),
    rule(
        "Anthropic key",
        &["sk-ant-"],
        r"sk-ant-(?:api|admin|oat|ort|sid)[0-9]{2}-[A-Za-z0-9_\-]{20,}|sk-ant-[A-Za-z0-9_\-]{24,}",
        token,
    ),
    rule(
        "OpenAI key",
        &["sk-"],
        r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}|sk-[A-Za-z0-9_\-]{16,}T3BlbkFJ[A-Za-z0-9_\-]{16,}|\bsk-[A-Za-z0-9]{32,}",
        token,
    ),
    rule("Google API key", &["aiza"], r"AIza[0-9A-Za-z_\-]{35}", token),
    rule(
        "Google OAuth secret",
        &["gocspx-", "ya29.", "apa91b"],
        r"GOCSPX-[A-Za-z0-9_\-]{24,}|ya29\.[A-Za-z0-9_\-]{30,}|AAAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{60,}",
        token,
    ),
    rule("Google OAuth secret", &["1//0"], r"1//0[A-Za-z0-9_\-]{40,}", unglued),
    rule(
        "JSON web token",
        &["eyj"],
        r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*|(?:sk|ops|sntrys)[._]eyJ[A-Za-z0-9_+/\-]{20,}(?:\.[A-Za-z0-9_\-]+)*={0,2}|eyJrIjoi[A-Za-z0-9+/]{30,}={0,2}|eyJhdXRocyI6[A-Za-z0-9+/]{20,}={0,2}|ewogICJhdXRocyI6[A-Za-z0-9+/]{20,}={0,2}",
        whole,
    ),
    rule(
        "Azure AD client secret",
        &["q~"],
        r"[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}",
        token,
    ),
    rule(
        "Azure function key",
        &["azurewebsites.net"],
        r#"\.azurewebsites\.net/[^\s?"'<>]*\?(?:[^\s#"'<>]*&)?code=([A-Za-z0-9_\-]{20,}={0,2})"#,
        group,
    ),
    rule("npm token", &["npm_"], r"npm_[A-Za-z0-9]{36}", token),
    rule("PyPI token", &["pypi-age"], r"pypi-AgE[A-Za-z0-9_\-]{50,}", token),
    rule("Hugging Face token", &["hf_", "api_org_"], r"hf_[A-Za-z0-9]{34,}|api_org_[A-Za-z0-9]{34}", token),
    rule(
        "package registry token",
        &["rubygems_", "clojars_", "dckr_pat_", "oy2", "akcp", "cmvmd", "pul-"],
        r"rubygems_[a-f0-9]{48}|CLOJARS_[a-z0-9]{60}|dckr_pat_[A-Za-z0-9_\-]{27,}|oy2[a-z0-9]{43}\b|AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59}\b|pul-[a-f0-9]{40}",
        token,
    ),
    rule("SendGrid key", &["sg."], r"SG\.[A-Za-z0-9_\-]{20,24}\.[A-Za-z0-9_\-]{39,50}", token)
        .gated(|t, _| t.contains("SG.")),
    rule("Twilio key", &["ac", "sk"], r"\b(?:AC|SK)[a-f0-9]{32}\b", whole)
        .gated(twilio_sid),
    rule("Twilio auth token", &["ac"], r#"\bAC[a-f0-9]{32}["']?[ \t]*[,:][ \t]*["']?([a-f0-9]{32})\b"#, group)
        .gated(twilio_sid),
    rule(
        "mail service key",
        &["key-", "xkeysib-", "xsmtpsib-"],
        r"key-[a-f0-9]{32}\b|xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}|xsmtpsib-[a-f0-9]{64}-[A-Za-z0-9]{16}",
        whole,
    ),
    rule("mail service key", &["-us"], r"[a-f0-9]{32}-us[0-9]{1,2}\b", whole),
    rule("Heroku key", &["hrku-"], r"HRKU-[A-Za-z0-9_\-]{20,}", token),
    rule("DigitalOcean token", &["_v1_"], r"do[opr]_v1_[a-f0-9]{64}", token),
    rule("Shopify token", &["shpat_", "shpca_", "shppa_", "shpss_"], r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", token),
    rule(
        "Discord bot token",
        &["."],
        r"[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6,7}\.[A-Za-z0-9_\-]{27,40}",
        token,
    )
    .gated(dotted_token),
    rule(
        "Discord webhook",
        &["/api/webhooks/"],
        r"discord(?:app)?\.com/api/webhooks/[0-9]+/([A-Za-z0-9_\-]{40,})",
        group,
    ),
    rule("Telegram bot token", &[":aa"], r"[0-9]{8,10}:AA[A-Za-z0-9_\-]{30,40}", telegram),
    rule(
        "Grafana token",
        &["glsa_", "glc_"],
        r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2}",
        token,
    ),
    rule(
        "1Password key",
        &["a3-"],
        r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b",
        whole,
    ),
    rule("Vault token", &["hvs.", "hvb.", "hvr."], r"hv[sbr]\.[A-Za-z0-9_\-]{24,}", token),
    rule("Terraform Cloud token", &[".atlasv1."], r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,}", token),
    rule(
        "service API token",
        &[
            "p8e-", "aio_", "ltai", "atatt3", "atbb", "v1.0-", "dapi", "dp.pt.", "dp.st.", "dp.ct.", "dp.sa.", "dp.scim.",
            "dp.audit.", "duffel_", "dt0c01.", "ezak", "eztk", "flwseck", "fo1_", "fio-u-", "ico-", "s-s4t2", "lin_api_",
            "nrak-", "nrii-", "nrjs-", "nrra-", "ntn_", "sha256~", "pplx-", "pscale_", "pmak-", "pnu_", "rdme_", "tk-us-",
            "sntryu_", "sm_pat_", "sm_aat_", "sm_sat_", "shippo_", "sgp_", "squ_", "sqp_", "sqa_", "tfp_", "gsk_", "xai-",
            "r8_", "pcsk_", "lsv2_", "sbp_", "sb_secret_", "nfp_", "bkua_", "ccipat_", "tskey-", "rnd_", "sq0",
            "access-sandbox-", "access-development-", "access-production-", "pat-na", "pat-eu", "pat-ap", "sl.",
            ".acc_", ".acc-", "pat.", "dnkey-", "_mmk",
        ],
        concat!(
            r"p8e-[A-Za-z0-9]{32}|aio_[A-Za-z0-9]{28}\b|LTAI[A-Za-z0-9]{20}\b",
            r"|ATATT3[A-Za-z0-9_\-=]{150,}|ATBB[A-Za-z0-9_=.\-]{32,}|v1\.0-[a-f0-9]{24}-[a-f0-9]{146}",
            r"|dapi[a-f0-9]{32}(?:-[0-9])?\b|dp\.(?:pt|st|ct|sa|scim|audit)(?:\.[a-z0-9_\-]{2,35})?\.[A-Za-z0-9]{40,44}\b",
            r"|duffel_(?:test|live)_[A-Za-z0-9_\-=]{43}|dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}|EZ[AT]K[A-Za-z0-9]{54}",
            r"|FLWSECK(?:_TEST)?-[a-h0-9]{32}-X|fo1_[A-Za-z0-9_\-]{43}|fio-u-[A-Za-z0-9_=\-]{64}|ico-[A-Za-z0-9]{32}\b",
            r"|s-s4t2(?:ud|af)-[a-f0-9]{64}|lin_api_[A-Za-z0-9]{40}|NR(?:AK|II|JS|RA)-[A-Za-z0-9_\-]{27,32}",
            r"|ntn_[0-9]{11}[A-Za-z0-9]{35}|sha256~[A-Za-z0-9_\-]{43}|pplx-[A-Za-z0-9]{48}",
            r"|pscale_(?:tkn|pw|oauth)_[A-Za-z0-9=\-_.]{32,64}|PMAK-[a-f0-9]{24}-[a-f0-9]{34}|pnu_[A-Za-z0-9]{36}",
            r"|rdme_[a-z0-9]{70}|tk-us-[A-Za-z0-9_\-]{48}|sntryu_[a-f0-9]{64}|sm_(?:pat|aat|sat)_[A-Za-z0-9]{16}\b",
            r"|shippo_(?:live|test)_[a-f0-9]{40}|sgp_(?:[a-f0-9]{16}_)?[a-f0-9]{40}\b|sq[upa]_[a-f0-9]{40}\b",
            r"|tfp_[A-Za-z0-9_\-.=]{59}|gsk_[A-Za-z0-9]{52}\b|xai-[A-Za-z0-9]{80}\b|r8_[A-Za-z0-9]{37}\b",
            r"|pcsk_[A-Za-z0-9_]{50,}|lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}|sbp_[a-f0-9]{40}\b|sb_secret_[A-Za-z0-9_\-]{20,}",
            r"|nfp_[A-Za-z0-9]{36}\b|bkua_[a-f0-9]{40}\b|CCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}",
            r"|tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]+-[A-Za-z0-9]+|rnd_[A-Za-z0-9]{28,}\b",
            r"|sq0(?:atp|csp|idp)-[A-Za-z0-9_\-]{22,}|access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
            r"|pat-(?:na|eu|ap)[0-9]-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|sl\.[A-Za-z0-9_\-]{120,}",
            r"|pat\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}",
            r"|dnkey-[A-Za-z0-9=_\-]{70,}|[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk\b",
            r"|(?:sc|ext|scauth|authress)_[a-z0-9]{5,30}\.[a-z0-9]{4,6}\.acc[_\-][a-z0-9\-]{10,32}\.[A-Za-z0-9+/_=\-]{30,120}",
        ),
        token,
    ),
    // Twitter's app bearer token: a run of `A`s that zero bytes in base64 also make.
    rule("service API token", &["aaaaaaaaaaaaaaaaaaaaa"], r"AAAAAAAAAAAAAAAAAAAAA[A-Za-z0-9%]{30,}", unglued),
    // Shapes without a separator in their prefix: whole words only, not inside base64.
    rule(
        "service API token",
        &["api-", "aqvn", "yc", "4b1d", "_"],
        r"\bAPI-[A-Z0-9]{26}\b|\bAQVN[A-Za-z0-9_\-]{35,38}\b|\bYC[A-Za-z0-9_\-]{38}\b|\b4b1d[A-Za-z0-9]{38}\b|\b[0-9][A-Za-z0-9]{26}_[A-Za-z0-9]{21}\b",
        standalone,
    )
    .gated(standalone_gate),
    // Shapes whose literal is common in ordinary text, each alone so that it compiles cheaply.
    rule("service API token", &["pat"], r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b", token),
    rule("service API token", &["secret_"], r"secret_[A-Za-z0-9]{43}\b", token),
    rule(
        "service API token",
        &["0."],
        r"0\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.[A-Za-z0-9]{20,}:[A-Za-z0-9+/]{20,}={0,2}",
        token,
    ),
    rule("service API token", &["/"], r"[0-9]/[0-9]{12,}/[0-9]{12,}:[a-f0-9]{32}\b", token)
        .gated(|t, _| t.as_bytes().windows(2).any(|w| w[0].is_ascii_digit() && w[1] == b'/')),
    rule(
        "Teams webhook",
        &["webhook.office.com"],
        r"webhook\.office\.com/webhookb2/[^\s/<>]+/IncomingWebhook/([a-f0-9]{32})/",
        group,
    ),
    // ---- credentials in a known position ----
    rule("password in URL", &["://"], r#"[A-Za-z][A-Za-z0-9+.\-]*://([^\s/?#<>"'\\]+)"#, url_userinfo)
        .gated(url_userinfo_gate),
    rule("password in DSN", &["@tcp(", "@unix(", "@udp("], r#"[A-Za-z0-9_.\-]+:([^\s@:/"'<>]+)@(?:tcp|unix|udp)\("#, group),
    rule(
        "authorization header",
        &["authorization"],
        r#"(?i-u)\b(?:proxy-)?authorization\\?["'`]?\]?[ \t]*[:=][ \t]*\\?["'`]?[ \t]*(?:(bearer|basic|token|bot|api-token|apikey|sso-key|key|otoken|dpop|gateway-token|aws4-hmac-sha256[ \t]+credential)(?:[ \t]+|[ \t]*=[ \t]*))?(?:token=)?([A-Za-z0-9._~+/=:\-]+)"#,
        authorization,
    )
    .gated(authorization_gate),
    rule("bearer token", &["bearer"], r"(?i-u)\bbearer[ \t]+([A-Za-z0-9._~+/=\-]{16,})", bearer)
        .gated(bearer_gate),
    rule("session cookie", &["cookie"], r"(?i-u:\b(?:set-)?cookie)[ \t]*:[ \t]*([^\r\n<>]+)", cookie),
    rule(
        "signature parameter",
        &["sig=", "signature=", "security-token="],
        r#"[?&;, ](?i-u:sig|signature|x-amz-signature|x-amz-security-token|x-goog-signature)=([^&,\s#"'<>]+)"#,
        group,
    ),
    rule(
        "password on a command line",
        &["mysql", "mariadb"],
        concat!(
            r#"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mysqlsh|mariadb|mariadb-dump)\b"#,
            r#"[^\n|;&]*?[ \t]-p('[^'\n]+'|"[^"\n]+"|[^\s'"\-][^\s'"]*)"#
        ),
        cli_password,
    )
    .gated(|_, l| l.contains("-p")),
    rule(
        "password on a command line",
        &["sshpass"],
        concat!(r#"\bsshpass[ \t]+-p[ \t]*"#, value!()),
        cli_password,
    ),
    rule(
        "password on a command line",
        &["mongo", "twine", "login"],
        concat!(
            r#"\b(?:mongo(?:sh|dump|restore|export|import|stat|top)?|twine|(?:docker|podman|nerdctl|buildah|skopeo|oras|crane)[ \t]+login|helm[ \t]+registry[ \t]+login|az[ \t]+login)\b"#,
            r#"[^\n|;&]*?[ \t]-p[ \t]+"#,
            value!()
        ),
        cli_password,
    )
    .gated(|_, l| {
        l.contains("-p")
            && (l.contains("mongo")
                || l.contains("twine")
                || l.match_indices("login").any(|(i, _)| {
                    let head = l[..i].trim_end();
                    ["docker", "podman", "nerdctl", "buildah", "skopeo", "oras", "crane", "registry", "az"]
                        .iter()
                        .any(|c| head.ends_with(c))
                }))
    }),
    rule(
        "password on a command line",
        &["-cli"],
        concat!(r#"\b(?:redis|keydb|valkey)-cli\b[^\n|;&]*?[ \t]-a[ \t]+"#, value!()),
        cli_password,
    )
    .gated(|_, l| l.contains("-a")),
    rule(
        "password on a command line",
        &["sqlcmd", "bcp", "osql", "isql"],
        concat!(r#"\b(?:sqlcmd|bcp|osql|isql)\b[^\n|;&]*?[ \t]-P[ \t]*"#, value!()),
        cli_password,
    )
    .gated(|_, l| l.contains("-p")),
    rule(
        "password on a command line",
        &["htpasswd"],
        concat!(r#"\bhtpasswd((?:[ \t]+-[A-Za-z]+)+)[ \t]+[^\s|;&\-][^\s|;&]*[ \t]+[^\s|;&\-][^\s|;&]*[ \t]+"#, value!()),
        htpasswd,
    ),
    rule(
        "password on a command line",
        &["rabbitmqctl"],
        concat!(r#"\brabbitmqctl[ \t]+(?:add_user|change_password)[ \t]+[^\s|;&]+[ \t]+"#, value!()),
        cli_password,
    ),
    rule(
        "password on a command line",
        &["-stdin", "--with-token"],
        concat!(
            r#"\becho[ \t]+(?:-[neE]+[ \t]+)?"#,
            value!(),
            r#"[ \t]*\|[^\n]*?(?:--password-stdin|--with-token|--token-stdin)"#
        ),
        cli_password,
    ),
    rule("password on a command line", &["pass:"], r#"-pass(?:in|out)?[ \t]+pass:([^\s'"<>]+)"#, group),
    rule(
        "password on a command line",
        &["configure"],
        concat!(r#"\baws[ \t]+configure[ \t]+set[ \t]+(?:aws_secret_access_key|aws_session_token)[ \t]+"#, value!()),
        cli_password,
    )
    .gated(|_, l| l.contains("aws")),
    rule(
        "password on a command line",
        &["curl", "wget", "http"],
        r#"\b(?:curl|http|https|wget)\b[^\n|;&]*?[ \t](?:-u|--user)(?:[ \t]+|=)["']?[^\s:"'<>]+:([^\s"'<>]+)"#,
        cli_password,
    )
    .gated(|_, l| l.contains("-u") || l.contains("--user")),
    rule(
        "password on a command line",
        &["poetry"],
        concat!(r#"\bpoetry[ \t]+config[ \t]+(?:pypi-token\.[A-Za-z0-9_\-]+|http-basic\.[A-Za-z0-9_\-]+[ \t]+[^\s|;&]+)[ \t]+"#, value!()),
        cli_password,
    ),
    rule(
        "password on a command line",
        &["mysqladmin"],
        concat!(r#"\bmysqladmin\b[^\n|;&]*?[ \t]password[ \t]+"#, value!()),
        cli_password,
    ),
    rule("password on a command line", &["sqlplus"], r#"\bsqlplus[ \t]+(?:-[A-Za-z]+[ \t]+)*["']?[A-Za-z0-9_$#]+/([^@\s"'<>]+)@"#, cli_password),
    rule(
        "password on a command line",
        &["ldap"],
        concat!(r#"\bldap(?:search|add|modify|delete|whoami|passwd|compare|modrdn)\b[^\n|;&]*?[ \t]-w[ \t]+"#, value!()),
        cli_password,
    )
    .gated(|_, l| l.contains("-w")),
    rule(
        "password on a command line",
        &["smbclient", "rpcclient", "smbmap"],
        r#"\b(?:smbclient|rpcclient|smbmap)\b[^\n|;&]*?[ \t]-U[ \t]+["']?[^%\s"']+%([^\s"'<>]+)"#,
        cli_password,
    ),
    rule(
        "password on a command line",
        &["convertto-securestring"],
        concat!(r#"(?i-u:ConvertTo-SecureString[ \t]+(?:-String[ \t]+)?)"#, value!()),
        cli_password,
    ),
    rule(
        "mnemonic phrase",
        &["mnemonic", "seed", "recovery"],
        r#"(?i-u:\b(?:mnemonic|seed[ _\-]?(?:phrase|words)|recovery[ _\-]?phrase)\b)[^:=\n]{0,24}[:=]?[ \t]*["'`]?((?:[a-z]{3,8}[ \t]+){11,23}[a-z]{3,8})\b"#,
        group,
    ),
    rule(
        "Dockerfile secret",
        &["env"],
        concat!(r#"(?m)^[ \t]*ENV[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]+"#, value!(), r#"[ \t]*\r?$"#),
        dockerfile_env,
    )
    .gated(env_line),
    rule(
        "secret assignment",
        &["pass", "pw", "secret", "token", "key", "credential", "auth"],
        concat!(
            r#"\b([A-Za-z_][A-Za-z0-9_]*)(?:[ \t]*:[ \t]*[&'A-Za-z_][A-Za-z0-9_<>&' \[\]:,|?]{0,40}?"#,
            r#"|[ \t]+(?:string|String|str|&str|\[\]byte|\*?[A-Z][A-Za-z0-9_.]*))[ \t]*=[ \t]*"#,
            r#"("[^"\n]*"|'[^'\n]*'|`[^`\n]*`)"#
        ),
        typed_declaration,
    )
    .gated(declared),
    rule("ngrok authtoken", &["authtoken"], r"(?:add-authtoken|--authtoken)[ \t=]+([A-Za-z0-9_\-]{20,})", group),
    rule(
        "secret flag",
        &["pass", "pw", "secret", "token", "key", "auth", "credential"],
        r#"(?:^|[ \t"'=])(--?(?:[A-Za-z][A-Za-z0-9_\-]*)?(?:pass|Pass|PASS|passwd|Passwd|PASSWD|pwd|Pwd|PWD|pw|Pw|PW|secret|Secret|SECRET|token|Token|TOKEN|key|Key|KEY|auth|Auth|AUTH|credential|Credential|CREDENTIAL|credentials|Credentials|CREDENTIALS))(?:=|[ \t]+)"#,
        flag,
    )
    .gated(flagged),
    rule(
        "SQL password",
        &["password", "identified"],
        concat!(
            r"\b(?i-u:identified[ \t]+(?:with[ \t]+[a-z0-9_]+[ \t]+)?by(?:[ \t]+password)?|(?:with|login|user|role)[ \t]+(?:encrypted[ \t]+|unencrypted[ \t]+)?password)[ \t]*=?[ \t]*'([^'\n]*)'",
            r"|\b(?i-u:(?:create|alter)[ \t]+(?:user|role|login)\b)[^;\n]*?\b(?i-u:password)[ \t]*=?[ \t]*'([^'\n]*)'",
            r"|\b(?i-u:password)[ \t]*\([ \t]*'([^'\n]*)'[ \t]*\)"
        ),
        sql_password,
    )
    .gated(sql_gate),
    rule("netrc password", &["password"], r"\b(?i-u:login)[ \t]+\S+[ \t]+(?i-u:password)[ \t]+([^\s<>]+)", netrc_inline)
        .gated(|_, l| l.match_indices("login").any(|(i, _)| netrc_pair(&l[i + 5..]))),
    rule(
        "netrc password",
        &["password"],
        r"(?m)(?:^|\\n)[ \t]*(?i-u:password)[ \t]+([^\s<>\\]+)[ \t]*(?:\r?$|\\[rn])",
        netrc_line,
    )
    .gated(|_, l| {
        (l.contains("machine ") || l.contains("login "))
            && l.split(['\n']).flat_map(|x| x.split("\\n")).any(|x| x.trim_start().starts_with("password"))
    }),
    rule(
        "pgpass password",
        &[":"],
        r#"(?m)(?:^|\\n|"|[ \t])[ \t]*([A-Za-z][A-Za-z0-9.\-]*|[0-9]{1,3}(?:\.[0-9]{1,3}){3}|\*):([0-9]{2,5}|\*):(?:[A-Za-z_][A-Za-z0-9_.\-]*|\*):(?:[A-Za-z_][A-Za-z0-9_.@\-]*|\*):([^\s:<>\\\[\]]+)[ \t]*(?:\r?$|\\[rn]|")"#,
        pgpass,
    )
    .gated(colon_line),
    rule(
        "Ethereum private key",
        &["wallet", "privatekey", "from_key", "signingkey", "accounts"],
        r#"(?i-u)(?:(?:wallet|privatekeytoaccount|fromprivatekey|from_key|signingkey)[ \t]*\(|accounts[ \t]*:[ \t]*\[)[ \t]*["']((?:0x)?[0-9a-f]{64})["']"#,
        group,
    )
    .gated(hex64),
    rule(
        "composer auth",
        &["\"bearer\"", "-oauth\"", "\"gitlab-token\""],
        r#""(?:bearer|github-oauth|gitlab-oauth|gitlab-token|bitbucket-oauth)"[ \t]*:[ \t]*\{([^{}<>]*)\}"#,
        composer,
    ),
    rule(
        "bundler credentials",
        &["bundle_"],
        r#"\bBUNDLE_[A-Z0-9_]*__[A-Z0-9_]+["']?[ \t]*[:=][ \t]*["']?([^\s"'<>]+)"#,
        bundler,
    ),
    // A label glued to its value ("API keyAQVN…", "tokenODAy…"). `key` and `pat` only right at a
    // word's start: inside base64 they occur by chance.
    rule(
        "token glued to a word",
        &["token", "secret", "password", "key", "pat"],
        concat!(
            r"\b(?:[A-Za-z_]{0,24}(?:[Tt]oken|TOKEN|[Ss]ecret|SECRET|[Pp]assword|PASSWORD)|(?:[Kk]ey|KEY|[Pp]at|PAT))",
            r"([A-Za-z0-9][A-Za-z0-9_\-.~+/=:]{15,})"
        ),
        glued,
    )
    .gated(glued_gate),
    // ---- secret-named keys ----
    rule(
        "secret assignment",
        &[
            "pass", "pw", "secret", "token", "key", "credential", "creds", "auth", "pat", "bearer", "mnemonic", "contrase",
            "phrase", "dockercfg", "dockerconfigjson",
        ],
        concat!(
            // The last word in its usual casings (`token`, `Token`, `TOKEN`), which the engine
            // can search for as literals.
            r#"([A-Za-z0-9_.\-]*(?:(?:pass|Pass|PASS)(?:word|Word|WORD|wd|Wd|WD|phrase|Phrase|PHRASE|code|Code|CODE)?|pwd|Pwd|PWD|pw|Pw|PW|secret|Secret|SECRET|token|Token|TOKEN|(?:key|Key|KEY)(?:[_.\-]?(?:base|Base|BASE|data|Data|DATA))?|credential|Credential|CREDENTIAL|credentials|Credentials|CREDENTIALS|creds|Creds|CREDS|auth|Auth|AUTH|pat|Pat|PAT|bearer|Bearer|BEARER|mnemonic|Mnemonic|MNEMONIC|phrase|Phrase|PHRASE|dockerconfigjson|Dockerconfigjson|DOCKERCONFIGJSON|dockercfg|Dockercfg|DOCKERCFG|(?i:contraseña)))"#,
            r#"(\\?["'`]|&quot;|&apos;|&#3[49];|\*\*|__)?\]?[ \t]*(:=|===?|\|\|=|\?\?=|\?=|=>|<-|&lt;-|=|:|,)"#
        ),
        assignment,
    )
    .gated(assigned),
    rule(
        "secret element",
        &["</", "&lt;/"],
        r"(?:<|&lt;)([A-Za-z_][A-Za-z0-9_.:\-]*)(?:>|&gt;)([^<>\n]+?)(?:<|&lt;)/([A-Za-z_][A-Za-z0-9_.:\-]*)(?:>|&gt;)",
        element,
    )
    .gated(|_, l| word_then(l, &[">", "&gt;"])),
    rule(
        "secret element",
        &["name=", "key="],
        r#"<([A-Za-z][A-Za-z0-9_.:\-]*)\s[^<>]*?\b(?:name|key)=["']([^"'<>]+)["'][^<>]*>([^<>\n]+)</([A-Za-z][A-Za-z0-9_.:\-]*)>"#,
        named_element,
    )
    .gated(|_, l| word_then(l, &["\"", "'"])),
    rule(
        "secret element",
        &["value="],
        r#"\b(?:name|key)=["']([^"'<>]+)["'][^<>]*?\bvalue=["']([^"'<>]*)["']"#,
        named_value,
    )
    .gated(|_, l| word_then(l, &["\"", "'"])),
    rule("secret in a table", &["|"], r"\|[ \t]*`?([A-Za-z0-9_.\-]+)`?[ \t]*\|[ \t]*`([^`\n|<>]+)`[ \t]*\|", table)
        .gated(|t, _| t.contains('`')),
    rule(
        "password in prose",
        &["pass", "pwd", "key", "secret", "token", "pin"],
        r"(?i-u)\b(?:pass(?:word|phrase|code)|pwd|api[ _\-]?key|access[ _\-]?key|secret(?:[ _\-]?key)?|token|pin)\b",
        prose,
    )
    .gated(stated),
];

static COMPILED: LazyLock<Vec<OnceLock<Regex>>> = LazyLock::new(|| RULES.iter().map(|_| OnceLock::new()).collect());

/// Texts longer than this find their literals in one pass instead of one search per literal.
const ONE_PASS: usize = 32 * 1024;

/// Every distinct literal of the table, the one-byte ones first, and the rules that list each.
static LITERALS: LazyLock<(Vec<&'static str>, Vec<Vec<usize>>)> = LazyLock::new(|| {
    let mut lits: Vec<&'static str> = RULES.iter().flat_map(|r| r.lits.iter().copied()).collect();
    lits.sort_by_key(|l| (l.len() > 1, *l));
    lits.dedup();
    let rules = lits.iter().map(|l| (0..RULES.len()).filter(|&i| RULES[i].lits.contains(l)).collect()).collect();
    (lits, rules)
});

/// How many of [`LITERALS`] are one byte long: found faster alone, and in [`AUTOMATON`] they
/// would make every such byte a match.
fn one_byte_literals() -> usize {
    LITERALS.0.iter().take_while(|l| l.len() == 1).count()
}

/// The longer literals in one automaton, built on the first long text.
static AUTOMATON: LazyLock<AhoCorasick> = LazyLock::new(|| {
    let kind = Some(AhoCorasickKind::DFA);
    AhoCorasick::builder().kind(kind).build(&LITERALS.0[one_byte_literals()..]).expect("valid literal set")
});

/// Which rules the (lowercased) text holds a literal of.
fn wanted(lower: &str) -> Vec<bool> {
    let mut want = vec![false; RULES.len()];
    if lower.len() <= ONE_PASS {
        for (i, r) in RULES.iter().enumerate() {
            want[i] = r.lits.iter().any(|l| lower.contains(l));
        }
        return want;
    }
    let (lits, rules_of) = &*LITERALS;
    let short = one_byte_literals();
    let mut seen: Vec<bool> = lits.iter().map(|l| l.len() == 1 && lower.contains(l)).collect();
    // Overlapping: every literal at every position, the shorter ones a longer one starts with too.
    for m in AUTOMATON.find_overlapping_iter(lower) {
        seen[short + m.pattern().as_usize()] = true;
    }
    for (i, _) in lits.iter().enumerate().filter(|(i, _)| seen[*i]) {
        for &r in &rules_of[i] {
            want[r] = true;
        }
    }
    want
}

/// The rules whose prefilter the text passes, their expressions compiled on first use. `\b` is
/// ASCII: a Unicode word boundary makes the fast engines give up on non-ASCII text.
fn active(text: &str) -> impl Iterator<Item = (&'static Rule, &'static Regex)> + '_ {
    let lower = text.to_ascii_lowercase();
    let want = wanted(&lower);
    // Gates spare compiles for short texts; a long one compiles what it needs once anyway.
    let gated = text.len() <= ONE_PASS;
    RULES.iter().enumerate().filter(move |(i, r)| want[*i] && (!gated || (r.gate)(text, &lower))).map(|(i, r)| {
        let re = COMPILED[i]
            .get_or_init(|| Regex::new(&r.pattern.replace(r"\b", r"(?-u:\b)")).expect("valid secret pattern"));
        (r, re)
    })
}

/// The byte spans of `text` that are secret: sorted, merged, and never holding `<`, `>` or `"`.
pub(super) fn spans(text: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    for (rule, re) in active(text) {
        (rule.find)(text, re, &mut found);
    }
    finish(text, found)
}

/// Names of the rules that find a secret in `text` (for messages; never the secret itself).
pub(super) fn names(text: &str) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::new();
    for (rule, re) in active(text) {
        let mut found = Vec::new();
        (rule.find)(text, re, &mut found);
        if !finish(text, found).is_empty() && !names.contains(&rule.name) {
            names.push(rule.name);
        }
    }
    names
}

/// Sorts and merges spans, then cuts them around markup characters: whatever a rule matched, a
/// replacement never swallows a tag or an attribute's quote (an escaped `\"` stays whole).
fn finish(text: &str, mut spans: Spans) -> Spans {
    let bytes = text.as_bytes();
    spans.retain(|&(s, e)| s < e && e <= text.len() && text.is_char_boundary(s) && text.is_char_boundary(e));
    spans.sort_unstable();
    let mut merged: Spans = Vec::new();
    for (s, e) in spans {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    let mut out = Vec::with_capacity(merged.len());
    for (s, e) in merged {
        let mut from = s;
        let mut i = s;
        while i < e {
            let keep = match bytes[i] {
                b'<' | b'>' | b'"' => 1,
                b'\\' if bytes.get(i + 1) == Some(&b'"') => 2,
                _ => 0,
            };
            if keep > 0 {
                if from < i {
                    out.push((from, i));
                }
                i += keep;
                from = i;
            } else {
                i += 1;
            }
        }
        if from < e.min(text.len()) {
            out.push((from, e));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Gates: cheap checks, each true whenever its rule's expression could match.

/// How far past a secret word its key can go on (`pass` → `passphrase`, `key` → `key_data`).
const WORD_TAIL: usize = 8;

/// The end of the word that goes on from `i`, at most [`WORD_TAIL`] bytes further.
fn word_end(b: &[u8], mut i: usize) -> usize {
    let limit = i + WORD_TAIL;
    while i < b.len() && i < limit && (b[i].is_ascii_alphanumeric() || b"_.-".contains(&b[i]) || b[i] >= 0x80) {
        i += 1;
    }
    i
}

/// An automaton finding any of `words` (lowercase) in a lowercased text.
fn words(words: &[&str]) -> AhoCorasick {
    AhoCorasick::builder().kind(Some(AhoCorasickKind::DFA)).build(words).expect("valid word list")
}

/// Where the automaton's words occur in `l`, overlapping, as start and length.
fn occurrences<'t>(words: &'static AhoCorasick, l: &'t str) -> impl Iterator<Item = (usize, usize)> + 't {
    words.find_overlapping_iter(l).map(|m| (m.start(), m.len()))
}

/// The last words of secret-named keys, as the assignment rules end them.
#[rustfmt::skip]
const KEY_WORDS: &[&str] = &[
    "pass", "pw", "secret", "token", "key", "credential", "creds", "auth", "pat", "bearer", "mnemonic", "contrase",
    "phrase", "dockercfg", "dockerconfigjson", "base", "data",
];
/// [`KEY_WORDS`] found in one pass.
static KEY_WORDS_FOUND: LazyLock<AhoCorasick> = LazyLock::new(|| words(KEY_WORDS));

/// A key ending in a secret word, then a separator (after quotes, a bracket or spaces).
fn assigned(_: &str, l: &str) -> bool {
    let b = l.as_bytes();
    occurrences(&KEY_WORDS_FOUND, l).any(|(i, n)| {
        let mut j = word_end(b, i + n);
        while j < b.len() && b[j] >= 0x80 {
            j += 1;
        }
        loop {
            if j < b.len() && b"\\\"'`] \t*_".contains(&b[j]) {
                j += 1;
            } else if ["&quot;", "&apos;", "&#34;", "&#39;"].iter().any(|e| l[j..].starts_with(e)) {
                j += l[j..].find(';').map_or(0, |k| k + 1);
            } else {
                break;
            }
        }
        j < b.len() && b"=:,<?|&".contains(&b[j])
    })
}

/// A secret word, then on the same line `=` and a quote (`const API_KEY: &str = "…"`).
fn declared(_: &str, l: &str) -> bool {
    let b = l.as_bytes();
    occurrences(&KEY_WORDS_FOUND, l).any(|(i, n)| {
        // The type between the name and `=` is at most 40 bytes long.
        let from = word_end(b, i + n);
        let to = (from + 64).min(b.len());
        (from..to).take_while(|&k| b[k] != b'\n').any(|k| {
            b[k] == b'=' && {
                let mut q = k + 1;
                while q < b.len() && (b[q] == b' ' || b[q] == b'\t') {
                    q += 1;
                }
                q < b.len() && b"\"'`".contains(&b[q])
            }
        })
    })
}

/// `-…pass`, `--token` and the like, followed by `=` or a space.
fn flagged(_: &str, l: &str) -> bool {
    let b = l.as_bytes();
    static WORDS: LazyLock<AhoCorasick> = LazyLock::new(|| {
        words(&["pass", "passwd", "pwd", "pw", "secret", "token", "key", "auth", "credential", "credentials"])
    });
    occurrences(&WORDS, l).any(|(i, n)| {
        let mut s = i;
        while s > 0 && i - s < 64 && (b[s - 1].is_ascii_alphanumeric() || b"_-".contains(&b[s - 1])) {
            s -= 1;
        }
        // A run too long to walk back is let through.
        matches!(b.get(i + n), Some(b'=' | b' ' | b'\t')) && (b[s] == b'-' || i - s >= 64)
    })
}

/// A secret word, then later on its line a digit and a capital or a long run (what a stated
/// password or token needs).
fn stated(t: &str, l: &str) -> bool {
    static WORDS: LazyLock<AhoCorasick> = LazyLock::new(|| words(&["pass", "pwd", "key", "secret", "token", "pin"]));
    occurrences(&WORDS, l).any(|(i, n)| {
        // The finder looks at six words at most.
        let rest = &t.as_bytes()[i + n..];
        let mut words = 0;
        let mut end = 0;
        while end < rest.len() && rest[end] != b'\n' && words <= 7 {
            if rest[end].is_ascii_whitespace() && end > 0 && !rest[end - 1].is_ascii_whitespace() {
                words += 1;
            }
            end += 1;
        }
        let line = &rest[..end];
        let mut run = 0;
        let long_run = line.iter().any(|c| {
            run = if c.is_ascii_alphanumeric() { run + 1 } else { 0 };
            run >= 16
        });
        line.iter().any(u8::is_ascii_digit) && (long_run || line.iter().any(u8::is_ascii_uppercase))
    })
}

/// A label word followed directly by a long run with a digit in it.
fn glued_gate(t: &str, l: &str) -> bool {
    let b = t.as_bytes();
    static WORDS: LazyLock<AhoCorasick> = LazyLock::new(|| words(&["token", "secret", "password", "key", "pat"]));
    occurrences(&WORDS, l).any(|(i, n)| {
        let run = &b[i + n..];
        let n = run.iter().take_while(|c| c.is_ascii_alphanumeric() || b"_-.~+/=:".contains(c)).count();
        n >= 16 && run[..n].iter().any(u8::is_ascii_digit)
    })
}

/// A prefix of the separator-less shapes, or an underscore between runs of 27 and 21 letters and
/// digits (an ngrok token).
fn standalone_gate(t: &str, _: &str) -> bool {
    let b = t.as_bytes();
    let alnum_run = |r: &mut dyn Iterator<Item = &u8>| r.take_while(|c| c.is_ascii_alphanumeric()).count();
    ["API-", "AQVN", "YC", "4b1d"].iter().any(|p| t.contains(p))
        || t.match_indices('_')
            .any(|(i, _)| alnum_run(&mut b[..i].iter().rev()) >= 27 && alnum_run(&mut b[i + 1..].iter()) >= 21)
}

/// `user password secret` after `login`: the rest of a netrc line.
fn netrc_pair(rest: &str) -> bool {
    let mut words = rest.split_ascii_whitespace();
    rest.starts_with([' ', '\t'])
        && words.next().is_some()
        && words.next() == Some("password")
        && words.next().is_some()
}

/// A secret word ending an element or attribute name: `password>`, `db.password"`.
fn word_then(l: &str, ends: &[&str]) -> bool {
    let b = l.as_bytes();
    occurrences(&KEY_WORDS_FOUND, l).any(|(i, n)| {
        let mut j = word_end(b, i + n);
        while j < b.len() && b[j] >= 0x80 {
            j += 1;
        }
        ends.iter().any(|e| l[j..].starts_with(e))
    })
}

/// `scheme://…@`: userinfo before the host.
fn url_userinfo_gate(t: &str, _: &str) -> bool {
    t.match_indices("://").any(|(i, _)| {
        let rest = &t[i + 3..];
        let window = &rest.as_bytes()[..rest.len().min(512)];
        let end =
            window.iter().position(|&c| c.is_ascii_whitespace() || b"/?#<>\"'\\".contains(&c)).unwrap_or(window.len());
        window[..end].contains(&b'@')
    })
}

/// `authorization` then (after quotes and a bracket) `:` or `=`.
fn authorization_gate(_: &str, l: &str) -> bool {
    l.match_indices("authorization").any(|(i, _)| {
        let rest = l[i + 13..].trim_start_matches(['\\', '"', '\'', '`', ']', ' ', '\t']);
        rest.starts_with([':', '='])
    })
}

fn bearer_gate(_: &str, l: &str) -> bool {
    l.match_indices("bearer").any(|(i, _)| {
        let rest = &l[i + 6..];
        rest.starts_with([' ', '\t']) && rest.trim_start_matches([' ', '\t']).len() >= 16
    })
}

/// `IDENTIFIED … BY`, or `PASSWORD` then a quote (after `=` or `(`).
fn sql_gate(_: &str, l: &str) -> bool {
    l.contains("identified")
        || l.match_indices("password")
            .any(|(i, _)| l[i + 8..].trim_start_matches([' ', '\t', '=', '(']).starts_with('\''))
}

/// A line with at least four colons (`host:port:db:user:password`).
fn colon_line(t: &str, _: &str) -> bool {
    t.split('\n').any(|line| line.bytes().filter(|&b| b == b':').count() >= 4)
}

/// A run of 64 hex digits.
fn hex64(t: &str, _: &str) -> bool {
    let mut run = 0;
    t.bytes().any(|b| {
        run = if b.is_ascii_hexdigit() { run + 1 } else { 0 };
        run >= 64
    })
}

/// A Dockerfile `ENV` line.
fn env_line(t: &str, _: &str) -> bool {
    t.lines().any(|l| l.trim_start().strip_prefix("ENV").is_some_and(|r| r.starts_with([' ', '\t'])))
}

/// `AC` or `SK` then 32 lowercase hex digits (a Twilio SID).
fn twilio_sid(t: &str, _: &str) -> bool {
    let b = t.as_bytes();
    ["AC", "SK"].iter().any(|p| {
        t.match_indices(p).any(|(i, _)| {
            b.len() >= i + 34 && b[i + 2..i + 34].iter().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
        })
    })
}

/// Three dot-separated runs of token characters, the first at least 23 long (a Discord token).
fn dotted_token(t: &str, _: &str) -> bool {
    let b = t.as_bytes();
    let tok = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'-';
    t.match_indices('.').any(|(i, _)| {
        let n = b[i + 1..].iter().take_while(|&&c| tok(c)).count();
        i >= 23 && b[i - 23..i].iter().all(|&c| tok(c)) && (6..=7).contains(&n) && b.get(i + 1 + n) == Some(&b'.')
    })
}

// ---------------------------------------------------------------------------------------------
// Finders.

fn whole(text: &str, re: &Regex, out: &mut Spans) {
    out.extend(re.find_iter(text).map(|m| (m.start(), m.end())));
}

/// The first capture group that took part in each match.
fn group(text: &str, re: &Regex, out: &mut Spans) {
    for c in re.captures_iter(text) {
        if let Some(g) = first_group(&c) {
            out.push((g.start(), g.end()));
        }
    }
}

fn first_group<'t>(c: &Captures<'t>) -> Option<regex::Match<'t>> {
    (1..c.len()).find_map(|i| c.get(i))
}

/// A provider token: its group (or the whole match) when it ends at a word's end and is not an
/// ordinary word (it has a digit, or both cases).
fn token(text: &str, re: &Regex, out: &mut Spans) {
    for c in re.captures_iter(text) {
        let m = first_group(&c).unwrap_or_else(|| c.get(0).unwrap());
        // A letter, `_` or `-` after it goes on a word or a base64url run; a `+` before it is
        // base64 or URL encoding around it.
        if after(text, m.end()).is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            || before(text, m.start()) == Some(b'+')
        {
            continue;
        }
        let t = m.as_str();
        let digit = t.bytes().any(|b| b.is_ascii_digit());
        let mixed = t.bytes().any(|b| b.is_ascii_uppercase()) && t.bytes().any(|b| b.is_ascii_lowercase());
        if (digit || mixed) && !placeholder(t) {
            out.push((m.start(), m.end()));
        }
    }
}

/// A token with no distinctive separator: only where it stands alone (not inside a longer run of
/// base64), with a digit and both cases or a digit run.
fn standalone(text: &str, re: &Regex, out: &mut Spans) {
    let b64 = |b: Option<u8>| b.is_some_and(|c| c.is_ascii_alphanumeric() || b"+/=_-".contains(&c));
    for m in re.find_iter(text) {
        if b64(before(text, m.start())) || b64(after(text, m.end())) {
            continue;
        }
        let t = m.as_str();
        let digits = t.bytes().filter(u8::is_ascii_digit).count();
        let mixed = t.bytes().any(|b| b.is_ascii_uppercase()) && t.bytes().any(|b| b.is_ascii_lowercase());
        if digits > 0 && (mixed || digits >= 4) && !placeholder(t) {
            out.push((m.start(), m.end()));
        }
    }
}

/// The value of a glued label: a long random token, not the rest of a word (`tokenizer`).
fn glued(text: &str, re: &Regex, out: &mut Spans) {
    for c in re.captures_iter(text) {
        let v = c.get(1).unwrap();
        // Inside base64 (`…+Key…`) or longer than any token: a blob, not a label and its value.
        if before(text, c.get(0).unwrap().start()).is_some_and(|b| b"+/=-".contains(&b)) || v.len() > 512 {
            continue;
        }
        let s = v.as_str().trim_end_matches(['.', ':']);
        // `tokenizers/…`, `keyboard2024`: the word goes on in lowercase letters.
        let word_goes_on = s.bytes().take_while(u8::is_ascii_lowercase).count() >= 4;
        if random_token(s) && !word_goes_on && !s.contains("::") {
            out.push((v.start(), v.start() + s.len()));
        }
    }
}

/// A token whose prefix base64 data can hold by chance: not where it continues a base64 run.
fn unglued(text: &str, re: &Regex, out: &mut Spans) {
    for m in re.find_iter(text) {
        if !before(text, m.start()).is_some_and(|b| b.is_ascii_alphanumeric() || b"+/".contains(&b))
            && !after(text, m.end()).is_some_and(|b| b.is_ascii_alphanumeric() || b"+/".contains(&b))
        {
            out.push((m.start(), m.end()));
        }
    }
}

fn telegram(text: &str, re: &Regex, out: &mut Spans) {
    for m in re.find_iter(text) {
        if !before(text, m.start()).is_some_and(|b| b.is_ascii_digit())
            && !after(text, m.end()).is_some_and(|b| b.is_ascii_alphanumeric())
        {
            out.push((m.start(), m.end()));
        }
    }
}

/// A private key block: from its BEGIN line to its END line, or, unterminated, to the end of the
/// text or the first markup or quote (the end of a JSON string). A placeholder body (`...`,
/// `<paste your key here>`) is not a key.
fn pem_block(text: &str, re: &Regex, out: &mut Spans) {
    static END: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|---- END[ A-Z0-9]*PRIVATE KEY ----")
            .expect("valid pattern")
    });
    // The next END line and the next stop (markup, a quote) are found once and reused while the
    // BEGIN lines come before them: many keys in one text stay linear.
    let mut next_end: Option<Option<(usize, usize)>> = None;
    let mut next_stop: Option<usize> = None;
    for m in re.find_iter(text) {
        let from = m.end();
        if next_end.is_some_and(|e| e.is_some_and(|(s, _)| s < from)) {
            next_end = None;
        }
        let end_line = *next_end.get_or_insert_with(|| END.find_at(text, from).map(|e| (e.start(), e.end())));
        if next_stop.is_some_and(|s| s < from) {
            next_stop = None;
        }
        let stop = *next_stop.get_or_insert_with(|| {
            let rest = &text[from..];
            let raw = rest.find(['<', '>', '"']).unwrap_or(rest.len());
            from + rest[..raw].find("&quot;").unwrap_or(raw)
        });
        let (body_end, end) = match end_line {
            Some((s, e)) if e <= stop => (s, e),
            _ => (stop, stop),
        };
        if key_body(&text[from..body_end]) {
            out.push((m.start(), end));
        }
    }
}

/// Whether the text between BEGIN and END holds key material rather than a placeholder.
fn key_body(body: &str) -> bool {
    let body = body.replace("\\n", "\n").replace("\\r", "\n");
    // A placeholder is short: in a real body these letters can occur by chance.
    let lower = body.to_ascii_lowercase();
    if body.len() < 200
        && ["your", "paste", "insert", "here", "redacted", "placeholder", "omitted", "truncated"]
            .iter()
            .any(|w| lower.contains(w))
    {
        return false;
    }
    let material = body
        .lines()
        .filter(|l| !l.contains(':'))
        .flat_map(|l| l.bytes())
        .filter(|&b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
        .count();
    material >= 4 && !body.bytes().filter(|b| b.is_ascii_alphanumeric()).all(|b| b == b'x' || b == b'X')
}

/// The end of a key whose BEGIN line is elsewhere: the base64 lines before an END line (the last
/// one may be short), and the END line.
fn pem_tail(text: &str, re: &Regex, out: &mut Spans) {
    for m in re.find_iter(text) {
        let body = &m.as_str()[..m.as_str().find("-----END").unwrap_or(0)];
        let material = body.replace("\\n", " ").replace("\\r", " ");
        if material.bytes().filter(|b| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/').count() >= 16 {
            out.push((m.start(), m.end()));
        }
    }
}

/// Base64 whose decoded start is a private key's BEGIN line.
fn encoded_pem(text: &str, re: &Regex, out: &mut Spans) {
    for m in re.find_iter(text) {
        let head = &m.as_str()[..m.as_str().len().min(64) / 4 * 4];
        if String::from_utf8_lossy(&base64_decode(head)).contains("PRIVATE KEY") {
            out.push((m.start(), m.end()));
        }
    }
}

fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' | b'-' => Some(62),
        b'/' | b'_' => Some(63),
        _ => None,
    };
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for v in s.bytes().map_while(val) {
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

/// `scheme://user:password@host`: the password (the userinfo ends at the last `@` of the
/// authority), and a long random user name that is itself a token.
fn url_userinfo(text: &str, re: &Regex, out: &mut Spans) {
    for c in re.captures_iter(text) {
        let auth = c.get(1).unwrap();
        let Some(at) = auth.as_str().rfind('@') else { continue };
        let info = &auth.as_str()[..at];
        let base = auth.start();
        match info.find(':') {
            Some(colon) => {
                let (user, pass) = (&info[..colon], &info[colon + 1..]);
                // A raw `:` cannot be in a password (it is percent-encoded): `cvs://:pserver:…@`.
                if !pass.is_empty() && !pass.contains(':') && !placeholder(pass) && !reference(pass) {
                    out.push((base + colon + 1, base + at));
                }
                if random_token(user) {
                    out.push((base, base + colon));
                }
            }
            None if random_token(info) => out.push((base, base + at)),
            None => {}
        }
    }
}

/// `Authorization: <scheme> <credentials>`.
fn authorization(text: &str, re: &Regex, out: &mut Spans) {
    for c in re.captures_iter(text) {
        let v = c.get(2).unwrap();
        let s = v.as_str();
        let schemed = c.get(1).is_some();
        let scheme_word = ["bearer", "basic", "token", "bot", "digest", "negotiate", "ntlm", "key"]
            .contains(&s.to_ascii_lowercase().as_str());
        let ok = if schemed { s.len() >= 8 } else { s.len() >= 16 && token_like(s) };
        if ok && !scheme_word && !placeholder(s) && !reference(s) {
            out.push((v.start(), v.end()));
        }
    }
}

fn bearer(text: &str, re: &Regex, out: &mut Spans) {
    for c in re.captures_iter(text) {
        let v = c.get(1).unwrap();
        if token_like(v.as_str()) && !placeholder(v.as_str()) {
            out.push((v.start(), v.end()));
        }
    }
}

/// Cookie values that are session identifiers or tokens; attributes (`Path`, `Expires`, …) and
/// short settings stay.
fn cookie(text: &str, re: &Regex, out: &mut Spans) {
    for c in re.captures_iter(text) {
        let line = c.get(1).unwrap();
        let mut at = line.start();
        for part in line.as_str().split(';') {
            let start = at;
            at += part.len() + 1;
            let Some(eq) = part.find('=') else { continue };
            let name = part[..eq].trim().to_ascii_lowercase();
            let raw = &part[eq + 1..];
            let value = raw.trim();
            if value.is_empty() {
                continue;
            }
            let vs = start + eq + 1 + (raw.len() - raw.trim_start().len());
            let sessionish = ["sess", "sid", "token", "auth", "jwt", "login", "remember", "secret", "key"]
                .iter()
                .any(|w| name.contains(w));
            let attribute = ["path", "domain", "expires", "max-age", "samesite", "priority"].contains(&name.as_str());
            if !attribute && ((sessionish && value.len() >= 8) || random_token(value)) && !placeholder(value) {
                out.push((vs, vs + value.len()));
            }
        }
    }
}

/// A value given on a command line (group 1, maybe quoted): a password unless it is a variable,
/// a flag or a placeholder.
fn cli_password(text: &str, re: &Regex, out: &mut Spans) {
    for c in re.captures_iter(text) {
        let g = first_group(&c).unwrap();
        if let Some((s, e)) = unquote(text, g.start(), g.end()) {
            let v = &text[s..e];
            let flag = s == g.start() && v.starts_with('-');
            if !v.is_empty() && !flag && !placeholder(v) && !reference(v) && !keyword(v) {
                out.push((s, e));
            }
        }
    }
}

/// Dockerfile's `ENV KEY value` (no `=`).
fn dockerfile_env(text: &str, re: &Regex, out: &mut Spans) {
    for c in re.captures_iter(text) {
        let Some(family) = family(c.get(1).unwrap().as_str()) else { continue };
        let g = c.get(2).unwrap();
        if let Some((s, e)) = unquote(text, g.start(), g.end()) {
            if accept(family, &text[s..e], true, true) {
                out.push((s, e));
            }
        }
    }
}

/// `const API_KEY: &str = "…"`, `val password: String = "…"`, `var apiKey string = "…"`: a typed
/// declaration of a secret-named variable with a literal.
fn typed_declaration(text: &str, re: &Regex, out: &mut Spans) {
    for c in re.captures_iter(text) {
        let Some(family) = family(c.get(1).unwrap().as_str()) else { continue };
        let g = c.get(2).unwrap();
        let (s, e) = (g.start() + 1, g.end() - 1);
        let v = &text[s..e];
        if g.as_str().starts_with('`') && (v.contains(char::is_whitespace) || v.contains('$')) {
            continue;
        }
        if accept(family, v, true, false) {
            out.push((s, e));
        }
    }
}

/// `htpasswd -b file user password`: only in batch mode is the last argument a password.
fn htpasswd(text: &str, re: &Regex, out: &mut Spans) {
    for c in re.captures_iter(text) {
        if c.get(1).unwrap().as_str().contains('b') {
            let g = c.get(2).unwrap();
            if let Some((s, e)) = unquote(text, g.start(), g.end()) {
                if !placeholder(&text[s..e]) && !reference(&text[s..e]) {
                    out.push((s, e));
                }
            }
        }
    }
}

/// The inside of a quoted group, or the group itself.
fn unquote(text: &str, s: usize, e: usize) -> Option<(usize, usize)> {
    let v = &text[s..e];
    let b = v.as_bytes();
    if b.len() >= 2 && (b[0] == b'\'' || b[0] == b'"') {
        return (b[b.len() - 1] == b[0]).then_some((s + 1, e - 1));
    }
    Some((s, e))
}

/// `--password X`, `-srcstorepass X`, `--token=X`: a flag named like a secret, and its value.
fn flag(text: &str, re: &Regex, out: &mut Spans) {
    for c in re.captures_iter(text) {
        let name = c.get(1).unwrap();
        let Some(family) = family(name.as_str().trim_start_matches('-')) else { continue };
        let Some(v) = read_value(text, c.get(0).unwrap().end()) else { continue };
        if v.backtick {
            continue;
        }
        let s = &text[v.start..v.end];
        if s.starts_with('-') {
            continue;
        }
        if accept(family, s, v.quoted, true) {
            out.push((v.start, v.end));
        }
    }
}

fn sql_password(text: &str, re: &Regex, out: &mut Spans) {
    for c in re.captures_iter(text) {
        let v = first_group(&c).unwrap();
        if !v.as_str().is_empty() && !placeholder(v.as_str()) && !reference(v.as_str()) {
            out.push((v.start(), v.end()));
        }
    }
}

/// `machine host login user password secret` on one line.
fn netrc_inline(text: &str, re: &Regex, out: &mut Spans) {
    for c in re.captures_iter(text) {
        let v = c.get(1).unwrap();
        if accept(Family::Password, v.as_str(), false, true) {
            out.push((v.start(), v.end()));
        }
    }
}

/// A `password secret` line of a netrc file (a `machine` or `login` line shortly before it).
fn netrc_line(text: &str, re: &Regex, out: &mut Spans) {
    for c in re.captures_iter(text) {
        let v = c.get(1).unwrap();
        let start = c.get(0).unwrap().start();
        let before = &text[floor_boundary(text, start.saturating_sub(300))..start];
        if (before.contains("machine ") || before.contains("login "))
            && accept(Family::Password, v.as_str(), false, true)
        {
            out.push((v.start(), v.end()));
        }
    }
}

/// `host:port:database:user:password`, a `.pgpass` line.
fn pgpass(text: &str, re: &Regex, out: &mut Spans) {
    for c in re.captures_iter(text) {
        let host = c.get(1).unwrap().as_str();
        let v = c.get(3).unwrap();
        if host.bytes().any(|b| b.is_ascii_alphabetic() || b == b'.' || b == b'*') && !placeholder(v.as_str()) {
            out.push((v.start(), v.end()));
        }
    }
}

/// composer's `auth.json`: `"bearer": {"host": "token"}` and the like.
fn composer(text: &str, re: &Regex, out: &mut Spans) {
    static PAIR: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#""[^"\n]+"[ \t]*:[ \t]*"([^"\n]+)""#).expect("valid pattern"));
    for c in re.captures_iter(text) {
        let body = c.get(1).unwrap();
        for p in PAIR.captures_iter(body.as_str()) {
            let v = p.get(1).unwrap();
            if token_like(v.as_str()) && !placeholder(v.as_str()) {
                out.push((body.start() + v.start(), body.start() + v.end()));
            }
        }
    }
}

/// Bundler's `BUNDLE_HOST__NAME=user:password` (the host is in the variable's name).
fn bundler(text: &str, re: &Regex, out: &mut Spans) {
    for c in re.captures_iter(text) {
        let v = c.get(1).unwrap();
        let s = v.as_str();
        if (s.contains(':') || token_like(s)) && !placeholder(s) && !reference(s) {
            out.push((v.start(), v.end()));
        }
    }
}

/// The longest element text taken for a value (longer text is prose or a document).
const MAX_ELEMENT: usize = 300;

/// `<password>secret</password>`, raw or escaped.
fn element(text: &str, re: &Regex, out: &mut Spans) {
    for c in re.captures_iter(text) {
        let (open, value, close) = (c.get(1).unwrap(), c.get(2).unwrap(), c.get(3).unwrap());
        if open.as_str() != close.as_str() || value.len() > MAX_ELEMENT {
            continue;
        }
        if let Some(family) = family(open.as_str()) {
            if accept(family, value.as_str().trim(), true, true) {
                let lead = value.as_str().len() - value.as_str().trim_start().len();
                out.push((value.start() + lead, value.start() + lead + value.as_str().trim().len()));
            }
        }
    }
}

/// `<property name="db.password">secret</property>`.
fn named_element(text: &str, re: &Regex, out: &mut Spans) {
    for c in re.captures_iter(text) {
        if c.get(1).unwrap().as_str() != c.get(4).unwrap().as_str() || c.get(3).unwrap().len() > MAX_ELEMENT {
            continue;
        }
        let value = c.get(3).unwrap();
        if let Some(family) = family(c.get(2).unwrap().as_str()) {
            if accept(family, value.as_str().trim(), true, true) {
                let lead = value.as_str().len() - value.as_str().trim_start().len();
                out.push((value.start() + lead, value.start() + lead + value.as_str().trim().len()));
            }
        }
    }
}

/// `<add key="ClearTextPassword" value="secret" />`.
fn named_value(text: &str, re: &Regex, out: &mut Spans) {
    for c in re.captures_iter(text) {
        let value = c.get(2).unwrap();
        if let Some(family) = family(c.get(1).unwrap().as_str()) {
            if accept(family, value.as_str(), true, true) {
                out.push((value.start(), value.end()));
            }
        }
    }
}

/// A markdown table row naming a secret and giving its value in backticks.
fn table(text: &str, re: &Regex, out: &mut Spans) {
    for c in re.captures_iter(text) {
        let value = c.get(2).unwrap();
        if let Some(family) = family(c.get(1).unwrap().as_str()) {
            if accept(family, value.as_str().trim(), true, true) {
                out.push((value.start(), value.end()));
            }
        }
    }
}

/// Words after "key" or "token" that name something about it rather than give it.
#[rustfmt::skip]
const ATTRIBUTES: &[&str] = &[
    "id", "ids", "fingerprint", "fingerprints", "hash", "hashes", "digest", "checksum", "name", "names", "type",
    "length", "size", "count", "file", "path", "url", "format", "version", "prefix", "suffix", "index", "usage",
    "limit",
];

/// "the staging password is Xk29!aQ", "use password r4AS-eX0dH for …": a random-looking word
/// among the few after the word password (or token, API key, …) on the same line.
fn prose(text: &str, re: &Regex, out: &mut Spans) {
    for m in re.find_iter(text) {
        // The keyword is a word of its own (`token.rs`, `token_file` are names).
        if !matches!(after(text, m.end()), Some(b' ' | b'\t' | b':' | b'=')) {
            continue;
        }
        let b = text.as_bytes();
        let mut at = m.end();
        for _ in 0..6 {
            // The next word on the same line.
            let mut word_start = at;
            while word_start < b.len() && matches!(b[word_start], b' ' | b'\t' | b'\r') {
                word_start += 1;
            }
            let mut end = word_start;
            while end < b.len() && !b[end].is_ascii_whitespace() {
                end += 1;
            }
            if end == word_start {
                break;
            }
            let len = end - word_start;
            let word = cut_escapes(&text[word_start..end]);
            // An earlier pass took the secret here; looking further would find another word.
            if word.contains(super::REDACTED) {
                break;
            }
            let lead = word.len() - word.trim_start_matches(['`', '"', '\'']).len();
            let core = word.trim_start_matches(['`', '"', '\'']).trim_end_matches([',', ';', ':', ')', '`', '"', '\'']);
            // "the key id is …", "token hash: …": an attribute of the secret, not the secret.
            if ATTRIBUTES.contains(&core.to_ascii_lowercase().as_str()) {
                break;
            }
            let prose_chars = core.bytes().all(|b| b.is_ascii_alphanumeric() || b"!@#$%^*+-_.~=?/".contains(&b));
            if prose_chars
                && core.bytes().any(|b| b.is_ascii_digit())
                && (strong(core) || random_token(core.trim_end_matches('.')))
            {
                out.push((word_start + lead, word_start + lead + core.len()));
                break;
            }
            at = word_start + len;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Assignments.

/// What a secret-named key holds, which decides how sure a value must look.
#[derive(Clone, Copy, PartialEq)]
enum Family {
    /// Any literal is a secret, however short or plain (`password = "changeme"`).
    Password,
    /// Tokens, secrets, API keys: a literal that is not a plain word.
    Token,
    /// A `key` of no known kind: only a long random value.
    Key,
}

/// Words before `key` that make it a credential (`api_key`, `AccountKey`, `TS_AUTHKEY`).
#[rustfmt::skip]
const KEY_KINDS: &[&str] = &[
    "api", "app", "access", "secret", "private", "signing", "sign", "master", "license", "licence", "encryption",
    "encrypt", "crypt", "auth", "sdk", "client", "consumer", "account", "session", "admin", "webhook", "hmac", "jwt",
    "tls", "ssl", "server", "shared", "preshared", "static", "storage", "service", "deploy", "root", "cookie", "bot",
    "developer", "subscription", "integration", "ingest", "insert", "personal", "rest", "project", "org", "partner",
    "merchant", "secure", "security", "cipher", "aes", "hash", "salt", "ca", "live", "prod", "test", "write", "read",
];
/// Words before `key` that make it anything but a credential.
#[rustfmt::skip]
const NOT_KEY_KINDS: &[&str] = &[
    "public", "pub", "publishable", "primary", "foreign", "sort", "partition", "cache", "idempotency", "dedup",
    "dedupe", "lookup", "row", "range", "composite", "unique", "index", "map", "object", "bucket", "host", "routing",
    "cursor", "ssh", "gpg", "pgp", "hot", "short", "group", "sub", "id", "i18n", "translation", "react", "list",
    "foreign", "natural", "surrogate", "shard", "dict", "hash_",
];
/// Words before `token` that name something other than a credential.
#[rustfmt::skip]
const NOT_TOKEN_KINDS: &[&str] = &[
    "next", "page", "pagination", "continuation", "cancellation", "cursor", "sync", "max", "min", "num", "n", "total",
    "count", "eos", "bos", "pad", "unk", "sep", "cls", "mask", "start", "end", "special", "stop", "sos", "eot", "input",
    "output", "prompt", "completion", "context", "chat", "bad", "last", "first", "lexer", "parse", "csrf", "xsrf",
    "anti_forgery", "antiforgery", "resume", "wait", "change", "etag", "sentence", "word", "reasoning",
];

/// The family of a key name, from its last word (`DB_PASSWORD`, `clientSecret`, `X-API-Key`,
/// `PGPASSWORD`), or `None` when it is not secret-named.
fn family(key: &str) -> Option<Family> {
    let words = split_words(key);
    let last = words.last()?.as_str();
    let prev = if words.len() >= 2 { words[words.len() - 2].as_str() } else { "" };
    let glued = |suffix: &str| last.len() > suffix.len() && last.ends_with(suffix);
    if ["password", "passwd", "passphrase", "passcode", "pwd", "contraseña", "mnemonic"].contains(&last)
        || (last == "pw" && words.len() > 1)
        || glued("password")
        || glued("passwd")
        || glued("passphrase")
        || ["storepass", "keypass", "requirepass", "masterpass"].iter().any(|s| last.ends_with(s))
        || (last == "pass" && (words.len() > 1 || key.eq_ignore_ascii_case("pass")))
        || (last == "phrase" && (prev == "seed" || prev == "recovery"))
    {
        return Some(Family::Password);
    }
    if last == "secret" || glued("secret") {
        return Some(Family::Token);
    }
    if last == "token" || glued("token") {
        let kind = if last == "token" { prev } else { &last[..last.len() - 5] };
        return Some(if NOT_TOKEN_KINDS.contains(&kind) { Family::Key } else { Family::Token });
    }
    if ["auth", "authtoken", "bearer", "credential", "credentials", "creds", "apikey", "dockerconfigjson", "dockercfg"]
        .contains(&last)
        || (last == "pat" && words.len() > 1)
    {
        return Some(Family::Token);
    }
    // `secret_key_base`, `client-key-data`: the key is the word before.
    let (last, prev) = match last {
        "base" | "data" if prev == "key" && words.len() >= 3 => ("key", words[words.len() - 3].as_str()),
        _ => (last, prev),
    };
    if last == "key" || glued("key") {
        let kind = if last == "key" { prev } else { &last[..last.len() - 3] };
        if NOT_KEY_KINDS.contains(&kind) {
            return None;
        }
        return Some(if KEY_KINDS.iter().any(|k| kind.ends_with(k)) { Family::Token } else { Family::Key });
    }
    None
}

/// Lowercase words of an identifier: split at non-alphanumerics and camelCase humps.
fn split_words(key: &str) -> Vec<String> {
    let mut words = Vec::new();
    for part in key.split(|c: char| !(c.is_alphanumeric())) {
        let chars: Vec<char> = part.chars().collect();
        let mut word = String::new();
        for (i, &c) in chars.iter().enumerate() {
            let hump = i > 0
                && c.is_uppercase()
                && (chars[i - 1].is_lowercase()
                    || chars[i - 1].is_ascii_digit()
                    || (chars[i - 1].is_uppercase() && chars.get(i + 1).is_some_and(|n| n.is_lowercase())));
            if hump && !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            word.extend(c.to_lowercase());
        }
        if !word.is_empty() {
            words.push(word);
        }
    }
    words
}

/// A value as written: where it starts and ends (inside its quotes), and how it was written.
struct Value {
    start: usize,
    end: usize,
    quoted: bool,
    backtick: bool,
}

/// The value starting at byte `i` (after spaces): a quoted string on one line (`"…"`, `'…'`,
/// `` `…` ``, `\"…\"`, `&quot;…&quot;`, `b'…'`), or a bare run up to whitespace, a quote, markup
/// or a delimiter (`;`, `,`, brackets, `&` that starts an entity or a query parameter).
fn read_value(text: &str, i: usize) -> Option<Value> {
    let bytes = text.as_bytes();
    let mut i = i;
    while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t') {
        i += 1;
    }
    let rest = &text[i..];
    const PAIRS: &[(&str, &str)] = &[
        ("\\\"", "\\\""),
        ("\\'", "\\'"),
        ("&quot;", "&quot;"),
        ("&apos;", "&apos;"),
        ("&#34;", "&#34;"),
        ("&#39;", "&#39;"),
        ("&#x27;", "&#x27;"),
        ("&#x22;", "&#x22;"),
    ];
    for (open, close) in PAIRS {
        if let Some(body) = rest.strip_prefix(open) {
            let window = &body[..floor_boundary(body, body.len().min(8192))];
            let line = &window[..window.find('\n').unwrap_or(window.len())];
            let end = line.find(close)?;
            let start = i + open.len();
            return Some(Value { start, end: start + end, quoted: true, backtick: false });
        }
    }
    let mut q = i;
    if matches!(bytes.get(q), Some(b'b' | b'B' | b'r' | b'R' | b'u' | b'U'))
        && matches!(bytes.get(q + 1), Some(b'"' | b'\''))
    {
        q += 1;
    }
    if let Some(&quote) = bytes.get(q).filter(|b| matches!(b, b'"' | b'\'' | b'`')) {
        let mut j = q + 1;
        // A value longer than this is not a credential (a key block has its own rule).
        let limit = (q + 8192).min(bytes.len());
        while j < limit {
            match bytes[j] {
                b'\\' if quote != b'`' => j += 2,
                b'\n' => return None,
                b if b == quote => {
                    return Some(Value { start: q + 1, end: j, quoted: true, backtick: quote == b'`' });
                }
                _ => j += 1,
            }
        }
        return None;
    }
    let mut j = i;
    while j < bytes.len() {
        match bytes[j] {
            b' ' | b'\t' | b'\n' | b'\r' | b'"' | b'\'' | b'`' | b'<' | b'>' | b';' | b',' | b'(' | b')' | b'{'
            | b'}' | b'[' | b']' | b'|' | b'\\' => break,
            b'&' if amp_ends(&text[j + 1..]) => break,
            _ => j += 1,
        }
    }
    (j > i).then_some(Value { start: i, end: j, quoted: false, backtick: false })
}

/// Whether an `&` ends a bare value: it starts an entity, the next query parameter, or `&&`.
fn amp_ends(after: &str) -> bool {
    let b = after.as_bytes();
    if b.first().is_none_or(|c| c.is_ascii_whitespace() || *c == b'&' || *c == b'#') {
        return true;
    }
    let name = b.iter().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-')).count();
    name > 0 && matches!(b.get(name), Some(b';' | b'='))
}

/// `KEY = value`, `"key": "value"`, `key: value`, `define('KEY', 'value')` and the like, for a
/// secret-named key: the value, unless it reads as code, a reference or a placeholder.
fn assignment(text: &str, re: &Regex, out: &mut Spans) {
    let mut first_section: Option<usize> = None;
    for c in re.captures_iter(text) {
        if let Some(pair) = Pair::read(text, &c) {
            out.extend(pair.value(text, &mut first_section));
        }
    }
}

/// The key side of an assignment that names a secret: where its key and separator are, and how
/// sure a value must look.
struct Pair<'t> {
    key: regex::Match<'t>,
    sep: regex::Match<'t>,
    /// The quote around the key, if any.
    quote: Option<regex::Match<'t>>,
    quoted_key: bool,
    key_start: usize,
    name: &'t str,
    family: Family,
    /// The text before the key, without its quote.
    opener: &'t str,
}

impl<'t> Pair<'t> {
    /// The key side of a match, or `None` when the key is not a secret's or the separator does
    /// not assign (a path, a URL, a conditional, a comparison, a variable's default).
    fn read(text: &'t str, c: &Captures<'t>) -> Option<Pair<'t>> {
        let key = c.get(1).unwrap();
        let sep = c.get(3).unwrap();
        // Markdown bold (`**API key**:`) closes a label, not a quoted key.
        let quoted_key = c.get(2).is_some_and(|q| !matches!(q.as_str(), "**" | "__"));
        // In a JSON string, `\npassword: x` starts a line with `password`.
        let escaped_line = before(text, key.start()) == Some(b'\\') && key.as_str().starts_with(['n', 'r', 't']);
        let key_start = key.start() + usize::from(escaped_line);
        let name = text[key_start..key.end()].trim_start_matches(['-', '.']);
        let family = family(name)?;
        let before_key = &text[..key.start()];
        // `Kind::Secret =>` is a path; `https://token:x@` is a URL's userinfo.
        // `${DB_PASSWORD:-default}` is a variable's default.
        if before_key.ends_with("::")
            || before_key.ends_with("//")
            || before_key.ends_with("->")
            || before_key.ends_with("${")
        {
            return None;
        }
        let sep_s = sep.as_str();
        if sep_s == ":" && matches!(after(text, sep.end()), Some(b':' | b'/')) {
            return None;
        }
        // `password =~ /re/` matches a pattern; `PASSWORD=~x` assigns `~x`.
        if sep_s == "=" && after(text, sep.end()) == Some(b'~') && before(text, sep.start()) == Some(b' ') {
            return None;
        }
        // psql's `PASSWORD :'var'` interpolates a variable.
        if sep_s == ":"
            && sep.start() > key.end() + c.get(2).map_or(0, |q| q.len())
            && after(text, sep.end()) == Some(b'\'')
        {
            return None;
        }
        // `arn:aws:secretsmanager:…:secret:name` names a secret.
        let near = floor_boundary(text, key.start().saturating_sub(256));
        let token_start =
            text[near..key.start()].rfind(|c: char| c.is_ascii_whitespace()).map_or(near, |i| near + i + 1);
        if text[token_start..].starts_with("arn:") {
            return None;
        }
        // "public key: …", "API Key: …": the word before says what kind of key it is. It does not
        // make a password anything else: `map password = "…"` is still one.
        let mut family = family;
        if split_words(name).len() == 1 && family != Family::Password {
            let kind = previous_word(before_key.trim_end_matches(['*', '_']));
            if NOT_KEY_KINDS.contains(&kind.as_str()) {
                return None;
            }
            if family == Family::Key && KEY_KINDS.contains(&kind.as_str()) {
                family = Family::Token;
            }
        }
        let opener = before_key.trim_end_matches(['"', '\'', '`', '\\']).trim_end();
        if sep_s == "," && !(quoted_key && setter_call(opener)) {
            return None;
        }
        // A quoted key opens a pair: after `{`, `,`, a bracket or at the start of a line, not in
        // a conditional (`cond ? "PASS" : "FAIL"`).
        if quoted_key && sep_s == ":" {
            // Back to the quote that opens the key (`'//registry:_auth': …` holds a colon).
            let quote = c.get(2).unwrap().as_str();
            let near = floor_boundary(text, key.start().saturating_sub(256));
            let line = &text[near..key.start()];
            let line = &line[line.rfind('\n').map_or(0, |i| i + 1)..];
            let head = match line.rfind(quote) {
                Some(i) => &line[..i],
                None => line,
            }
            .trim_end_matches([' ', '\t']);
            // Anywhere but after the `?` of a conditional: a pair quoted in prose or a log line
            // (`use this: "pwd": "…"`) is a pair too.
            let opens = !head.ends_with('?');
            if !opens {
                return None;
            }
        }
        Some(Pair { key, sep, quote: c.get(2), quoted_key, key_start, name, family, opener })
    }

    /// The span of the value when it reads as a secret (not code, a reference or a placeholder).
    fn value(&self, text: &str, first_section: &mut Option<usize>) -> Option<(usize, usize)> {
        let Pair { key, sep, quote, quoted_key, key_start, name, family, opener } = *self;
        let sep_s = sep.as_str();
        // `KEY==x` in a shell or .env line assigns `=x`; with spaces it compares.
        let env_style = !quoted_key && key.end() == sep.start() && name.bytes().all(|b| !b.is_ascii_lowercase());
        let value_from = if env_style && sep_s.starts_with("==") { sep.start() + 1 } else { sep.end() };
        let v = read_value(text, value_from)?;
        let value = &text[v.start..v.end];
        // YAML: `*alias` and `!Tag arg` stand for other values.
        if sep_s == ":" && !v.quoted && (yaml_alias(value) || (value.starts_with('!') && yaml_tag(text, v.end))) {
            return None;
        }
        if v.backtick && (value.contains(char::is_whitespace) || value.contains('$')) {
            return None;
        }
        if !v.quoted && matches!(after(text, v.end), Some(b'(' | b'[' | b'{')) {
            return None;
        }
        if v.quoted && matches!(before(text, v.start.saturating_sub(1)), Some(b'f' | b'F')) && value.contains('{') {
            return None;
        }
        // A bare word is a literal where code cannot be: `KEY=word` in a shell or .env line (not
        // a keyword argument), or a YAML `key: word` line.
        let tight = key.end() + quote.map_or(0, |q| q.len()) == sep.start() && v.start == sep.end();
        let literal = if sep_s == "=" && tight && !quoted_key {
            let prev = opener.trim_end_matches(['-', '.']).trim_end().bytes().last();
            !matches!(prev, Some(b'(' | b','))
        } else if sep_s == "=" && !quoted_key && !v.quoted && yaml_line(text, key_start, v.end) {
            // `password = value` is a literal in an INI file (a `[section]` line before it).
            *first_section.get_or_insert_with(|| ini_section(text)) < key_start
        } else {
            sep_s == ":" && !quoted_key && !v.quoted && yaml_line(text, key_start, v.end)
        };
        let value = if v.quoted { value } else { cut_escapes(value) };
        let end = v.start + value.len();
        accept(family, value, v.quoted, literal).then_some((v.start, end))
    }
}

/// Whether `head` ends with the opening of a call that sets a named value: `define(`,
/// `os.Setenv(`, `putenv(`, `localStorage.setItem(`.
fn setter_call(head: &str) -> bool {
    #[rustfmt::skip]
    const SETTERS: &[&str] = &[
        "define", "setenv", "putenv", "set", "setdefault", "put", "setitem", "setproperty", "setsecret", "store",
        "setenvironmentvariable", "add_secret", "set_secret", "set_password", "setpassword", "setvar", "set_var",
    ];
    let Some(head) = head.strip_suffix('(') else { return false };
    let head = head.trim_end();
    let name = head.rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next().unwrap_or("");
    SETTERS.contains(&name.to_ascii_lowercase().as_str())
}

/// The lowercase word just before `end`, across spaces.
fn previous_word(text: &str) -> String {
    let t = text.trim_end_matches([' ', '\t']);
    let word = t.char_indices().rev().take(64).take_while(|(_, c)| c.is_ascii_alphanumeric()).last();
    word.map_or(String::new(), |(start, _)| t[start..].to_ascii_lowercase())
}

/// A YAML alias (`*db_password`).
fn yaml_alias(v: &str) -> bool {
    v.strip_prefix('*').is_some_and(|a| {
        a.bytes().next().is_some_and(|b| b.is_ascii_lowercase() || b == b'_')
            && a.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_-".contains(&b))
    })
}

/// Whether a `!word` value is a YAML tag: an argument follows it on the line.
fn yaml_tag(text: &str, end: usize) -> bool {
    let rest = &text.as_bytes()[end..];
    let spaces = rest.iter().take_while(|&&b| b == b' ' || b == b'\t').count();
    spaces > 0 && rest.get(spaces).is_some_and(|b| !b.is_ascii_whitespace() && *b != b'#')
}

/// A bare value inside a JSON string ends at an escaped newline or quote.
fn cut_escapes(v: &str) -> &str {
    let cut = ["\\n", "\\r", "\\t", "\\\""].iter().filter_map(|e| v.find(e)).min().unwrap_or(v.len());
    &v[..cut]
}

/// Where the first `[section]` header line of an INI file starts (the text's length if none).
fn ini_section(text: &str) -> usize {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let l = line.trim();
        if l.len() > 2
            && l.starts_with('[')
            && l.ends_with(']')
            && l[1..l.len() - 1].bytes().all(|b| b.is_ascii_alphanumeric() || b" _.-\"'".contains(&b))
        {
            return at;
        }
        at += line.len();
    }
    text.len()
}

/// The char boundary at or before `i`.
fn floor_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Whether `key: value` is a whole YAML line (indentation or a list dash before the key, nothing
/// but a comment after the value).
fn yaml_line(text: &str, key_start: usize, value_end: usize) -> bool {
    let b = text.as_bytes();
    // Back over indentation and a list dash to the start of the line (or an escaped `\n`).
    let mut s = key_start;
    while s > 0 && matches!(b[s - 1], b' ' | b'\t' | b'-') {
        s -= 1;
    }
    let line_start = s == 0 || b[s - 1] == b'\n' || (s >= 2 && &b[s - 2..s] == b"\\n");
    // On over spaces to the end of the line, a comment, or the end of a JSON string.
    let mut e = value_end;
    while e < b.len() && matches!(b[e], b' ' | b'\t' | b'\r') {
        e += 1;
    }
    let line_end = e == b.len() || matches!(b[e], b'\n' | b'"' | b'#') || b[e..].starts_with(b"\\n");
    line_start && line_end
}

/// Whether a value of a key of `family` is a secret. `literal`: a bare word there is a string,
/// not a name (a shell assignment, a YAML value, a command-line argument).
fn accept(family: Family, v: &str, quoted: bool, literal: bool) -> bool {
    if !v.bytes().any(|b| b.is_ascii_alphanumeric()) || v.contains(['<', '>']) {
        return false;
    }
    if placeholder(v) || reference(v) || keyword(v) || v.contains("://") || path_like(v) || file_name(v) {
        return false;
    }
    // `token::Brace`, `self->key`: paths and members.
    if !quoted && (v.contains("::") || v.contains("->")) {
        return false;
    }
    // `&str`, `*const c_char`, `@password`, `Get-Credential`: code where a literal is not certain.
    if !quoted && !literal {
        let name = v.trim_start_matches(['&', '*', '@', '#']);
        if name.len() < v.len()
            && (wordish(name) || dotted_code(name) || name.starts_with('\'') || name.starts_with("mut "))
        {
            return false;
        }
        if v.starts_with('&') || cmdlet(v) {
            return false;
        }
    }
    let hex = v.len() <= 18 && v.starts_with("0x") && v.len() > 2 && v[2..].bytes().all(|b| b.is_ascii_hexdigit());
    if hex {
        return false;
    }
    let number = v.bytes().all(|b| b.is_ascii_digit() || b == b'.' || b == b'-' || b == b'_');
    match family {
        Family::Password => {
            if number {
                return v.len() >= 4 && v.bytes().any(|b| b.is_ascii_digit());
            }
            if quoted || literal {
                return true;
            }
            // A name (`pw`, `password1`) where code is possible; a digit inside makes it a value.
            let digit_inside = v.trim_end_matches(|c: char| c.is_ascii_digit()).bytes().any(|b| b.is_ascii_digit());
            !dotted_code(v)
                && (!wordish(v) || digit_inside || (v.bytes().any(|b| b.is_ascii_digit()) && !identifier_like(v)))
        }
        Family::Token => {
            if number {
                return v.len() >= 16;
            }
            if quoted && v.contains(char::is_whitespace) {
                return v.bytes().any(|b| b.is_ascii_digit());
            }
            if !quoted && !literal && dotted_code(v) {
                return false;
            }
            if resource_path(v) {
                return false;
            }
            token_like(v) || (quoted && v.len() >= 8 && !wordish(v) && !plain(v))
        }
        Family::Key => random_token(v),
    }
}

// ---------------------------------------------------------------------------------------------
// Judging values.

/// Placeholders: `xxxx`, `****`, `...`, `<your-key>`, `your_api_key_here`, `REPLACE_ME`, `TODO`,
/// `[redacted]`, `%s`, and an ALL_CAPS name (`PASSWORD` in a URL template, `YOUR_API_KEY`).
fn placeholder(v: &str) -> bool {
    let t = v.trim();
    if t.is_empty() {
        return true;
    }
    let lower = t.to_ascii_lowercase();
    // A run of x's or stars stands for a value; a random token holds at most a short one.
    if t.contains("...")
        || t.contains('…')
        || t.contains("xxxx")
        || t.contains("XXXX")
        || t.contains("****")
        || t.contains('•')
    {
        return true;
    }
    if t.bytes().all(|b| matches!(b, b'*' | b'x' | b'X' | b'.' | b'#' | b'?' | b'-' | b'_' | b' ')) {
        return true;
    }
    let first = t.as_bytes()[0];
    let last = t.as_bytes()[t.len() - 1];
    if matches!((first, last), (b'[', b']') | (b'<', b'>') | (b'{', b'}') | (b'(', b')')) {
        return true;
    }
    if ["%s", "%d", "%v", "{}", "{0}", "?"].contains(&t) {
        return true;
    }
    // An ALL_CAPS name (`PASSWORD` in a URL template, `YOUR_API_KEY`), not random capitals.
    if t.len() >= 5 && t.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') {
        let vowels = t.bytes().filter(|b| b"AEIOUY".contains(b)).count();
        if t.contains('_') || vowels * 4 >= t.len() {
            return true;
        }
    }
    #[rustfmt::skip]
    const WORDS: &[&str] = &[
        "your", "yours", "here", "replace", "replaceme", "placeholder", "redacted", "dummy", "todo", "tbd", "fixme",
        "insert", "example", "sample", "fake", "changeit_placeholder", "none", "null", "undefined", "secret_here",
        "my_secret", "mysecret", "mypassword", "my_password",
    ];
    if lower.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| WORDS.contains(&w)) {
        return true;
    }
    // `user:password`, `username/password`: the names of values, not values.
    const NAMES: &[&str] = &[
        "user", "username", "login", "password", "pass", "passwd", "pwd", "secret", "token", "key", "value", "foo",
        "bar", "baz", "name",
    ];
    lower.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).all(|w| NAMES.contains(&w))
}

/// References to a secret kept elsewhere: variables, templates, command substitutions, secret
/// managers, YAML tags and aliases.
fn reference(v: &str) -> bool {
    let t = v.trim();
    let b = t.as_bytes();
    if b.is_empty() {
        return false;
    }
    for p in ["${", "$(", "#{", "{{", "{%", "%(", "<%", "@{", "$env:", "$ENV{", "ENV[", "process.env", "os.environ"] {
        if t.starts_with(p) {
            return true;
        }
    }
    if b[0] == b'$' && b.get(1).is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_' || *c == b'{') {
        return true;
    }
    if b[0] == b'%'
        && b.len() > 2
        && b[b.len() - 1] == b'%'
        && b[1..b.len() - 1].iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        return true;
    }
    // A Maven filter (`@db.password@`).
    if b[0] == b'@'
        && b.len() > 2
        && b[b.len() - 1] == b'@'
        && b[1..b.len() - 1].iter().all(|c| c.is_ascii_alphabetic() || b"._".contains(c))
    {
        return true;
    }
    // A YAML tag that takes its value from elsewhere (CloudFormation, mkdocs, Ansible).
    #[rustfmt::skip]
    const TAGS: &[&str] = &[
        "!ref", "!sub", "!getatt", "!importvalue", "!join", "!select", "!split", "!findinmap", "!base64", "!cidr",
        "!getazs", "!if", "!env", "!vault", "!secret", "!include", "!unsafe", "!!str", "!!binary", "!encrypted",
    ];
    if TAGS.contains(&t.to_ascii_lowercase().as_str()) {
        return true;
    }
    let lower = t.to_ascii_lowercase();
    [
        "vault:",
        "op:",
        "env:",
        "file:",
        "secret:",
        "secrets:",
        "ssm:",
        "arn:",
        "sm:",
        "awssm:",
        "gcpsm:",
        "azkv:",
        "keyvault:",
        "ref:",
        "k8s:",
        "sops:",
        "ref+",
    ]
    .iter()
    .any(|p| lower.starts_with(p))
}

/// Keywords, literals and type names that stand where a value would.
fn keyword(v: &str) -> bool {
    #[rustfmt::skip]
    const WORDS: &[&str] = &[
        "none", "null", "nil", "true", "false", "yes", "no", "on", "off", "undefined", "nan", "void", "str", "string",
        "bytes", "int", "integer", "bool", "boolean", "number", "float", "object", "any", "unknown", "char",
        "secretstr", "secretbytes", "option", "optional", "required", "self", "this", "new", "await", "async", "yield",
        "typeof", "lambda", "function", "return", "const", "let", "var", "def", "fn", "mut", "ref", "static", "final",
        "private", "public", "protected", "readonly", "default", "empty", "blank", "hidden", "masked", "~", "-", "auto",
        "disabled", "enabled", "prompt", "ask", "env", "environment", "vault", "keychain", "keyring", "sha256",
        "sha512", "md5", "plain", "plaintext", "bcrypt", "argon2", "scrypt", "pbkdf2", "hash", "hashed", "secret",
        "password", "token", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
        "f32", "f64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
        "utf8", "base64",
    ];
    WORDS.contains(&v.trim().to_ascii_lowercase().as_str())
}

fn path_like(v: &str) -> bool {
    let rooted = v.starts_with('/') || v.starts_with("~/") || v.starts_with("./") || v.starts_with("../");
    let drive = v.len() > 3 && v.as_bytes()[1] == b':' && v.as_bytes()[2] == b'\\';
    (rooted || drive)
        && v.len() > 1
        && v.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'\\' | b'.' | b'_' | b'-' | b'~' | b':'))
}

/// A file name (`sa-key-2024.json`): where a secret is, not the secret.
fn file_name(v: &str) -> bool {
    const EXTENSIONS: &[&str] = &[
        "json", "pem", "key", "p12", "pfx", "jks", "keystore", "crt", "cer", "der", "txt", "yaml", "yml", "env",
        "toml", "ini", "cfg", "conf", "gpg", "asc", "pub", "kdbx", "enc", "age", "b64",
    ];
    v.rsplit_once('.').is_some_and(|(stem, ext)| {
        EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
            && !stem.is_empty()
            && stem.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/'))
    })
}

/// A PowerShell cmdlet name (`Get-Credential`, `Read-Host`).
fn cmdlet(v: &str) -> bool {
    v.split_once('-').is_some_and(|(verb, noun)| {
        verb.len() >= 3
            && noun.len() >= 3
            && verb.as_bytes()[0].is_ascii_uppercase()
            && noun.as_bytes()[0].is_ascii_uppercase()
            && verb[1..].bytes().all(|b| b.is_ascii_lowercase())
            && noun.bytes().all(|b| b.is_ascii_alphabetic())
    })
}

/// A dotted name (`settings.API_KEY`, `var.db_password`, `self.next_token`): code.
fn dotted_code(v: &str) -> bool {
    v.contains('.') && v.split('.').all(|s| !s.is_empty() && (wordish(s) || s.starts_with('$') && wordish(&s[1..])))
}

/// An identifier that reads as words (`postgres`, `api_key`, `getServerSideProps`, `password1`,
/// `sha256`), as opposed to random characters (`hunter2hunter2`, `XM8T5v`, `SGJseMQqLezh`).
fn wordish(v: &str) -> bool {
    let b = v.as_bytes();
    if b.is_empty() || !(b[0].is_ascii_alphabetic() || b[0] == b'_') {
        return false;
    }
    if !b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_') {
        return false;
    }
    v.split('_').all(|part| {
        let letters = part.trim_end_matches(|c: char| c.is_ascii_digit());
        let digits = part.len() - letters.len();
        letters.bytes().all(|c| c.is_ascii_alphabetic()) && digits <= 3 && natural_case(letters)
    })
}

/// An identifier with a conventional shape for a variable (`password1`, `pw_2`, `tok`), as
/// opposed to letters and digits mixed like a password (`pw1x`).
fn identifier_like(v: &str) -> bool {
    let trailing = v.len() - v.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    trailing <= 1 || v.contains('_')
}

/// Letters whose case changes like words (`camelCase`, `HTTPServer`), not at random.
fn natural_case(w: &str) -> bool {
    w.len() < 8 || changes(w) * 5 < w.len() * 2
}

/// How often the kind of character (lower, upper, digit, other) changes along `v`.
fn changes(v: &str) -> usize {
    let kind = |b: u8| match b {
        b'a'..=b'z' => 0,
        b'A'..=b'Z' => 1,
        b'0'..=b'9' => 2,
        _ => 3,
    };
    v.as_bytes().windows(2).filter(|w| kind(w[0]) != kind(w[1])).count()
}

/// A path of words (`secret/data/db:password`): where a secret is kept, not the secret.
fn resource_path(v: &str) -> bool {
    v.contains('/') && v.split(['/', ':', '-', '_', '.']).all(|p| p.is_empty() || wordish(p))
}

/// Lowercase letters and separators only (`same-origin`, `db-creds`): a setting, not a token.
fn plain(v: &str) -> bool {
    v.bytes().all(|b| b.is_ascii_lowercase() || matches!(b, b'-' | b'_' | b'.'))
}

/// A literal that looks like a token: long enough, not a word, with a digit, a symbol or random
/// case.
fn token_like(v: &str) -> bool {
    if v.len() < 8 || v.contains(char::is_whitespace) || wordish(v) {
        return false;
    }
    // Words are joined by `-`, `_`, `.`, `/` and `:`; other symbols (and `=` inside) are random.
    let core = v.trim_end_matches('=');
    core.bytes().any(|b| !b.is_ascii_alphanumeric() && !b"-_./:".contains(&b))
        || v.split(|c: char| !c.is_ascii_alphanumeric()).any(|p| !p.is_empty() && !word_or_number(p))
}

/// A piece of a value that reads as a word (`cache`, `v7`, `Token`) or a number (`2024`).
fn word_or_number(p: &str) -> bool {
    p.bytes().all(|b| b.is_ascii_digit()) || wordish(p)
}

/// A long random token with letters and digits (for a `key` of unknown kind, a user name).
fn random_token(v: &str) -> bool {
    if v.len() < 16 || !token_like(v) || placeholder(v) || reference(v) || v.contains(char::is_whitespace) {
        return false;
    }
    // Most of it in runs of random characters: not words and numbers strung together.
    let random: usize = v
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|p| p.len() >= 6 && !word_or_number(p))
        .map(str::len)
        .sum();
    random * 5 >= v.len() * 3 && v.bytes().any(|b| b.is_ascii_digit()) && v.bytes().any(|b| b.is_ascii_alphabetic())
}

/// A word in prose that can only be a password: mixed case, a digit or symbol, and characters
/// that change kind often (`Xk29!aQ`, not `Argon2id` or `OAuth2`).
fn strong(v: &str) -> bool {
    let core = v.trim_end_matches('.');
    let b = core.as_bytes();
    if b.len() < 6 || core.contains("://") || path_like(core) || reference(core) || placeholder(core) {
        return false;
    }
    if let Some(at) = core.find('@') {
        // An e-mail address: a lowercase domain after the `@`.
        let domain = &core[at + 1..];
        let labels: Vec<&str> = domain.split('.').collect();
        if labels.len() >= 2
            && labels
                .iter()
                .all(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'))
        {
            return false;
        }
    }
    let upper = b.iter().any(|c| c.is_ascii_uppercase());
    let lower = b.iter().any(|c| c.is_ascii_lowercase());
    let digit = b.iter().any(|c| c.is_ascii_digit());
    let symbol = b.iter().any(|c| !c.is_ascii_alphanumeric());
    let _ = symbol;
    let n = changes(core);
    upper && lower && digit && n >= 3 && n * 3 >= b.len() && !wordy(core)
}

/// Whether a mixed string is built from words (`Argon2id`, `Ed25519KeyPair`): a lowercase run
/// over two fifths of a short string, or two capitalised words and no symbol.
fn wordy(v: &str) -> bool {
    let b = v.as_bytes();
    let mut longest = 0;
    let mut run = 0;
    let mut capitalised = 0;
    for (i, &c) in b.iter().enumerate() {
        run = if c.is_ascii_lowercase() { run + 1 } else { 0 };
        longest = longest.max(run);
        if c.is_ascii_uppercase() && b.len() >= i + 4 && b[i + 1..i + 3].iter().all(|c| c.is_ascii_lowercase()) {
            capitalised += 1;
        }
    }
    let symbols = b.iter().any(|c| !c.is_ascii_alphanumeric());
    b.len() < 20 && (longest * 5 > b.len() * 2 || (capitalised >= 2 && !symbols))
}

fn after(text: &str, i: usize) -> Option<u8> {
    text.as_bytes().get(i).copied()
}

fn before(text: &str, i: usize) -> Option<u8> {
    i.checked_sub(1).map(|j| text.as_bytes()[j])
}
