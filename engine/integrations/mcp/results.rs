//! What each tool answers, as one struct per tool: serialised it is the result's
//! `structuredContent`, which Claude Code hands the model in place of the text, so it holds the
//! whole answer — the hits, the abstention warning, how the search ran, the next step — and
//! nothing the model cannot use (no echo of the arguments, no timings unless asked for, no empty
//! fields). The text content is rendered from the same struct, so the two cannot say different
//! things, and each struct's JSON Schema (the tool's `outputSchema`) sits beside it.
//!
//! Every string here was cleaned by the tools (control and format characters out, secrets
//! redacted); serde_json escapes the rest.

use serde::Serialize;
use serde_json::{json, Value};
use std::fmt::Write;

/// A tool's answer: its JSON is the structured result, its text the same for a reader.
pub(crate) trait Reply: Serialize {
    /// The text content.
    fn text(&self) -> String;
    /// The JSON Schema every value of this type conforms to (`outputSchema` in `tools/list`).
    fn schema() -> Value;
}

/// `warning`, `note` and `next` as a schema declares them.
fn guidance() -> Value {
    json!({
        "warning": {"type": "string", "description": "Nothing found seems to answer the query: the hits are weak leads."},
        "note": {"type": "string", "description": "What to know about this answer (how the search ran, what was left out or not done)."},
        "next": {"type": "string", "description": "What to do next."}
    })
}

/// An object schema: `properties` plus the guidance fields named in `with`, `required` as given,
/// nothing else allowed.
fn object(mut properties: Value, with: &[&str], required: &[&str]) -> Value {
    let guidance = guidance();
    for key in with {
        properties[*key] = guidance[*key].clone();
    }
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// `[first, last]` line of a chunk.
fn lines_schema() -> Value {
    json!({"type": "array", "items": {"type": "integer", "minimum": 0}, "minItems": 2, "maxItems": 2, "description": "First and last line."})
}

/// `search`'s answer.
#[derive(Serialize)]
pub(crate) struct SearchReply {
    /// The abstention verdict said nothing answers, and there are hits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// The search ran on less than usual: BM25 only, or vectors still being built.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub results: Vec<SearchHit>,
    pub next: String,
    /// Milliseconds per stage, when the call asked for them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timings_ms: Option<crate::search::Timings>,
}

/// One hit of `search`.
#[derive(Serialize)]
pub(crate) struct SearchHit {
    /// `path#number`; the path is the hit's file.
    pub id: String,
    pub lines: [usize; 2],
    #[serde(skip_serializing_if = "String::is_empty")]
    pub title: String,
    /// A memory record's category.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    pub confidence: &'static str,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub summary: String,
    /// Other files holding nearly the same text, folded into this hit.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also_in: Vec<String>,
}

impl Reply for SearchReply {
    fn text(&self) -> String {
        let mut t = String::new();
        for line in self.warning.iter().chain(&self.note) {
            let _ = writeln!(t, "{line}");
        }
        for (i, h) in self.results.iter().enumerate() {
            let _ = write!(t, "{}. {:<6} {}  lines {}-{}", i + 1, h.confidence, h.id, h.lines[0], h.lines[1]);
            let label =
                h.category.iter().map(|c| format!("[{c}]")).chain(Some(h.title.clone())).filter(|s| !s.is_empty());
            let label: Vec<String> = label.collect();
            if !label.is_empty() {
                let _ = write!(t, "  {}", label.join(" "));
            }
            let _ = writeln!(t);
            if !h.summary.is_empty() {
                let _ = writeln!(t, "   {}", h.summary);
            }
            if !h.also_in.is_empty() {
                let _ = writeln!(t, "   also in: {}", h.also_in.join(", "));
            }
        }
        if self.results.is_empty() {
            t.push_str("No hits.\n");
        }
        let _ = writeln!(t, "{}", self.next);
        if let Some(timings) = &self.timings_ms {
            let _ = writeln!(t, "timings_ms: {}", serde_json::to_string(timings).unwrap_or_default());
        }
        t
    }

    fn schema() -> Value {
        let hit = json!({
            "id": {"type": "string", "description": "path#number: get takes it for the full text."},
            "lines": lines_schema(),
            "title": {"type": "string"},
            "category": {"type": "string", "description": "A memory record's category."},
            "confidence": {"enum": ["high", "medium", "low"]},
            "summary": {"type": "string"},
            "also_in": {"type": "array", "items": {"type": "string"}, "description": "Other files holding nearly the same text, folded into this hit."}
        });
        object(
            json!({
                "results": {"type": "array", "items": object(hit, &[], &["id", "lines", "confidence"]), "description": "Best first."},
                "timings_ms": {"type": "object", "additionalProperties": {"type": "number"}, "description": "Milliseconds per stage, when asked for."}
            }),
            &["warning", "note", "next"],
            &["results", "next"],
        )
    }
}

/// `get`'s answer.
#[derive(Serialize)]
pub(crate) struct GetReply {
    pub chunks: Vec<GetChunk>,
    /// What the token budget cut or left out, and how to get the rest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One chunk of `get`, in line order.
#[derive(Serialize)]
pub(crate) struct GetChunk {
    pub id: String,
    pub lines: [usize; 2],
    #[serde(skip_serializing_if = "String::is_empty")]
    pub title: String,
    /// `before` or `after` for a neighbouring chunk added for context; absent on those asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<&'static str>,
    pub text: String,
}

/// The line that introduces a chunk in `get`'s text (the budget counts it too).
pub(crate) fn chunk_header(c: &GetChunk) -> String {
    let mut h = format!("--- {}  lines {}-{}", c.id, c.lines[0], c.lines[1]);
    if !c.title.is_empty() {
        h.push_str("  ");
        h.push_str(&c.title);
    }
    if let Some(role) = c.role {
        let _ = write!(h, "  ({role})");
    }
    h.push('\n');
    h
}

impl Reply for GetReply {
    fn text(&self) -> String {
        let mut t = String::new();
        for c in &self.chunks {
            t.push_str(&chunk_header(c));
            let _ = writeln!(t, "{}", c.text.trim_end());
        }
        if let Some(note) = &self.note {
            let _ = writeln!(t, "[{note}]");
        }
        t
    }

    fn schema() -> Value {
        let chunk = json!({
            "id": {"type": "string"},
            "lines": lines_schema(),
            "title": {"type": "string"},
            "role": {"enum": ["before", "after"], "description": "A neighbouring chunk added for context."},
            "text": {"type": "string"}
        });
        object(
            json!({"chunks": {"type": "array", "items": object(chunk, &[], &["id", "lines", "text"]), "description": "In line order."}}),
            &["note"],
            &["chunks"],
        )
    }
}

/// `remember`'s answer.
#[derive(Serialize)]
pub(crate) struct Remembered {
    pub id: String,
    /// The record's file, relative to the project.
    pub path: String,
    /// `written`, `updated` (same title and category, new content) or `unchanged` (already stored).
    pub status: &'static str,
    /// Whether search finds it now.
    pub indexed: bool,
    /// Why it is not indexed yet, and when it will be.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Reply for Remembered {
    fn text(&self) -> String {
        let (id, path) = (&self.id, &self.path);
        let done = match self.status {
            "unchanged" => return format!("Already stored as {id} ({path}); nothing written.\n"),
            "updated" => format!("Updated {id} ({path})"),
            _ => format!("Saved as {id} ({path})"),
        };
        format!("{done}; {}.\n", indexing(self.indexed, &self.note, "indexed: search finds it now"))
    }

    fn schema() -> Value {
        object(
            json!({
                "id": {"type": "string"},
                "path": {"type": "string", "description": "The record's file."},
                "status": {"enum": ["written", "updated", "unchanged"]},
                "indexed": {"type": "boolean", "description": "search finds it now."}
            }),
            &["note"],
            &["id", "path", "status", "indexed"],
        )
    }
}

/// `forget`'s answer.
#[derive(Serialize)]
pub(crate) struct Forgotten {
    pub id: String,
    pub title: String,
    /// The file deleted.
    pub path: String,
    /// Whether the index no longer has it.
    pub indexed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Reply for Forgotten {
    fn text(&self) -> String {
        let index = indexing(self.indexed, &self.note, "removed from the index too");
        format!("Forgot {} ({:?}, {}); {index}.\n", self.id, self.title, self.path)
    }

    fn schema() -> Value {
        object(
            json!({
                "id": {"type": "string"},
                "title": {"type": "string"},
                "path": {"type": "string", "description": "The file deleted."},
                "indexed": {"type": "boolean", "description": "The index no longer has it."}
            }),
            &["note"],
            &["id", "title", "path", "indexed"],
        )
    }
}

/// What a memory change did to the index, for the text.
fn indexing<'a>(indexed: bool, note: &'a Option<String>, done: &'a str) -> &'a str {
    match note {
        Some(n) if !indexed => n,
        _ => done,
    }
}

/// `recent`'s answer.
#[derive(Serialize)]
pub(crate) struct RecentReply {
    pub records: Vec<RecentRecord>,
    /// None in the category yet, or superseded records left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

/// One memory record of `recent`, newest first.
#[derive(Serialize)]
pub(crate) struct RecentRecord {
    pub id: String,
    pub date: String,
    pub category: String,
    pub title: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The start of the content.
    pub summary: String,
    /// The record's file, relative to the project.
    pub path: String,
}

impl Reply for RecentReply {
    fn text(&self) -> String {
        let mut t = String::new();
        for r in &self.records {
            let tags = if r.tags.is_empty() { String::new() } else { format!("  (tags: {})", r.tags.join(", ")) };
            let _ = writeln!(t, "{}  {}  {}  {}{tags}", r.id, r.date, r.category, r.path);
            let _ = writeln!(t, "   {}: {}", r.title, r.summary);
        }
        for line in self.note.iter().chain(&self.next) {
            let _ = writeln!(t, "{line}");
        }
        t
    }

    fn schema() -> Value {
        let record = json!({
            "id": {"type": "string", "description": "forget takes it."},
            "date": {"type": "string", "description": "Created, YYYY-MM-DD."},
            "category": {"type": "string"},
            "title": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "summary": {"type": "string", "description": "The start of the content."},
            "path": {"type": "string", "description": "The record's file: get takes it for the whole record."}
        });
        object(
            json!({"records": {"type": "array", "items": object(record, &[], &["id", "date", "category", "title", "summary", "path"]), "description": "Newest first."}}),
            &["note", "next"],
            &["records"],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON Schema keywords the schemas above use, checked the way a validator does; returns
    /// the first place `value` breaks `schema`.
    fn violation(value: &Value, schema: &Value, at: &str) -> Option<String> {
        let fail = |why: &str| Some(format!("{at}: {why} ({value})"));
        if let Some(t) = schema.get("type").and_then(Value::as_str) {
            let ok = match t {
                "object" => value.is_object(),
                "array" => value.is_array(),
                "string" => value.is_string(),
                "integer" => value.is_u64() || value.is_i64(),
                "number" => value.is_number(),
                "boolean" => value.is_boolean(),
                other => panic!("{at}: type {other} not handled here"),
            };
            if !ok {
                return fail(&format!("not of type {t}"));
            }
        }
        if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
            if !allowed.contains(value) {
                return fail("not in the enum");
            }
        }
        if schema.get("const").is_some_and(|c| c != value) {
            return fail("not the constant");
        }
        if let (Some(min), Some(n)) = (schema.get("minimum").and_then(Value::as_f64), value.as_f64()) {
            if n < min {
                return fail("under the minimum");
            }
        }
        if let Some(items) = value.as_array() {
            let len = items.len() as u64;
            if schema.get("minItems").and_then(Value::as_u64).is_some_and(|m| len < m)
                || schema.get("maxItems").and_then(Value::as_u64).is_some_and(|m| len > m)
            {
                return fail("wrong number of items");
            }
            let each = schema.get("items").expect("an array schema says what its items are");
            return items.iter().enumerate().find_map(|(i, v)| violation(v, each, &format!("{at}[{i}]")));
        }
        let fields = value.as_object()?;
        for key in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
            if !fields.contains_key(key.as_str().unwrap()) {
                return fail(&format!("{key} missing"));
            }
        }
        let declared = schema.get("properties").and_then(Value::as_object);
        fields.iter().find_map(|(k, v)| match declared.and_then(|d| d.get(k)) {
            Some(s) => violation(v, s, &format!("{at}.{k}")),
            None => match schema.get("additionalProperties") {
                Some(Value::Bool(false)) => fail(&format!("{k} is not declared")),
                Some(s @ Value::Object(_)) => violation(v, s, &format!("{at}.{k}")),
                _ => None,
            },
        })
    }

    fn conforms<R: Reply>(reply: &R) -> Value {
        let value = serde_json::to_value(reply).unwrap();
        if let Some(why) = violation(&value, &R::schema(), "$") {
            panic!("{why}");
        }
        value
    }

    fn hit(id: &str, category: Option<&str>) -> SearchHit {
        SearchHit {
            id: id.into(),
            lines: [3, 9],
            title: "Sessions live in Redis".into(),
            category: category.map(str::to_string),
            confidence: "high",
            summary: "Memcached evicted them.".into(),
            also_in: category.is_none().then(|| "docs/v2/a.md".to_string()).into_iter().collect(),
        }
    }

    #[test]
    fn every_shape_of_every_answer_conforms_to_its_schema_and_the_text_says_the_same() {
        let full = SearchReply {
            warning: Some("Nothing here seems to answer this".into()),
            note: Some("BM25 only: no model".into()),
            results: vec![hit("docs/a.md#4", None), hit(".claude/memory/d.json#7", Some("decision"))],
            next: "get with an id".into(),
            timings_ms: Some(Default::default()),
        };
        let v = conforms(&full);
        assert_eq!(
            v.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["warning", "note", "results", "next", "timings_ms"]
        );
        let text = full.text();
        for said in [
            "Nothing here seems",
            "BM25 only",
            "docs/a.md#4  lines 3-9",
            "[decision] Sessions",
            "Memcached",
            "also in: docs/v2/a.md",
            "get with",
            "timings_ms: {",
        ] {
            assert!(text.contains(said), "{said:?} missing from {text}");
        }
        let bare = SearchReply {
            warning: None,
            note: None,
            results: vec![],
            next: "Try other words".into(),
            timings_ms: None,
        };
        assert_eq!(conforms(&bare), json!({"results": [], "next": "Try other words"}), "nothing empty or unasked");
        assert_eq!(bare.text(), "No hits.\nTry other words\n");

        let chunk = |role| GetChunk {
            id: "a.rs#1".into(),
            lines: [1, 4],
            title: String::new(),
            role,
            text: "fn a() {}\n".into(),
        };
        let got = GetReply { chunks: vec![chunk(Some("before")), chunk(None)], note: Some("cut to max_tokens".into()) };
        let v = conforms(&got);
        assert_eq!(v["chunks"][0], json!({"id": "a.rs#1", "lines": [1, 4], "role": "before", "text": "fn a() {}\n"}));
        assert!(
            got.text().contains("lines 1-4  (before)\nfn a() {}\n") && got.text().ends_with("[cut to max_tokens]\n")
        );

        for (status, indexed, note) in
            [("written", true, None), ("updated", false, Some("no index yet")), ("unchanged", true, None)]
        {
            let r =
                Remembered { id: "abc".into(), path: "p.json".into(), status, indexed, note: note.map(str::to_string) };
            conforms(&r);
            assert!(r.text().contains("abc (p.json)"), "{}", r.text());
            assert_eq!(r.text().contains("no index yet"), note.is_some());
        }
        let f = Forgotten { id: "abc".into(), title: "T".into(), path: "p.json".into(), indexed: true, note: None };
        conforms(&f);
        assert_eq!(f.text(), "Forgot abc (\"T\", p.json); removed from the index too.\n");

        let record = RecentRecord {
            id: "abc".into(),
            date: "2026-11-26".into(),
            category: "decision".into(),
            title: "T".into(),
            tags: vec![],
            summary: "S".into(),
            path: "p.json".into(),
        };
        let recent = RecentReply { records: vec![record], note: Some("1 superseded".into()), next: Some("get".into()) };
        assert!(conforms(&recent)["records"][0].get("tags").is_none());
        assert!(recent.text().starts_with("abc  2026-11-26  decision  p.json\n   T: S\n1 superseded\n"));
        conforms(&RecentReply { records: vec![], note: None, next: None });
    }

    #[test]
    fn the_checker_catches_what_breaks_a_schema() {
        let schema = SearchReply::schema();
        let ok = json!({"results": [{"id": "a#1", "lines": [1, 2], "confidence": "low"}], "next": "n"});
        assert_eq!(violation(&ok, &schema, "$"), None);
        for bad in [
            json!({"results": []}),
            json!({"results": [], "next": "n", "answers": false}),
            json!({"results": [{"id": "a#1", "lines": [1], "confidence": "low"}], "next": "n"}),
            json!({"results": [{"id": "a#1", "lines": [1, 2], "confidence": "sure"}], "next": "n"}),
            json!({"results": [], "next": "n", "timings_ms": {"total": "fast"}}),
        ] {
            assert!(violation(&bad, &schema, "$").is_some(), "{bad}");
        }
    }
}
