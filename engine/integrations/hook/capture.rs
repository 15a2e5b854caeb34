//! `PreCompact`, `PostCompact` and `SessionEnd`: the session's transcript captured into memory
//! records (after a compaction, with the summary it wrote).

use super::{reindex_detached, Outcome, Payload};
use crate::config::Settings;
use std::path::Path;

/// `PreCompact`, `PostCompact` and `SessionEnd`: memory records from the transcript
/// ([`crate::memory::capture`]; after a compaction, also from the `compact_summary` it wrote, so
/// the summary is a record at once, not only at the session's end), then a detached incremental
/// reindex so the next prompts and sessions find them.
pub(super) fn on_capture(payload: &Payload, root: &Path, index: Option<&Path>, settings: &Settings) -> Outcome {
    if !settings.capture.enabled {
        return Outcome::default();
    }
    let Some(transcript) = &payload.transcript_path else {
        return Outcome::quiet(format!("{} without a transcript_path; nothing captured", payload.event));
    };
    use crate::memory::capture::{capture_with_summary, Trigger};
    let trigger = match payload.event.as_str() {
        "PreCompact" => Trigger::PreCompact,
        "PostCompact" => Trigger::PostCompact,
        _ => Trigger::SessionEnd,
    };
    let summary = payload.compact_summary.as_deref().filter(|_| trigger == Trigger::PostCompact);
    match capture_with_summary(transcript, root, trigger, payload.reason.as_deref(), summary, &settings.capture) {
        Ok(r) if r.written + r.updated == 0 => Outcome::default(),
        Ok(r) => {
            if let Some(index) = index {
                reindex_detached(index, &settings.hook);
            }
            Outcome::quiet(format!(
                "captured {} new and {} updated memory records from {}",
                r.written,
                r.updated,
                transcript.display()
            ))
        }
        Err(e) => Outcome::quiet(format!("capture failed: {e}")),
    }
}
