//! Abstention and calibrated labels: whether anything in the index answers a prompt at all, and
//! which hit, if any, deserves "high".
//!
//! Per-hit scores cannot say that nothing answers: every query has a best hit, and on a real
//! repository a plausible question the project does not answer still finds chunks at cosine 0.5.
//! What tells them apart is query-level evidence: how close the best chunk is (cosine), how much of
//! the query's term weight one of the best chunks contains (coverage), how much of it the corpus has
//! never seen at all (unseen), and whether the prompt is a turn of the conversation rather than a
//! question ([`crate::search::intent::conversational`]), and how far the best cosine stands above the
//! tenth-best (a prompt that only shares the project's topic is about as close to many chunks as
//! to the best one). A logistic model of those five gives the
//! probability that the prompt has an answer here; below `[abstain] threshold` the engine says
//! nothing. The weights are fitted by `scripts/fit/fit-abstain.py` on the golden sets' prompts
//! (answerable against no-answer and chatter) and checked leave-one-corpus-out
//! (docs/quality.md, "Abstention"); none of the features is a raw score whose scale depends on the corpus.
//!
//! When the prompt has an answer, "high" goes to at most the best hit, and only when the
//! probability is high and that hit itself contains most of the query's term weight; the hits of
//! the first `list_files` files are at least "medium" (listed), the rest "low".

use crate::config::AbstainConfig;
use crate::hit::{Confidence, Evidence, Hit};
use serde::Serialize;

/// The decision on one query.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Verdict {
    /// Probability that something in the index answers the query.
    pub probability: f32,
    /// Whether the engine answers (`probability >= [abstain] threshold`).
    pub answers: bool,
}

/// The model's inputs for one query, in the order of the weights.
pub fn features(evidence: &Evidence, conversational: bool, config: &AbstainConfig) -> [f32; 5] {
    [
        evidence.top_cosine.unwrap_or(config.cosine_without_model),
        evidence.best_coverage,
        evidence.unseen,
        f32::from(u8::from(conversational)),
        evidence.cosine_gap.unwrap_or(config.gap_without_model),
    ]
}

/// The probability that the index answers a query with this evidence.
pub(crate) fn probability(evidence: &Evidence, conversational: bool, config: &AbstainConfig) -> f32 {
    let x = features(evidence, conversational, config);
    let w = [config.w_cosine, config.w_coverage, config.w_unseen, config.w_conversational, config.w_gap];
    let z = config.bias + x.iter().zip(w).map(|(x, w)| x * w).sum::<f32>();
    1.0 / (1.0 + (-z).exp())
}

/// Decides whether to answer and relabels the hits (best first) accordingly; `None` (labels left
/// as they are) when abstention is off.
pub(crate) fn calibrate(
    hits: &mut [Hit],
    evidence: &Evidence,
    conversational: bool,
    config: &AbstainConfig,
) -> Option<Verdict> {
    if !config.enabled {
        return None;
    }
    let probability = probability(evidence, conversational, config);
    let memory = hits.first().is_some_and(|h| h.kind == "memory");
    let answers = probability >= if memory { config.memory_threshold } else { config.threshold };
    let mut files: Vec<String> = Vec::new();
    for (i, h) in hits.iter_mut().enumerate() {
        let rank = files.iter().position(|f| *f == h.doc).unwrap_or_else(|| {
            files.push(h.doc.clone());
            files.len() - 1
        });
        let listed = rank < config.list_files;
        h.confidence = if !answers || !listed {
            Confidence::Low
        } else if i == 0
            && probability >= config.high_probability
            && h.coverage.is_some_and(|c| c >= config.high_coverage)
        {
            Confidence::High
        } else {
            Confidence::Medium
        };
    }
    Some(Verdict { probability, answers })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::block::tests::hit;

    fn evidence(cosine: f32, coverage: f32, unseen: f32) -> Evidence {
        Evidence {
            top_cosine: Some(cosine),
            best_coverage: coverage,
            unseen,
            cosine_gap: Some(0.1),
            ..Evidence::default()
        }
    }

    #[test]
    fn evidence_moves_the_probability_the_right_way() {
        let c = AbstainConfig::default();
        let base = probability(&evidence(0.5, 0.5, 0.0), false, &c);
        assert!(probability(&evidence(0.6, 0.5, 0.0), false, &c) > base);
        assert!(probability(&evidence(0.5, 0.8, 0.0), false, &c) > base);
        assert!(probability(&evidence(0.5, 0.5, 0.4), false, &c) < base);
        assert!(probability(&evidence(0.5, 0.5, 0.0), true, &c) < base);
        let apart = Evidence { cosine_gap: Some(0.2), ..evidence(0.5, 0.5, 0.0) };
        assert!(probability(&apart, false, &c) > base, "a best hit that stands apart is evidence");
        // A close, covered answer is answered; a far one with unseen terms is not.
        assert!(probability(&evidence(0.65, 0.8, 0.0), false, &c) >= c.threshold);
        assert!(probability(&evidence(0.3, 0.2, 0.4), false, &c) < c.threshold);
    }

    #[test]
    fn silence_lowers_every_label_and_high_is_only_the_first_covered_hit() {
        let c = AbstainConfig { list_files: 2, ..AbstainConfig::default() };
        let mut hits: Vec<Hit> = ["a", "a", "b", "c"]
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let mut h = hit(&format!("{d}#{i}"), 1.0 - i as f32 / 10.0, 0.7);
                h.doc = d.to_string();
                h.coverage = Some(0.9);
                h
            })
            .collect();
        let v = calibrate(&mut hits, &evidence(0.7, 0.9, 0.0), false, &c).unwrap();
        assert!(v.answers);
        let labels: Vec<Confidence> = hits.iter().map(|h| h.confidence).collect();
        assert_eq!(labels, [Confidence::High, Confidence::Medium, Confidence::Medium, Confidence::Low]);
        hits[0].coverage = Some(0.1);
        calibrate(&mut hits, &evidence(0.7, 0.9, 0.0), false, &c).unwrap();
        assert_eq!(hits[0].confidence, Confidence::Medium, "high needs the hit itself to cover the query");
        let v = calibrate(&mut hits, &evidence(0.2, 0.1, 0.5), true, &c).unwrap();
        assert!(!v.answers && hits.iter().all(|h| h.confidence == Confidence::Low));
        let off = AbstainConfig { enabled: false, ..c };
        assert_eq!(calibrate(&mut hits, &evidence(0.2, 0.1, 0.5), true, &off), None);
    }
}
