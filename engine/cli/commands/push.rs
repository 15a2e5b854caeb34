//! `engine push`: the index into a search backend, incrementally.

use crate::backend::Backend;
use crate::cli::flags::{settings, PushArgs};
use anyhow::Result;
use std::path::Path;
use std::time::Duration;

pub(crate) fn run(args: PushArgs, config: Option<&Path>) -> Result<i32> {
    let settings = settings(config, Default::default())?;
    let dir = super::index_dir(args.index)?;
    // A missing index is said before any connection is tried.
    crate::index::status(&dir)?;
    let backend = Backend::connect(&args.url, Duration::from_millis(settings.backend.timeout_ms))?;
    let report = backend.push(&dir, &settings.vector, args.full)?;
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    }
    eprintln!(
        "engine: pushed {} chunks to {}{}: {} written, {} deleted",
        report.chunks,
        args.url,
        if report.created { " (collection created)" } else { "" },
        report.upserted,
        report.deleted
    );
    Ok(0)
}
