//! A confidence label per hit (high / medium / low) when abstention is off: ratios of the final
//! score and of the raw evidence to the best hit's, absolute floors on the evidence, a cap when
//! many hits are equally strong, and a stricter floor for a lone result. A wrong "high" costs the
//! user more than a missing one.

use crate::config::TierConfig;
use crate::hit::{Confidence, Hit};

/// The raw evidence of a hit and the floors that apply to it: cosine when the query was
/// embedded, else raw BM25.
fn evidence(h: &Hit, config: &TierConfig) -> Option<(f32, f32, f32)> {
    match (h.cosine, h.bm25) {
        (Some(cos), _) => Some((cos, config.floor_high, config.floor_medium)),
        (None, Some(b)) => Some((b, config.floor_high_bm25, config.floor_medium_bm25)),
        (None, None) => None,
    }
}

/// Labels hits (best first; `score` is the final score) in place. High needs both ratios (final
/// score and evidence, each to the best hit's) and the absolute floor; medium the medium ratios.
pub fn label(hits: &mut [Hit], config: &TierConfig) {
    let best = hits.iter().map(|h| h.score).fold(f32::MIN, f32::max);
    if hits.is_empty() || best <= 0.0 {
        hits.iter_mut().for_each(|h| h.confidence = Confidence::Low);
        return;
    }
    // Evidence ratio: the better of cosine and BM25, each relative to the best hit's. Cosine
    // alone marked a struct low next to a one-line `impl` chunk that embeds closer to a bare
    // identifier; with BM25 too, 51 dev hits were high at 86% relevant instead of 45 at 87%.
    let best_cos = hits.iter().filter_map(|h| h.cosine).fold(0.0f32, f32::max);
    let best_bm25 = hits.iter().filter_map(|h| h.bm25).fold(0.0f32, f32::max);
    let evidence_ratio = |h: &Hit| {
        let cos = h.cosine.filter(|_| best_cos > 0.0).map_or(0.0, |c| c / best_cos);
        let bm25 = h.bm25.filter(|_| best_bm25 > 0.0).map_or(0.0, |b| b / best_bm25);
        cos.max(bm25)
    };
    for h in hits.iter_mut() {
        let (r, e) = (h.score / best, evidence_ratio(h));
        let mut c = if r >= config.high_ratio && e >= config.evidence_high {
            Confidence::High
        } else if r >= config.medium_ratio && e >= config.evidence_medium {
            Confidence::Medium
        } else {
            Confidence::Low
        };
        if config.floor {
            match evidence(h, config) {
                Some((v, _, medium)) if v < medium => c = Confidence::Low,
                Some((v, high, _)) if v < high => c = c.min(Confidence::Medium),
                Some(_) => {}
                None => c = c.min(Confidence::Medium),
            }
        }
        h.confidence = c;
    }
    if config.cluster_cap {
        let close = hits.iter().filter(|h| evidence_ratio(h) >= config.cluster_ratio).count();
        if close > config.max_inject {
            cap(hits, Confidence::Medium);
        }
    }
    if hits.len() == 1 && hits[0].cosine.is_none_or(|c| c < config.single_floor) {
        cap(hits, Confidence::Medium);
    }
}

fn cap(hits: &mut [Hit], at: Confidence) {
    hits.iter_mut().for_each(|h| h.confidence = h.confidence.min(at));
}
