//! `engine push`: the index into a search backend, incrementally.

use crate::backend::Backend;
use crate::cli::flags::{settings, PushArgs};
use anyhow::Result;
use std::path::Path;
use std::time::Duration;

/// The longest a push waits for one write to be answered.
const WRITE_TIMEOUT: Duration = Duration::from_secs(600);

pub(crate) fn run(args: PushArgs, config: Option<&Path>) -> Result<i32> {
    let settings = settings(config, Default::default())?;
    let dir = super::index_dir(args.index)?;
    // A missing index is said before any connection is tried.
    crate::index::status(&dir)?;
    // Connecting takes `[backend] timeout_ms` at most; a write may take longer (a flush has the
    // server build its indexes over every row written).
    let wait = Duration::from_millis(settings.backend.timeout_ms);
    let backend = Backend::connect(&args.url, WRITE_TIMEOUT.max(wait), wait)?;
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
