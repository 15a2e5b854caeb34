//! `engine search`: one query, printed for a person, as JSON, or as the context block an LLM gets.
//! Answered by the warm daemon serving the index when one of this build runs (the same output
//! from the same code, without loading the model), else in this process, starting a daemon for
//! the next search (`[search] daemon`, `--no-daemon`).

use crate::cli::flags::{settings, Format, SearchArgs};
use crate::config::Mode;
use crate::integrations::daemon::search::{render, Output, Printed, SearchCall};
use crate::Engine;
use anyhow::Result;
use std::io::Write;
use std::path::Path;

pub(crate) fn run(args: SearchArgs, config: Option<&Path>) -> Result<i32> {
    let query = args.query.join(" ");
    if query.trim().is_empty() {
        return Err(crate::Error::InvalidInput("empty query: give some words to search for".into()).into());
    }
    let output = match args.format.unwrap_or(if args.json { Format::Json } else { Format::Text }) {
        Format::Json => Output::Json,
        Format::Text => Output::Text,
        // With --json: the block with the rule that shaped it and what it did with each hit.
        Format::Context if args.json => Output::ContextJson,
        Format::Context => Output::Context,
    };
    let settings = settings(config, args.layer())?;
    let dir = match super::index_dir(args.index.clone()) {
        Ok(dir) => dir,
        // No index here: the search backend holds it, and answers alone.
        Err(_) if settings.backend.url.is_some() => std::env::current_dir()?.join(".engine"),
        Err(e) => return Err(e),
    };
    let local = crate::index::store::current_generation(&dir).ok().flatten().is_some();
    let color = output == Output::Text && args.color.on_stdout();
    let call = SearchCall { query, settings, explain: args.explain, output, color };
    // A daemon serves a local index; without one this process asks the backend itself.
    if call.settings.search.daemon && !args.no_daemon && local {
        match crate::integrations::daemon::search(&dir, &call) {
            Ok(Ok(printed)) => return Ok(emit(&printed)),
            Ok(Err(failed)) => return Ok(crate::cli::exit::report(failed.class, &failed.message)),
            // No daemon of this build could answer (none was running: one starts for the next
            // search): answered here, with the same output.
            Err(_) => {}
        }
    }
    // Index errors name the index directory themselves.
    let builder = Engine::builder(&dir).settings(call.settings.clone());
    let engine = if call.settings.search.mode == Mode::Bm25 {
        builder.lexical_only()
    } else {
        builder.bm25_fallback().one_shot()
    }
    .open()?;
    Ok(emit(&render(&engine, &call)?))
}

/// Prints what the search printed, on each stream; the exit code.
fn emit(printed: &Printed) -> i32 {
    eprint!("{}", printed.stderr);
    // print! as before: an output that cannot be written is that error, said once (exit.rs).
    print!("{}", printed.stdout);
    let _ = std::io::stdout().flush();
    0
}
