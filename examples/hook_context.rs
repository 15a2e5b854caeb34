//! Build the context block the Claude Code hook would add to a prompt.
//!
//!     cargo run --release --example hook_context [PROMPT...]
//!
//! Indexes the bundled `sample/` project into a temporary directory, then asks for each prompt
//! what the hook adds: nothing for small talk and for questions the project cannot answer, and
//! otherwise a context block of the files (`<project-context>`) and memory records
//! (`<memory-context>`) that answer, within the hook's size limit.

use engine::{Engine, Source};
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut prompts: Vec<String> = std::env::args().skip(1).collect();
    if prompts.is_empty() {
        prompts = vec![
            "why did we move sessions to redis?".into(),
            "how are uploads checked against the user's quota?".into(),
            "thanks, looks good".into(),
        ];
    }
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sample");
    let scratch = tempfile::tempdir()?;
    let (engine, _) = Engine::builder(scratch.path().join(".engine")).index(&Source::Dir(sample))?;

    for prompt in &prompts {
        println!("> {prompt}");
        match engine.context_for_prompt(prompt)? {
            Some(block) => println!("{}\n({} tokens, {} hits shown)\n", block.text, block.tokens, block.shown.len()),
            None => println!("(nothing added)\n"),
        }
    }
    Ok(())
}
