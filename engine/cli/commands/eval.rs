//! `engine eval`: golden sets held to their thresholds (the CI gate), a BEIR collection in several
//! modes side by side, or another system's TREC run scored with the same metrics.

use super::index::with_progress;
use crate::cli::exit::QUALITY_GATE;
use crate::cli::flags::{settings, EvalArgs};
use crate::config::{Settings, SettingsLayer};
use crate::eval::golden::{self, GateCheck, GoldenSet, Split, Thresholds};
use crate::eval::{self, cache_index_dir, Report, RunMode};
use crate::ingest::Source;
use crate::{Engine, IndexReport};
use anyhow::Result;
use std::path::{Path, PathBuf};

pub(crate) fn run(args: EvalArgs, config: Option<&Path>) -> Result<i32> {
    let opts = Output { json: args.json, out: args.out, compare: args.compare, features: args.features };
    let modes = RunMode::parse_list(&args.modes)?;
    if let Some(run) = args.run {
        let qrels = args.qrels.expect("clap requires --qrels with --run");
        opts.print(&[run_file(&run, &qrels)?])?;
        return Ok(0);
    }
    let settings = settings(config, SettingsLayer::default())?;
    if let Some(beir) = args.beir {
        let modes = with_compared_modes(modes, &opts.compare);
        let collection = Collection { dir: &beir, split: args.split, index: args.index };
        opts.print(&[beir_report(&collection, &settings, &modes, &opts)?])?;
        return Ok(0);
    }
    let sets = GoldenRun::new(args.golden, args.thresholds, args.split.as_deref(), modes, &settings)?;
    sets.run(&opts)
}

/// How `engine eval` prints its reports.
struct Output {
    json: bool,
    out: Option<PathBuf>,
    compare: Option<Vec<String>>,
    features: Option<PathBuf>,
}

impl Output {
    fn print(&self, reports: &[Report]) -> Result<()> {
        let md: String = reports.iter().map(|r| r.markdown()).collect::<Vec<_>>().join("\n");
        if let Some(path) = &self.out {
            crate::cli::output::OutFile::write(path, md.as_bytes())?;
        }
        if self.json {
            for r in reports {
                println!("{}", serde_json::to_string(r)?);
            }
        } else {
            print!("{md}");
        }
        if let Some(pair) = &self.compare {
            for report in reports {
                self.print_comparison(report, &pair[0], &pair[1])?;
            }
        }
        Ok(())
    }

    fn print_comparison(&self, report: &Report, a: &str, b: &str) -> Result<()> {
        let c = report.compare(a, b)?;
        self.say(format!(
            "\n{}: {a} - {b} nDCG@10 over {} queries: mean {:+.3}, 95% interval [{:+.3}, {:+.3}] (paired bootstrap); \
             {} better, {} worse, {} tied:",
            report.dataset,
            c.queries(),
            c.mean,
            c.interval.0,
            c.interval.1,
            c.better.len(),
            c.worse.len(),
            c.tied
        ));
        for (q, x, y) in c.better.iter().take(20) {
            self.say(format!("  + {q}: {x:.3} vs {y:.3}"));
        }
        for (q, x, y) in c.worse.iter().take(20) {
            self.say(format!("  - {q}: {x:.3} vs {y:.3}"));
        }
        Ok(())
    }

    /// A line for the reader: stdout, or stderr when stdout carries JSON.
    fn say(&self, line: String) {
        if self.json {
            eprintln!("{line}")
        } else {
            println!("{line}")
        }
    }

    /// Writes the per-query feature lines (`--features`).
    fn write_features(&self, lines: &[serde_json::Value]) -> Result<()> {
        if let Some(path) = &self.features {
            let text: String = lines.iter().map(|v| format!("{v}\n")).collect();
            crate::cli::output::OutFile::write(path, text.as_bytes())?;
        }
        Ok(())
    }
}

/// The modes to run: the requested ones plus any named by `--compare`.
fn with_compared_modes(mut modes: Vec<RunMode>, compare: &Option<Vec<String>>) -> Vec<RunMode> {
    for m in compare.iter().flatten() {
        if let Some(mode) = RunMode::parse(m) {
            if !modes.contains(&mode) {
                modes.push(mode);
            }
        }
    }
    modes
}

/// Scores another system's TREC run with the engine's metrics.
fn run_file(run: &Path, qrels_path: &Path) -> Result<Report> {
    let qrels = eval::read_qrels(qrels_path)?;
    let ranked = eval::read_run(run)?;
    let mut per_query = std::collections::BTreeMap::new();
    for (q, judged) in &qrels {
        let list = ranked.get(q).cloned().unwrap_or_default();
        if let Some(m) = eval::score(&list, judged) {
            per_query.insert(q.clone(), m);
        }
    }
    // trec_eval ignores runs for unjudged queries too; a run over every split is common.
    let unjudged = ranked.keys().filter(|q| !qrels.contains_key(*q)).count();
    if unjudged > 0 {
        eprintln!(
            "engine: {}: {unjudged} queries have no judgments in {}; ignored",
            run.display(),
            qrels_path.display()
        );
    }
    let name = run.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_else(|| "run".into());
    let runs = vec![eval::run_report(&name, per_query, &[], &Default::default())];
    let queries = runs[0].per_query.len();
    Ok(Report { dataset: run.display().to_string(), split: qrels_path.display().to_string(), queries, runs })
}

/// A BEIR collection as `engine eval --beir` names it.
struct Collection<'a> {
    dir: &'a Path,
    split: Option<String>,
    index: Option<PathBuf>,
}

/// Brings an index `engine eval` keeps in its cache up to date. One another chunker, schema or
/// model built is rebuilt rather than refused: it is the eval's own cache, not the user's index.
fn refresh_cache(dir: &Path, source: &Source, settings: &Settings, quiet: bool) -> Result<IndexReport> {
    match with_progress(dir, source, settings, false, quiet) {
        Err(e) if matches!(e.downcast_ref::<crate::Error>(), Some(crate::Error::IndexIncompatible { .. })) => {
            eprintln!("engine: {} was built by another engine or model; rebuilding it", dir.display());
            with_progress(dir, source, settings, true, quiet)
        }
        other => other,
    }
}

/// Indexes a BEIR collection (reusing an unchanged index) and runs its queries in each mode.
fn beir_report(c: &Collection, settings: &Settings, modes: &[RunMode], opts: &Output) -> Result<Report> {
    let split = match &c.split {
        Some(s) => s.clone(),
        None if c.dir.join("qrels/test.tsv").is_file() => "test".into(),
        None => "dev".into(),
    };
    let queries = eval::read_queries(&c.dir.join("queries.jsonl"))?;
    let qrels = eval::read_qrels_for(&c.dir.join("qrels").join(format!("{split}.tsv")), Some(&queries))?;
    let dir = c.index.clone().unwrap_or_else(|| cache_index_dir("beir", c.dir));
    let source = Source::Beir(std::path::absolute(c.dir)?);
    let indexed = match &c.index {
        Some(_) => with_progress(&dir, &source, settings, false, opts.json)?,
        None => refresh_cache(&dir, &source, settings, opts.json)?,
    };
    if indexed.files_changed + indexed.files_removed > 0 {
        eprintln!("engine: indexed {} documents into {}", indexed.files_changed, dir.display());
    }
    let engine = Engine::builder(&dir).settings(settings.clone()).bm25_fallback().open()?;
    let name = std::path::absolute(c.dir)?.file_name().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
    if opts.features.is_some() {
        opts.write_features(&eval::candidates(&engine, &format!("{name}/{split}"), &queries, &qrels)?)?;
    }
    let runs = eval::run_modes(&engine, &queries, &qrels, modes)?;
    Ok(Report { dataset: name, split, queries: runs.first().map_or(0, |r| r.per_query.len()), runs })
}

/// The nearest `golden/` directory at or above the current one.
fn find_golden() -> Result<PathBuf> {
    let cwd = std::env::current_dir()?;
    cwd.ancestors().map(|d| d.join("golden")).find(|g| golden::discover(g).is_ok()).ok_or_else(|| {
        crate::Error::InvalidInput(format!(
            "no golden sets found in or above {} (give --golden DIR, --beir DIR or --run FILE --qrels FILE)",
            cwd.display()
        ))
        .into()
    })
}

/// A run over golden sets: where they are, the half, the modes, and the thresholds that gate them.
struct GoldenRun<'a> {
    root: PathBuf,
    split: Split,
    modes: Vec<RunMode>,
    threshold_file: Option<PathBuf>,
    limits: Option<Thresholds>,
    settings: &'a Settings,
}

/// What the sets gave: reports, hook lines, gate checks, feature lines.
#[derive(Default)]
struct GoldenResults {
    reports: Vec<Report>,
    hooks: Vec<String>,
    checks: Vec<GateCheck>,
    features: Vec<serde_json::Value>,
}

impl<'a> GoldenRun<'a> {
    fn new(
        golden: Option<PathBuf>,
        thresholds: Option<PathBuf>,
        split: Option<&str>,
        modes: Vec<RunMode>,
        settings: &'a Settings,
    ) -> Result<GoldenRun<'a>> {
        let root = match golden {
            Some(g) => g,
            None => find_golden()?,
        };
        let split = match split {
            None => Split::All,
            Some(s) => <Split as clap::ValueEnum>::from_str(s, true).map_err(|_| {
                crate::Error::InvalidInput(format!("--split {s:?}: golden sets have all, dev and held-out"))
            })?,
        };
        // Beside the sets; for one set, in its directory or beside it.
        let threshold_file = thresholds.or_else(|| {
            let mut dirs = vec![root.clone()];
            if root.join(golden::SET_FILE).is_file() {
                dirs.extend(root.parent().map(Path::to_path_buf));
            }
            dirs.into_iter().map(|d| d.join(golden::THRESHOLDS_FILE)).find(|p| p.is_file())
        });
        let limits = threshold_file.as_deref().map(golden::read_thresholds).transpose()?;
        Ok(GoldenRun { root, split, modes, threshold_file, limits, settings })
    }

    /// Runs every set, prints the reports and the gate, and returns the exit code.
    fn run(&self, opts: &Output) -> Result<i32> {
        let mut results = GoldenResults::default();
        for path in golden::discover(&self.root)? {
            self.run_set(&GoldenSet::load(&path)?, opts, &mut results)?;
        }
        opts.write_features(&results.features)?;
        opts.print(&results.reports)?;
        if !results.hooks.is_empty() {
            println!("\nhook path (prompt in, context out):\n{}", results.hooks.join("\n"));
        }
        if self.split != Split::All && self.limits.is_some() {
            eprintln!(
                "engine: thresholds apply to both halves together; not checked for --split {}",
                self.split.as_str()
            );
        }
        Ok(self.print_gate(&results.checks, opts))
    }

    /// The modes a set runs in: those asked for, compared, and named by its thresholds.
    fn modes_for(&self, set: &GoldenSet, opts: &Output) -> Vec<RunMode> {
        let mut modes = with_compared_modes(self.modes.clone(), &opts.compare);
        let named = self.limits.iter().filter_map(|l| l.get(&set.name)).flat_map(|by_mode| by_mode.keys());
        for m in named.filter(|m| *m != golden::HOOK) {
            let mode = RunMode::parse(m).expect("checked when read");
            if !modes.contains(&mode) {
                modes.push(mode);
            }
        }
        modes
    }

    /// Indexes one set's corpus and scores it: ranking in each mode, the hook's figures per half.
    fn run_set(&self, set: &GoldenSet, opts: &Output, results: &mut GoldenResults) -> Result<()> {
        let modes = self.modes_for(set, opts);
        set.prepare(&self.settings.capture)?;
        let corpus = std::fs::canonicalize(&set.corpus)?;
        // A set over one's own project searches the project's index, brought up to date as
        // `engine index` would; any other corpus is indexed into the cache.
        let dir = match eval::project_index(&corpus) {
            Some(own) => {
                eprintln!("engine: {}: searching the project's own index {}", set.name, own.display());
                with_progress(&own, &Source::Dir(corpus), self.settings, false, true)?;
                own
            }
            None => {
                let dir = cache_index_dir("golden", &corpus);
                refresh_cache(&dir, &Source::Dir(corpus), self.settings, true)?;
                dir
            }
        };
        let engine = Engine::builder(&dir).settings(self.settings.clone()).bm25_fallback().open()?;
        if opts.features.is_some() {
            results.features.extend(golden::features(&engine, set, self.split)?);
        }
        // A set judged by fact has no ranking to score, only what the hook gives.
        let report = if set.by_fact() {
            Report { dataset: set.name.clone(), split: self.split.as_str().into(), queries: 0, runs: Vec::new() }
        } else {
            golden::run(&engine, set, self.split, &modes)?
        };
        let hook = golden::hook_quality(&engine, set, self.split)?;
        let mut lines = vec![format!("{} ({}): {hook}", set.name, self.split.as_str())];
        if self.split == Split::All {
            for half in [Split::Dev, Split::HeldOut] {
                lines.push(format!("{} ({}): {}", set.name, half.as_str(), golden::hook_quality(&engine, set, half)?));
            }
        }
        if opts.json {
            lines.iter().for_each(|l| eprintln!("engine: hook path: {l}"));
        } else {
            results.hooks.extend(lines);
        }
        let (right, labelled) = golden::intent_accuracy(set, self.split);
        if labelled > 0 && !opts.json {
            eprintln!("engine: {}: expected intent matched for {right} of {labelled} labelled queries", set.name);
        }
        if let (Some(l), Split::All) = (&self.limits, self.split) {
            results.checks.extend(golden::gate(&set.name, &report, &hook, l));
        }
        if !set.by_fact() {
            results.reports.push(report);
        }
        Ok(())
    }

    /// Prints the gate's checks; the exit code is [`QUALITY_GATE`] when one failed.
    fn print_gate(&self, checks: &[GateCheck], opts: &Output) -> i32 {
        let failed = checks.iter().filter(|c| !c.passed()).count();
        if !checks.is_empty() {
            let file = self.threshold_file.as_deref().map(|p| p.display().to_string()).unwrap_or_default();
            opts.say(format!("\ngolden gate ({file}): {} of {} thresholds met", checks.len() - failed, checks.len()));
            for c in checks {
                opts.say(c.to_string());
            }
        }
        if failed > 0 {
            QUALITY_GATE
        } else {
            0
        }
    }
}
