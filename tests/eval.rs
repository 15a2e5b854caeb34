//! `engine eval` end to end with the real binary and model: the golden gate passes and fails with
//! the documented exit codes and messages, TREC runs are scored, bad inputs name file and line.

use crate::common::{copy_dir, json, root};
use std::path::Path;
use std::process::Command;

/// Runs the binary in `cwd` with its own cache directory; returns (exit code, stdout, stderr).
fn eval(args: &[&str], cwd: &Path) -> (i32, String, String) {
    let out = Command::new(crate::common::bin())
        .args(args)
        .current_dir(cwd)
        .env("XDG_CACHE_HOME", cwd.join("cache"))
        .env_remove("ENGINE_MODELS_DIR")
        .output()
        .expect("run engine");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A golden directory with one set over the sample corpus; the second query is judged against a
/// document that cannot rank first, so its nDCG@10 is below 1.
fn golden_dir(threshold: f64) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let set = dir.path().join("golden/tiny");
    copy_dir(&root().join("sample"), &set.join("corpus"));
    std::fs::write(
        set.join("set.toml"),
        r#"name = "tiny"
[[query]]
id = "t1"
text = "why did we move sessions off memcached"
relevant = { ".claude/memory/decision-session-store.json" = 2 }

[[query]]
id = "t2"
text = "session store redis memcached"
held_out = true
relevant = { "src/thumbnails.go" = 1 }

[[query]]
id = "t3"
text = "write a poem"
tier = "none"
relevant = {}
"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("golden/thresholds.toml"),
        format!("[tiny.hybrid]\n\"ndcg@10\" = {threshold}\n\"mrr@10\" = 0.1\n"),
    )
    .unwrap();
    dir
}

#[test]
fn the_golden_gate_passes_and_fails_by_threshold() {
    let dir = golden_dir(0.2);
    let (code, out, err) = eval(&["eval", "--modes", "bm25"], dir.path());
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("### tiny (all, 2 queries)"), "{out}");
    assert!(out.contains("| bm25 |") && out.contains("| hybrid |"), "the gate's mode is added: {out}");
    assert!(out.contains("2 of 2 thresholds met"), "{out}");
    assert!(out.contains("nDCG@10 by split"), "{out}");

    std::fs::write(dir.path().join("golden/thresholds.toml"), "[tiny.hybrid]\n\"ndcg@10\" = 1.0\n").unwrap();
    let (code, out, _) = eval(&["eval", "--modes", "hybrid"], dir.path());
    assert_eq!(code, 5, "{out}");
    let fail = out.lines().find(|l| l.starts_with("FAIL tiny hybrid ndcg@10 = ")).unwrap_or_else(|| panic!("{out}"));
    assert!(fail.contains("< 1.000 (short by "), "{fail}");

    // One half only: reported, not gated.
    let (code, out, err) = eval(&["eval", "--modes", "hybrid", "--split", "held-out"], dir.path());
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("### tiny (held-out, 1 queries)"), "{out}");
    assert!(err.contains("not checked for --split held-out"), "{err}");
}

#[test]
fn compare_counts_the_queries_and_bounds_the_mean_difference() {
    let dir = golden_dir(0.2);
    let (code, out, err) = eval(&["eval", "--modes", "bm25", "--compare", "hybrid", "bm25"], dir.path());
    assert_eq!(code, 0, "{out}\n{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("tiny: hybrid - bm25 nDCG@10 over 2 queries: mean "))
        .unwrap_or_else(|| panic!("{out}"));
    // "mean M, 95% interval [L, H] (paired bootstrap); B better, W worse, T tied:"
    let numbers: Vec<f64> = line
        .split_once("queries: ")
        .unwrap()
        .1
        .replace("95%", "")
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .filter_map(|w| w.parse().ok())
        .collect();
    let [mean, low, high, better, worse, tied] = numbers[..] else { panic!("{line}: {numbers:?}") };
    assert!(low <= mean && mean <= high, "{line}");
    assert_eq!(better + worse + tied, 2.0, "{line}");
    let listed = out.lines().filter(|l| l.starts_with("  + ") || l.starts_with("  - ")).count();
    assert_eq!(listed as f64, better + worse, "{out}");

    let (code, _, err) = eval(&["eval", "--modes", "bm25", "--compare", "hybrid", "bm26"], dir.path());
    assert_ne!(code, 0);
    assert!(err.contains("no run named \"bm26\""), "{err}");
}

#[test]
fn json_reports_have_the_documented_shape() {
    let dir = golden_dir(0.2);
    let (code, out, err) = eval(&["eval", "--modes", "bm25,hybrid", "--json"], dir.path());
    assert_eq!(code, 0, "{err}");
    let r = json(out.lines().next().unwrap());
    assert_eq!(r["dataset"], "tiny");
    assert_eq!(r["split"], "all");
    assert_eq!(r["queries"], 2);
    for run in r["runs"].as_array().unwrap() {
        for key in ["mode", "p@5", "p@10", "recall@10", "recall@100", "mrr@10", "ndcg@10", "map"] {
            assert!(!run[key].is_null(), "{key} missing in {run}");
        }
        assert!(run["latency_ms"]["p50"].as_f64().unwrap() > 0.0);
        assert!(run["latency_ms"]["p95"].as_f64().unwrap() >= run["latency_ms"]["p50"].as_f64().unwrap());
    }
    assert!(err.contains("2 of 2 thresholds met"), "gate lines go to stderr with --json: {err}");

    // Per-prompt lines: judgments by path, the hits, and what the hook would hand over.
    let (code, _, err) = eval(&["eval", "--modes", "bm25", "--features", "f.jsonl"], dir.path());
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(dir.path().join("f.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(json).collect();
    let t1 = lines.iter().find(|l| l["id"] == "t1").unwrap();
    assert_eq!(t1["judged"][".claude/memory/decision-session-store.json"], 2, "{t1}");
    assert!(t1["hits"].as_array().unwrap().iter().any(|h| h["doc"] == ".claude/memory/decision-session-store.json"));
    assert!(t1["context"].as_str().unwrap().contains("<memory-context>"), "{t1}");
    assert!(t1["answered"].is_null(), "judged by document, not by fact: {t1}");
    let t3 = lines.iter().find(|l| l["id"] == "t3").unwrap();
    assert!(t3["context"].is_null(), "a poem request gets nothing: {t3}");
    assert_eq!(lines.iter().filter(|l| l["held_out"] == true).count(), 1, "every half by default");

    // A split's lines are that half's only: reading the dev lines shows nothing held out.
    let (code, _, err) = eval(&["eval", "--modes", "bm25", "--split", "dev", "--features", "dev.jsonl"], dir.path());
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(dir.path().join("dev.jsonl")).unwrap();
    let ids: Vec<String> = text.lines().map(|l| json(l)["id"].as_str().unwrap().to_string()).collect();
    assert_eq!(ids, ["t1", "t3"]);
}

#[test]
fn trec_runs_are_scored_with_the_same_metrics() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("qrels.tsv"), "query-id\tcorpus-id\tscore\nq1\ta\t1\nq2\tb\t2\n").unwrap();
    std::fs::write(dir.path().join("run.trec"), "q1 Q0 x 1 2.0 t\nq1 Q0 a 2 1.0 t\nq2 Q0 b 1 5.0 t\nq9 Q0 z 1 1 t\n")
        .unwrap();
    let (code, out, err) = eval(&["eval", "--run", "run.trec", "--qrels", "qrels.tsv", "--json"], dir.path());
    assert_eq!(code, 0, "{err}");
    let r = json(&out);
    assert_eq!(r["queries"], 2);
    assert!((r["runs"][0]["mrr@10"].as_f64().unwrap() - 0.75).abs() < 1e-9, "{out}");
    assert!(err.contains("1 queries have no judgments"), "{err}");
}

#[test]
fn bad_inputs_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("run.trec"), "q1 Q0 a 1 1.0 t\nq1 Q0 b 2\n").unwrap();
    std::fs::write(d.join("qrels.tsv"), "q1\ta\t1\n").unwrap();
    let (code, _, err) = eval(&["eval", "--run", "run.trec", "--qrels", "qrels.tsv"], d);
    assert_eq!(code, 2);
    assert!(err.contains("run.trec:2") && err.contains("6 columns"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    // A BEIR collection whose qrels name a query that does not exist.
    let beir = d.join("beir");
    std::fs::create_dir_all(beir.join("qrels")).unwrap();
    std::fs::write(beir.join("corpus.jsonl"), "{\"_id\":\"d1\",\"title\":\"\",\"text\":\"redis sessions\"}\n").unwrap();
    std::fs::write(beir.join("queries.jsonl"), "{\"_id\":\"q1\",\"text\":\"sessions\"}\n").unwrap();
    std::fs::write(beir.join("qrels/test.tsv"), "query-id\tcorpus-id\tscore\nq1\td1\t1\nq7\td1\t1\n").unwrap();
    let (code, _, err) = eval(&["eval", "--beir", "beir", "--modes", "bm25"], d);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("test.tsv:3") && err.contains("\"q7\""), "{err}");

    // An empty query set.
    std::fs::write(beir.join("queries.jsonl"), "").unwrap();
    std::fs::write(beir.join("qrels/test.tsv"), "").unwrap();
    let (code, _, err) = eval(&["eval", "--beir", "beir", "--modes", "bm25"], d);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("test.tsv") && err.contains("no judgments"), "{err}");

    // A golden set judging a document its corpus does not have.
    let set = d.join("golden/broken");
    std::fs::create_dir_all(set.join("corpus")).unwrap();
    std::fs::write(set.join("corpus/a.md"), "# A\n").unwrap();
    std::fs::write(set.join("set.toml"), "[[query]]\nid = \"b1\"\ntext = \"x\"\nrelevant = { \"gone.md\" = 1 }\n")
        .unwrap();
    let (code, _, err) = eval(&["eval"], d);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("set.toml") && err.contains("\"b1\"") && err.contains("gone.md"), "{err}");
}

#[test]
fn beir_candidate_lines_carry_each_leg_and_the_grades() {
    let dir = tempfile::tempdir().unwrap();
    let (d, beir) = (dir.path(), dir.path().join("beir"));
    std::fs::create_dir_all(beir.join("qrels")).unwrap();
    let docs =
        [("d1", "sessions are stored in redis"), ("d2", "thumbnails are resized"), ("d3", "redis cluster setup")];
    let corpus: String =
        docs.iter().map(|(id, text)| format!("{{\"_id\":\"{id}\",\"title\":\"\",\"text\":\"{text}\"}}\n")).collect();
    std::fs::write(beir.join("corpus.jsonl"), corpus).unwrap();
    std::fs::write(
        beir.join("queries.jsonl"),
        "{\"_id\":\"q1\",\"text\":\"where are sessions stored\"}\n{\"_id\":\"q2\",\"text\":\"unjudged\"}\n",
    )
    .unwrap();
    std::fs::write(beir.join("qrels/test.tsv"), "query-id\tcorpus-id\tscore\nq1\td1\t2\n").unwrap();
    let (code, _, err) = eval(&["eval", "--beir", "beir", "--modes", "hybrid", "--features", "c.jsonl"], d);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(d.join("c.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 1, "only judged queries: {text}");
    let q = &lines[0];
    assert_eq!((q["id"].as_str(), q["judged"]["d1"].as_u64()), (Some("q1"), Some(2)));
    let hits = q["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 3, "{text}");
    let d1 = hits.iter().find(|h| h["doc"] == "d1").unwrap();
    assert_eq!(d1["grade"], 2);
    assert!(d1["lexical_rank"].is_u64() && d1["vector_rank"].is_u64() && d1["cosine"].is_f64(), "{d1}");
    assert!(d1["coverage"].as_f64().unwrap() > 0.3, "{d1}");
    assert!(hits.iter().filter(|h| h["doc"] != "d1").all(|h| h["grade"] == 0));
    assert!(q["intent"]["probabilities"].is_array());
    // Under the learned default the score is the model's output; its inputs come as they were.
    let inputs = d1["features"].as_array().unwrap_or_else(|| panic!("no model inputs: {d1}"));
    assert_eq!(inputs.len(), 14, "{d1}");
    assert_eq!(inputs[0], 1.0, "'lexical found' for a lexical hit: {d1}");
}

/// golden/README.md's "Evaluate your own project", run as written (its commands are read from the
/// README, so the two cannot drift) on a copy of sample/ with `engine` on the PATH.
#[test]
fn the_readme_example_evaluates_a_project_with_its_own_index_and_never_indexes_the_set() {
    let readme = std::fs::read_to_string(root().join("golden/README.md")).unwrap();
    let example = readme
        .split("<!-- example: own project -->\n```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("golden/README.md has the example");
    let project = crate::common::sample_copy();
    let tools = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(crate::common::bin(), tools.path().join("engine")).unwrap();
    let cache = tools.path().join("cache");
    let path = format!("{}:{}", tools.path().display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", example])
        .current_dir(project.path())
        .env("PATH", path)
        .env("XDG_CACHE_HOME", &cache)
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("### myproject (all, 3 queries)"), "{stdout}");
    assert!(stdout.contains("1 of 1 thresholds met"), "{stdout}");
    assert!(stderr.contains("searching the project's own index"), "{stderr}");
    assert!(!cache.join("engine/golden").exists(), "the project was indexed again into the cache");

    // The set's own text is in no index: its query words find the project's files only.
    let index = project.path().join(".engine");
    let (code, out, err) = crate::common::engine(
        &[
            "search",
            "rotate signing key memcached exponential backoff",
            "--json",
            "-k",
            "50",
            "--index",
            index.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    let hits = json(&out)["results"].as_array().unwrap().clone();
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|h| !h["path"].as_str().unwrap().starts_with("golden/")), "{hits:?}");
}
