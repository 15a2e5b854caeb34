//! `PreCompact` and `SessionEnd`: the session's transcript captured into memory records.

use super::{reindex_detached, Outcome, Payload};
use crate::config::Settings;
use std::path::Path;

/// `PreCompact` and `SessionEnd`: memory records from the transcript ([`crate::memory::capture`]), then a
/// detached incremental reindex so the next prompts and sessions find them.
pub(super) fn on_capture(payload: &Payload, root: &Path, index: Option<&Path>, settings: &Settings) -> Outcome {
    if !settings.capture.enabled {
        return Outcome::default();
    }
    let Some(transcript) = &payload.transcript_path else {
        return Outcome::quiet(format!("{} without a transcript_path; nothing captured", payload.event));
    };
    let trigger = if payload.event == "PreCompact" {
        crate::memory::capture::Trigger::PreCompact
    } else {
        crate::memory::capture::Trigger::SessionEnd
    };
    match crate::memory::capture::capture(transcript, root, trigger, payload.reason.as_deref(), &settings.capture) {
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
