//! Two runs of one report compared query by query: which queries each wins, and how sure the
//! mean difference is. On a set as small as a golden half, one query's rank moves the mean
//! visibly; the paired bootstrap interval says whether a set can tell two configurations apart
//! before anyone reads a gap as a result.

use super::{Delta, RunReport};

/// Bootstrap resamples: enough that the 2.5% and 97.5% points vary by about 0.001 from one seed
/// to another at a golden half's spread of per-query differences.
const RESAMPLES: usize = 10_000;

/// The share of resampled means outside the interval, half on each side.
const OUTSIDE: f64 = 0.05;

/// The resampling seed, fixed so that a report reads the same on every run.
const SEED: u64 = 0x0005_eed5_eed5_eed5;

/// Run A against run B over the queries both judged (nDCG@10).
#[derive(Debug, Clone)]
pub struct Comparison {
    /// Queries where A scores higher: (query id, A, B), largest difference first.
    pub better: Vec<Delta>,
    /// Queries where A scores lower, largest difference first.
    pub worse: Vec<Delta>,
    /// Queries scored the same by both.
    pub tied: usize,
    /// Mean of A − B.
    pub mean: f64,
    /// The 95% paired bootstrap interval of that mean: queries resampled with replacement.
    pub interval: (f64, f64),
}

impl Comparison {
    /// Compares `a` with `b` on the queries both have metrics for.
    pub(crate) fn of(a: &RunReport, b: &RunReport) -> Comparison {
        let mut better = Vec::new();
        let mut worse = Vec::new();
        let mut differences = Vec::new();
        for (q, ma) in &a.per_query {
            let Some(mb) = b.per_query.get(q) else { continue };
            let d = ma.ndcg10 - mb.ndcg10;
            differences.push(d);
            if d > 1e-9 {
                better.push((q.clone(), ma.ndcg10, mb.ndcg10));
            } else if d < -1e-9 {
                worse.push((q.clone(), ma.ndcg10, mb.ndcg10));
            }
        }
        better.sort_by(|x, y| (y.1 - y.2).total_cmp(&(x.1 - x.2)).then(x.0.cmp(&y.0)));
        worse.sort_by(|x, y| (x.1 - x.2).total_cmp(&(y.1 - y.2)).then(x.0.cmp(&y.0)));
        let tied = differences.len() - better.len() - worse.len();
        Comparison { better, worse, tied, mean: mean(&differences), interval: bootstrap(&differences) }
    }

    /// Queries compared.
    pub fn queries(&self) -> usize {
        self.better.len() + self.worse.len() + self.tied
    }
}

fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

/// The central 95% of the means of [`RESAMPLES`] resamples of `differences`, each drawn with
/// replacement and as long as the original; (0, 0) for no differences.
fn bootstrap(differences: &[f64]) -> (f64, f64) {
    let n = differences.len();
    if n == 0 {
        return (0.0, 0.0);
    }
    let mut state = SEED;
    let mut means: Vec<f64> = (0..RESAMPLES)
        .map(|_| (0..n).map(|_| differences[(splitmix(&mut state) % n as u64) as usize]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let tail = (RESAMPLES as f64 * OUTSIDE / 2.0) as usize;
    (means[tail], means[RESAMPLES - 1 - tail])
}

/// SplitMix64: a small, well-mixed generator; the resampling needs no more, and no dependency.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_difference_has_a_point_interval_at_zero() {
        assert_eq!(bootstrap(&[0.0; 12]), (0.0, 0.0));
        assert_eq!(bootstrap(&[]), (0.0, 0.0));
    }

    #[test]
    fn a_consistent_gain_excludes_zero_and_stays_within_the_differences() {
        let d: Vec<f64> = (0..25).map(|i| 0.02 + 0.004 * i as f64).collect();
        let (lo, hi) = bootstrap(&d);
        assert!(lo > 0.0 && lo < mean(&d) && mean(&d) < hi && hi <= 0.116, "({lo}, {hi})");
    }

    #[test]
    fn wins_and_losses_of_one_size_straddle_zero() {
        let mut d = vec![0.1; 12];
        d.extend([-0.1; 12]);
        d.extend([0.0; 2]);
        let (lo, hi) = bootstrap(&d);
        assert!(lo < 0.0 && hi > 0.0, "({lo}, {hi})");
        // Fixed seed: the same interval every time.
        assert_eq!(bootstrap(&d), (lo, hi));
    }

    #[test]
    fn one_query_cannot_decide_a_set() {
        // Twenty ties and one large win: the mean is positive, the interval reaches zero.
        let mut d = vec![0.0; 20];
        d.push(0.5);
        let (lo, hi) = bootstrap(&d);
        assert_eq!(lo, 0.0);
        assert!(hi > mean(&d), "({lo}, {hi})");
    }
}
