//! Queries asked at the same time share one model run. The model runs one batch at a time; a
//! query that arrives while it is busy waits in a queue, and whoever gets the model next embeds
//! every queued query in a single batch. Prompts answered side by side (the daemon) thus pay
//! one run's fixed cost between them rather than one each. The vectors do not change: the
//! embedding graph is batch-invariant (scripts/derive-embedder.py).

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::{Condvar, Mutex, MutexGuard, TryLockError};

/// A model `M` shared by batch runs and combined queries.
pub(crate) struct Combiner<M> {
    model: Mutex<M>,
    queue: Mutex<Queue>,
    /// Signalled whenever the model is released or a queued query has its answer.
    freed: Condvar,
}

#[derive(Default)]
struct Queue {
    next: u64,
    waiting: Vec<(u64, String)>,
    done: HashMap<u64, Result<Vec<f32>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl<M> Combiner<M> {
    pub(crate) fn new(model: M) -> Combiner<M> {
        Combiner { model: Mutex::new(model), queue: Mutex::new(Queue::default()), freed: Condvar::new() }
    }

    /// Runs `f` with the model to itself (a batch of passages), then wakes queued queries.
    pub(crate) fn with_model<T>(&self, f: impl FnOnce(&mut M) -> T) -> T {
        let out = f(&mut lock(&self.model));
        let _queue = lock(&self.queue);
        self.freed.notify_all();
        out
    }

    /// The vector of one query. `run` embeds a batch of queries with the model, one vector per
    /// text in order; the queries queued meanwhile ride in the same call.
    pub(crate) fn query(&self, text: &str, run: impl Fn(&mut M, &[&str]) -> Result<Vec<Vec<f32>>>) -> Result<Vec<f32>> {
        let mut queue = lock(&self.queue);
        let id = queue.next;
        queue.next += 1;
        queue.waiting.push((id, text.to_string()));
        loop {
            if let Some(answer) = queue.done.remove(&id) {
                return answer;
            }
            let mut model = match self.model.try_lock() {
                Ok(model) => model,
                Err(TryLockError::Poisoned(p)) => p.into_inner(),
                Err(TryLockError::WouldBlock) => {
                    // Checked and waited under the queue's lock: a release cannot slip between.
                    queue = self.freed.wait(queue).unwrap_or_else(|p| p.into_inner());
                    continue;
                }
            };
            let taken = std::mem::take(&mut queue.waiting);
            drop(queue);
            let texts: Vec<&str> = taken.iter().map(|(_, t)| t.as_str()).collect();
            let result = run(&mut model, &texts);
            drop(model);
            queue = lock(&self.queue);
            match result {
                Ok(vectors) if vectors.len() == taken.len() => {
                    queue.done.extend(taken.iter().map(|(id, _)| *id).zip(vectors.into_iter().map(Ok)));
                }
                Ok(vectors) => {
                    let why = format!("expected {} vectors, got {}", taken.len(), vectors.len());
                    queue.done.extend(taken.iter().map(|(id, _)| (*id, Err(Error::Inference(why.clone())))));
                }
                Err(e) => {
                    let why = e.to_string();
                    queue.done.extend(taken.iter().map(|(id, _)| (*id, Err(Error::Inference(why.clone())))));
                }
            }
            self.freed.notify_all();
        }
    }

    #[cfg(test)]
    fn queued(&self) -> usize {
        lock(&self.queue).waiting.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;

    /// A fake model: the vector of a text is its length; counts its runs.
    fn run(runs: &AtomicUsize) -> impl Fn(&mut (), &[&str]) -> Result<Vec<Vec<f32>>> + '_ {
        move |_, texts| {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok(texts.iter().map(|t| vec![t.len() as f32]).collect())
        }
    }

    #[test]
    fn a_lone_query_gets_its_own_vector() {
        let (combiner, runs) = (Combiner::new(()), AtomicUsize::new(0));
        assert_eq!(combiner.query("abc", run(&runs)).unwrap(), vec![3.0]);
        assert_eq!(combiner.query("abcde", run(&runs)).unwrap(), vec![5.0]);
        assert_eq!(runs.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn queries_queued_while_the_model_is_busy_share_one_run_and_each_gets_its_own_vector() {
        let (combiner, runs) = (Combiner::new(()), AtomicUsize::new(0));
        let ((release, hold), (holding, held)) = (mpsc::channel::<()>(), mpsc::channel::<()>());
        std::thread::scope(|s| {
            let shared = &combiner;
            let busy = s.spawn(move || {
                shared.with_model(|_| {
                    holding.send(()).unwrap();
                    hold.recv().unwrap()
                })
            });
            held.recv().unwrap();
            let askers: Vec<_> = (1..=6usize)
                .map(|n| {
                    let (combiner, runs) = (&combiner, &runs);
                    s.spawn(move || (n, combiner.query(&"x".repeat(n), run(runs)).unwrap()))
                })
                .collect();
            while combiner.queued() < 6 {
                std::thread::yield_now();
            }
            release.send(()).unwrap();
            busy.join().unwrap();
            for asker in askers {
                let (n, vector) = asker.join().unwrap();
                assert_eq!(vector, vec![n as f32]);
            }
        });
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_failed_run_fails_every_query_it_carried() {
        let combiner = Combiner::new(());
        let err = combiner.query("abc", |_, _| Err(Error::Inference("boom".into()))).unwrap_err();
        assert!(err.to_string().contains("boom"), "{err}");
        let short = combiner.query("abc", |_, _| Ok(Vec::new())).unwrap_err();
        assert!(short.to_string().contains("expected 1 vectors, got 0"), "{short}");
    }
}
