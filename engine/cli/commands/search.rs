//! `engine search`: one query, printed for a person, as JSON, or as the context block an LLM gets.

use crate::cli::flags::{settings, Format, SearchArgs};
use crate::cli::output::{print_human, Display};
use crate::config::Mode;
use crate::{Engine, SearchRequest};
use anyhow::Result;
use std::path::Path;

pub(crate) fn run(args: SearchArgs, config: Option<&Path>) -> Result<i32> {
    let query = args.query.join(" ");
    if query.trim().is_empty() {
        return Err(crate::Error::InvalidInput("empty query: give some words to search for".into()).into());
    }
    let format = args.format.unwrap_or(if args.json { Format::Json } else { Format::Text });
    let settings = settings(config, args.layer())?;
    let dir = super::index_dir(args.index)?;
    // Index errors name the index directory themselves.
    let builder = Engine::builder(&dir).settings(settings.clone());
    let engine =
        if settings.search.mode == Mode::Bm25 { builder.lexical_only() } else { builder.bm25_fallback().one_shot() }
            .open()?;
    let mut req = SearchRequest::new(query, settings.search.k, settings.search.mode);
    req.explain = args.explain;
    let resp = engine.search_with(&req)?;
    match format {
        Format::Json => println!("{}", serde_json::to_string(&resp)?),
        Format::Text => {
            let embedding = resp.vectors.and_then(|_| crate::index::embedding(&dir));
            print_human(&resp, &Display { color: args.color.on_stdout(), explain: args.explain, embedding })
        }
        // With --json: the block with the rule that shaped it and what it did with each hit.
        Format::Context if args.json => println!("{}", serde_json::to_string(&engine.context(&resp))?),
        Format::Context => print!("{}", engine.context(&resp).text),
    }
    Ok(0)
}
