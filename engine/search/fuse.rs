//! Fusion of the legs' ranked lists: weighted reciprocal rank fusion with a k per leg, weights
//! mixed from per-intent profiles by the intent probabilities, a consensus factor for hits that
//! several legs found, and an expansion boost applied later by the caller (it needs the hit's
//! stored fields). Pure functions; every constant comes from [`FuseConfig`].

use crate::config::{FuseConfig, Weights};
pub(crate) use crate::hit::{Leg, LegContribution, LegHit};
use crate::search::intent::{Intent, IntentResult};
use serde::Serialize;
use std::collections::HashMap;

/// A fused hit.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct Fused {
    pub key: u64,
    pub score: f32,
    pub rrf: f32,
    pub consensus: f32,
    pub legs: Vec<LegContribution>,
}

/// Leg weights for this query: the intent profiles mixed by the intent probabilities.
pub(crate) fn mix(intent: &IntentResult, config: &FuseConfig) -> Weights {
    let mut w = Weights { vector: 0.0, lexical: 0.0, symbol: 0.0 };
    // Sharpening (p^s, renormalised) lets a clear intent pick its own profile.
    let total: f32 = intent.probabilities.iter().map(|(_, p)| p.powf(config.intent_sharpness)).sum();
    for &(i, p) in &intent.probabilities {
        let p = p.powf(config.intent_sharpness) / total.max(f32::MIN_POSITIVE);
        let profile = match i {
            Intent::Symbol => &config.symbol,
            Intent::Flow => &config.flow,
            Intent::Concept => &config.concept,
            Intent::Code => &config.code,
            Intent::Balanced => &config.balanced,
        };
        w.vector += p * profile.vector;
        w.lexical += p * profile.lexical;
        w.symbol += p * profile.symbol;
    }
    w
}

fn weight(w: &Weights, leg: Leg) -> f32 {
    match leg {
        Leg::Vector => w.vector,
        Leg::Lexical => w.lexical,
        Leg::Symbol => w.symbol,
    }
}

fn rrf_k(config: &FuseConfig, leg: Leg) -> f32 {
    match leg {
        Leg::Vector => config.k_vector,
        Leg::Lexical => config.k_lexical,
        Leg::Symbol => config.k_symbol,
    }
}

/// Consensus factor for a hit found by `n_legs` legs at average rank `avg_rank`; 1 for one leg.
pub fn consensus(n_legs: usize, avg_rank: f32, config: &FuseConfig) -> f32 {
    if n_legs < 2 {
        return 1.0;
    }
    let quality = 1.0 / (1.0 + avg_rank / config.consensus_q0);
    let qw = config.consensus_quality_weight;
    (1.0 + config.consensus_beta * ((n_legs as f32).sqrt() - 1.0)).min(config.consensus_max) * (1.0 - qw + qw * quality)
}

/// Fuses ranked lists into one, best first; ties broken by key for determinism.
pub fn fuse(legs: &[(Leg, Vec<LegHit>)], weights: &Weights, config: &FuseConfig) -> Vec<Fused> {
    let mut by_key: HashMap<u64, Fused> = HashMap::new();
    // RRF's curve is flat (k = 70: rank 1 and rank 10 differ by ~12%), so even a small weight lets
    // a leg's top hit jump many places: among the legs that ran, one far weaker than the strongest
    // is dropped. A leg that ran alone keeps its order.
    let strongest = legs.iter().map(|(l, _)| weight(weights, *l)).fold(0.0f32, f32::max);
    for (leg, hits) in legs {
        let w = weight(weights, *leg);
        let w = match legs.len() {
            1 if w <= 0.0 => 1.0,
            1 => w,
            _ if w < config.min_weight_ratio * strongest => 0.0,
            _ => w,
        };
        let k = rrf_k(config, *leg);
        for h in hits {
            let rrf = w / (k + h.rank as f32);
            let f = by_key.entry(h.key).or_insert_with(|| Fused {
                key: h.key,
                score: 0.0,
                rrf: 0.0,
                consensus: 1.0,
                legs: Vec::new(),
            });
            f.rrf += rrf;
            f.legs.push(LegContribution { leg: *leg, rank: h.rank, raw_score: h.score, rrf });
        }
    }
    let mut out: Vec<Fused> = by_key
        .into_values()
        .map(|mut f| {
            let n = f.legs.len();
            let avg_rank = f.legs.iter().map(|l| l.rank as f32).sum::<f32>() / n as f32;
            f.consensus = consensus(n, avg_rank, config);
            f.score = f.rrf * f.consensus;
            f
        })
        .collect();
    sort(&mut out);
    out
}

/// Sorts fused hits by score, then key.
pub fn sort(hits: &mut [Fused]) {
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
}

/// The names of the learned fusion's features, in the order of `[fuse] learned_weights`: what
/// the legs already returned for a candidate, relative to the query's other candidates, and the
/// intent's say in how much each leg counts. `scripts/fit/fit-fusion.py` computes the same.
pub const FEATURES: [&str; crate::config::LEARNED_FEATURES] = [
    "lexical found",
    "lexical rank",
    "bm25 / best",
    "vector found",
    "vector rank",
    "cosine",
    "cosine / best",
    "coverage",
    "fused / best",
    "both legs",
    "code x bm25",
    "code x cosine",
    "concept x bm25",
    "concept x cosine",
];

/// What the learned fusion reads of one candidate.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Signals {
    /// Rank in the lexical leg, when it found the candidate.
    pub lexical_rank: Option<usize>,
    /// Raw BM25 score, when the lexical leg found it.
    pub bm25: Option<f32>,
    /// Rank in the vector leg, when it found the candidate.
    pub vector_rank: Option<usize>,
    /// Raw cosine to the query, when the query was embedded.
    pub cosine: Option<f32>,
    /// Share of the query's term weight (IDF) the candidate's title, path and text hold.
    pub coverage: f32,
    /// The fused (RRF) score.
    pub fused: f32,
}

/// The learned fusion's inputs for each of one query's candidates, in the order of [`FEATURES`]; the scales are relative
/// to the query's other candidates, so no feature depends on the corpus's score range.
pub(crate) fn learned_features(candidates: &[Signals], intent: &IntentResult) -> Vec<[f32; FEATURES.len()]> {
    let best = |f: &dyn Fn(&Signals) -> f32, floor: f32| candidates.iter().map(f).fold(floor, f32::max);
    let best_bm25 = best(&|s| s.bm25.unwrap_or(0.0), 1e-6);
    let best_cos = best(&|s| s.cosine.unwrap_or(0.0), 1e-6);
    let best_fused = best(&|s| s.fused, 1e-9);
    let p = |i: Intent| intent.probabilities.iter().find(|(x, _)| *x == i).map_or(0.0, |(_, p)| *p);
    let (code, concept) = (p(Intent::Code), p(Intent::Concept));
    let found = |r: Option<usize>| if r.is_some() { 1.0 } else { 0.0 };
    let near = |r: Option<usize>| r.map_or(0.0, |r| 10.0 / (10.0 + r as f32));
    candidates
        .iter()
        .map(|s| {
            let (b, c) = (s.bm25.unwrap_or(0.0) / best_bm25, s.cosine.unwrap_or(0.0));
            [
                found(s.lexical_rank),
                near(s.lexical_rank),
                b,
                found(s.vector_rank),
                near(s.vector_rank),
                c,
                c / best_cos,
                s.coverage,
                s.fused / best_fused,
                found(s.lexical_rank) * found(s.vector_rank),
                code * b,
                code * c / best_cos,
                concept * b,
                concept * c / best_cos,
            ]
        })
        .collect()
}

/// The learned fusion's score of one candidate: the logistic model of `[fuse] learned_weights`
/// over its features, a probability in (0, 1).
pub(crate) fn learned_probability(x: &[f32; FEATURES.len()], config: &FuseConfig) -> f32 {
    let z = config.learned_bias + x.iter().zip(&config.learned_weights).map(|(x, w)| x * w).sum::<f32>();
    1.0 / (1.0 + (-z).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn learned(candidates: &[Signals], intent: &IntentResult, config: &FuseConfig) -> Vec<f32> {
        learned_features(candidates, intent).iter().map(|x| learned_probability(x, config)).collect()
    }

    fn hits(keys: &[u64]) -> Vec<LegHit> {
        keys.iter().enumerate().map(|(i, k)| LegHit { key: *k, rank: i + 1, score: 1.0 / (i + 1) as f32 }).collect()
    }

    #[test]
    fn rrf_with_equal_weights_matches_hand_computation() {
        let config = FuseConfig {
            consensus_beta: 0.0,
            consensus_max: 1.0,
            consensus_quality_weight: 0.5,
            ..FuseConfig::default()
        };
        let w = Weights { vector: 1.0, lexical: 1.0, symbol: 0.0 };
        let out = fuse(&[(Leg::Vector, hits(&[1, 2])), (Leg::Lexical, hits(&[2, 3]))], &w, &config);
        assert_eq!(out[0].key, 2);
        let expected = 1.0 / 72.0 + 1.0 / 71.0;
        // Two legs, beta 0: factor = 1 * (0.5 + 0.5 * q), q = 1 / (1 + 1.5 / 10).
        let q = 1.0 / (1.0 + 1.5 / 10.0);
        assert!((out[0].score - expected * (0.5 + 0.5 * q)).abs() < 1e-7);
        assert_eq!(out[0].legs.len(), 2);
    }

    #[test]
    fn learned_fusion_is_the_logistic_model_of_its_features() {
        let intent = crate::search::intent::classify("how are sessions stored after login");
        let a = Signals {
            lexical_rank: Some(1),
            bm25: Some(10.0),
            vector_rank: Some(3),
            cosine: Some(0.6),
            coverage: 0.8,
            fused: 0.03,
        };
        let b = Signals {
            lexical_rank: None,
            bm25: None,
            vector_rank: Some(1),
            cosine: Some(0.5),
            coverage: 0.1,
            fused: 0.02,
        };
        // One weight on coverage: the score is sigmoid(bias + w · coverage), whatever else differs.
        let mut config =
            FuseConfig { learned_bias: -1.0, learned_weights: vec![0.0; FEATURES.len()], ..FuseConfig::default() };
        config.learned_weights[FEATURES.iter().position(|f| *f == "coverage").unwrap()] = 2.0;
        let s = learned(&[a, b], &intent, &config);
        assert!((s[0] - 1.0 / (1.0 + (-(2.0 * 0.8 - 1.0f32)).exp())).abs() < 1e-6, "{s:?}");
        assert!((s[1] - 1.0 / (1.0 + (-(2.0 * 0.1 - 1.0f32)).exp())).abs() < 1e-6, "{s:?}");
        // Features relative to the query's other candidates: b's cosine is 0.5 / 0.6 of the best.
        config.learned_weights = vec![0.0; FEATURES.len()];
        config.learned_weights[FEATURES.iter().position(|f| *f == "cosine / best").unwrap()] = 1.0;
        let s = learned(&[a, b], &intent, &config);
        assert!((s[1] - 1.0 / (1.0 + (-(0.5 / 0.6 - 1.0f32)).exp())).abs() < 1e-6, "{s:?}");
        // The shipped weights prefer the candidate both legs found near the top and that holds
        // the query's words.
        let s = learned(&[a, b], &intent, &FuseConfig::default());
        assert!(s[0] > s[1] && s.iter().all(|p| *p > 0.0 && *p < 1.0), "{s:?}");
    }

    #[test]
    fn consensus_follows_the_formula_and_caps() {
        let c = FuseConfig { consensus_beta: 0.3, consensus_quality_weight: 0.5, ..FuseConfig::default() };
        assert_eq!(consensus(1, 1.0, &c), 1.0);
        let two = consensus(2, 0.0, &c);
        assert!((two - (1.0 + 0.3 * (2f32.sqrt() - 1.0))).abs() < 1e-6);
        let q = 1.0 / (1.0 + 5.0 / 10.0);
        assert!((consensus(2, 5.0, &c) - (1.0 + 0.3 * (2f32.sqrt() - 1.0)) * (0.5 + 0.5 * q)).abs() < 1e-6);
        let capped = FuseConfig { consensus_beta: 10.0, consensus_quality_weight: 0.5, ..FuseConfig::default() };
        assert!((consensus(3, 0.0, &capped) - 1.5).abs() < 1e-6);
    }

    #[test]
    fn weights_mix_by_probability() {
        let c = FuseConfig { intent_sharpness: 1.0, ..FuseConfig::default() };
        let intent = IntentResult {
            probabilities: vec![
                (Intent::Symbol, 0.5),
                (Intent::Flow, 0.0),
                (Intent::Concept, 0.5),
                (Intent::Code, 0.0),
                (Intent::Balanced, 0.0),
            ],
            top: Intent::Symbol,
            symbols: vec![],
            paths: vec![],
            modules: vec![],
            conversational: false,
            about_tests: false,
        };
        let w = mix(&intent, &c);
        assert!((w.symbol - (0.5 * c.symbol.symbol + 0.5 * c.concept.symbol)).abs() < 1e-6);
        assert!((w.vector - (0.5 * c.symbol.vector + 0.5 * c.concept.vector)).abs() < 1e-6);
    }

    #[test]
    fn ties_break_by_key() {
        let w = Weights { vector: 1.0, lexical: 1.0, symbol: 1.0 };
        let out = fuse(
            &[
                (Leg::Vector, vec![LegHit { key: 9, rank: 1, score: 0.0 }]),
                (Leg::Lexical, vec![LegHit { key: 3, rank: 1, score: 0.0 }]),
            ],
            &w,
            &FuseConfig { k_lexical: 70.0, k_vector: 70.0, ..FuseConfig::default() },
        );
        assert_eq!(out.iter().map(|f| f.key).collect::<Vec<_>>(), [3, 9]);
    }

    #[test]
    fn a_leg_far_weaker_than_the_strongest_is_dropped_unless_alone() {
        let config = FuseConfig::default();
        let hits = |keys: &[u64]| {
            keys.iter().enumerate().map(|(i, k)| LegHit { key: *k, rank: i + 1, score: 1.0 }).collect::<Vec<_>>()
        };
        let w = Weights { vector: 0.8, lexical: 0.15, symbol: 0.05 };
        let legs = vec![(Leg::Vector, hits(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10])), (Leg::Lexical, hits(&[10, 9]))];
        let order: Vec<u64> = fuse(&legs, &w, &config).iter().map(|f| f.key).collect();
        assert_eq!(order, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "0.15 < 0.25 × 0.8: BM25 is dropped");
        let kept = fuse(&legs, &w, &FuseConfig { min_weight_ratio: 0.0, ..config.clone() });
        let mut top: Vec<u64> = kept[..2].iter().map(|f| f.key).collect();
        top.sort();
        assert_eq!(top, [9, 10], "without the rule BM25's two hits jump from vector ranks 9 and 10 to the top");
        let alone = vec![(Leg::Lexical, hits(&[7, 3, 5]))];
        let order: Vec<u64> =
            fuse(&alone, &Weights { vector: 1.0, lexical: 0.0, symbol: 0.0 }, &config).iter().map(|f| f.key).collect();
        assert_eq!(order, [7, 3, 5], "a lone leg keeps its order whatever its weight");
    }
}
