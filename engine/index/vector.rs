//! The vector leg: L2-normalised chunk vectors, searched by dot product. Small collections are
//! searched exactly (a flat scan is both faster and exact below a measured crossover, see
//! `[vector] exact_below`); larger ones through an HNSW graph (hnsw_rs, `DistDot`, built with
//! parallel insertion and persisted next to the vectors).
//!
//! On disk (inside one index generation): `vectors.bin` — magic, dimension, count, how many rows
//! the graph covers, the vector ids, then the rows — and, when a graph exists, hnsw_rs's
//! `graph.hnsw.graph` / `graph.hnsw.data`.
//!
//! An update need not rebuild the graph: removed rows stay in place with the id [`TOMBSTONE`]
//! (skipped by search), new rows are appended after the graph's and searched exactly, and the
//! graph files are hard-linked from the previous generation, until `[vector] stale_max` of the
//! rows are stale; then the rows are compacted and the graph is built again.

use crate::config::VectorConfig;
use crate::embed::dot;
use crate::error::{Error, IoContext, Result};
use hnsw_rs::api::AnnT;
use hnsw_rs::prelude::{DistDot, Hnsw, HnswIo};
use std::io::Write;
use std::path::Path;

const MAGIC: &[u8; 8] = b"ENGVEC02";
/// The format before graphs were reused: no graph row count (the graph, if any, covers every row).
const MAGIC_V1: &[u8; 8] = b"ENGVEC01";
/// The id of a removed row that a reused graph still links to.
pub(crate) const TOMBSTONE: u64 = u64::MAX;
/// Name of the vectors file inside a generation directory.
pub const FILE: &str = "vectors.bin";
const GRAPH: &str = "graph";

/// Vectors with their ids, and the HNSW graph when the collection is large.
pub struct VectorStore {
    /// Floats per vector.
    pub dim: usize,
    /// The vector id of each row, in row order.
    pub vids: Vec<u64>,
    /// The rows, concatenated: `vids.len() × dim` floats.
    pub data: Vec<f32>,
    graph: Option<Hnsw<'static, f32, DistDot>>,
    /// Rows `0..graph_rows` are in the graph (when there is one); the rest are searched exactly.
    graph_rows: usize,
    /// Rows with the id [`TOMBSTONE`].
    dead: usize,
    ef_search: usize,
}

impl VectorStore {
    /// An empty store.
    pub fn empty(dim: usize) -> VectorStore {
        VectorStore { dim, vids: Vec::new(), data: Vec::new(), graph: None, graph_rows: 0, dead: 0, ef_search: 64 }
    }

    /// Number of rows (removed ones a reused graph still holds included).
    pub fn len(&self) -> usize {
        self.vids.len()
    }

    /// How many rows the graph on disk covers (0: none).
    pub(crate) fn graph_rows(&self) -> usize {
        self.graph_rows
    }

    /// The ids and rows, for an update to build on.
    pub(crate) fn into_rows(self) -> (Vec<u64>, Vec<f32>) {
        (self.vids, self.data)
    }

    /// Whether the store holds no vector.
    pub fn is_empty(&self) -> bool {
        self.vids.is_empty()
    }

    pub(crate) fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }

    /// Writes `vectors.bin` (and the graph, when large enough) into `dir`, fsynced.
    /// Returns whether a graph was written.
    pub fn write(dir: &Path, dim: usize, vids: &[u64], data: &[f32], config: &VectorConfig) -> Result<bool> {
        let graph = vids.len() >= config.exact_below;
        write_rows(dir, dim, vids, data, if graph { vids.len() } else { 0 })?;
        if !graph {
            return Ok(false);
        }
        let graph = build_graph(dim, data, config);
        graph.file_dump(dir, GRAPH).map_err(|e| {
            Error::io(format!("writing HNSW graph in {}", dir.display()), std::io::Error::other(e.to_string()))
        })?;
        for ext in ["hnsw.graph", "hnsw.data"] {
            let p = dir.join(format!("{GRAPH}.{ext}"));
            std::fs::File::open(&p).and_then(|f| f.sync_all()).ctx(|| format!("syncing {}", p.display()))?;
        }
        Ok(true)
    }

    /// Writes `vectors.bin` into `dir` over the graph of the generation `from`, which covers the
    /// first `graph_rows` rows (unchanged but for tombstones), hard-linking its files.
    pub(crate) fn write_over(
        dir: &Path,
        dim: usize,
        vids: &[u64],
        data: &[f32],
        graph_rows: usize,
        from: &Path,
    ) -> Result<()> {
        write_rows(dir, dim, vids, data, graph_rows)?;
        for ext in ["hnsw.graph", "hnsw.data"] {
            let name = format!("{GRAPH}.{ext}");
            std::fs::hard_link(from.join(&name), dir.join(&name))
                .ctx(|| format!("linking {} into {}", from.join(&name).display(), dir.display()))?;
        }
        Ok(())
    }

    /// Whether an update with these rows may keep a graph over the first `graph_rows`: few
    /// enough rows are removed or outside it.
    pub(crate) fn graph_reusable(vids: &[u64], graph_rows: usize, stale_max: f32) -> bool {
        let dead = vids.iter().filter(|&&v| v == TOMBSTONE).count();
        graph_rows > 0 && (dead + vids.len() - graph_rows) as f64 <= stale_max as f64 * vids.len() as f64
    }

    /// Drops tombstoned rows in place.
    pub(crate) fn compact(dim: usize, vids: &mut Vec<u64>, data: &mut Vec<f32>) {
        let mut kept = 0;
        for row in 0..vids.len() {
            if vids[row] != TOMBSTONE {
                vids[kept] = vids[row];
                data.copy_within(row * dim..(row + 1) * dim, kept * dim);
                kept += 1;
            }
        }
        vids.truncate(kept);
        data.truncate(kept * dim);
    }

    /// Loads the store of one generation.
    pub fn open(dir: &Path, with_graph: bool, config: &VectorConfig) -> Result<VectorStore> {
        let path = dir.join(FILE);
        let corrupt = |reason: &str| Error::IndexCorrupt { path: path.clone(), reason: reason.into() };
        let bytes = match std::fs::read(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(corrupt("missing")),
            read => read.ctx(|| format!("reading {}", path.display()))?,
        };
        let v1 = bytes.len() >= 8 && &bytes[..8] == MAGIC_V1;
        if bytes.len() < 28 || (&bytes[..8] != MAGIC && !v1) {
            return Err(corrupt("bad header"));
        }
        let dim = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize;
        let n = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes")) as usize;
        let (graph_rows, start) = if v1 {
            (if dir.join(format!("{GRAPH}.hnsw.graph")).is_file() { n } else { 0 }, 20)
        } else {
            (u64::from_le_bytes(bytes[20..28].try_into().expect("8 bytes")) as usize, 28)
        };
        if bytes.len() != start + n * 8 + n * dim * 4 || graph_rows > n {
            return Err(corrupt("truncated"));
        }
        let vids: Vec<u64> =
            bytes[start..start + n * 8].chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8"))).collect();
        let data =
            bytes[start + n * 8..].chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4"))).collect();
        let dead = vids.iter().filter(|&&v| v == TOMBSTONE).count();
        let graph = if with_graph {
            // hnsw_rs's loaded graph borrows its loader; the loader lives as long as the process
            // keeps this generation open (a few hundred bytes once the data is copied in).
            let io: &'static mut HnswIo = Box::leak(Box::new(HnswIo::new(dir, GRAPH)));
            let mut g: Hnsw<'static, f32, DistDot> = io
                .load_hnsw::<f32, DistDot>()
                .map_err(|e| Error::IndexCorrupt { path: dir.join(GRAPH), reason: e.to_string() })?;
            g.set_searching_mode(true);
            Some(g)
        } else {
            None
        };
        Ok(VectorStore { dim, vids, data, graph, graph_rows, dead, ef_search: config.ef_search })
    }

    /// The `k` nearest rows to `query` as (row index, cosine), best first.
    pub fn search(&self, query: &[f32], k: usize) -> Vec<(usize, f32)> {
        let Some(g) = &self.graph else { return self.search_exact(query, k) };
        // Removed rows still in the graph may take places: ask for as many more as could.
        let want = k + self.dead.min(self.ef_search);
        let mut hits: Vec<(usize, f32)> = g
            .search(query, want, self.ef_search.max(want))
            .into_iter()
            .filter(|n| self.vids.get(n.d_id).is_some_and(|&v| v != TOMBSTONE))
            .map(|n| (n.d_id, 1.0 - n.distance))
            .collect();
        hits.extend(self.scan(self.graph_rows..self.len(), query, k));
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.truncate(k);
        hits
    }

    /// Exact top-k by a flat scan.
    pub fn search_exact(&self, query: &[f32], k: usize) -> Vec<(usize, f32)> {
        self.scan(0..self.len(), query, k)
    }

    fn scan(&self, rows: std::ops::Range<usize>, query: &[f32], k: usize) -> Vec<(usize, f32)> {
        top_k(rows.filter(|&i| self.vids[i] != TOMBSTONE).map(|i| (i, dot(self.row(i), query))), k)
    }
}

/// Writes `vectors.bin`, fsynced.
fn write_rows(dir: &Path, dim: usize, vids: &[u64], data: &[f32], graph_rows: usize) -> Result<()> {
    let path = dir.join(FILE);
    let mut f = std::io::BufWriter::with_capacity(
        1 << 20,
        std::fs::File::create(&path).ctx(|| format!("creating {}", path.display()))?,
    );
    let mut put = |bytes: &[u8]| f.write_all(bytes).ctx(|| format!("writing {}", path.display()));
    put(MAGIC)?;
    put(&(dim as u32).to_le_bytes())?;
    put(&(vids.len() as u64).to_le_bytes())?;
    put(&(graph_rows as u64).to_le_bytes())?;
    for v in vids {
        put(&v.to_le_bytes())?;
    }
    for x in data {
        put(&x.to_le_bytes())?;
    }
    let f = f.into_inner().map_err(|e| Error::io(format!("writing {}", path.display()), e.into_error()))?;
    f.sync_all().ctx(|| format!("syncing {}", path.display()))
}

/// Top `k` by score (descending), ties by index, without sorting everything.
pub fn top_k(scores: impl Iterator<Item = (usize, f32)>, k: usize) -> Vec<(usize, f32)> {
    use std::cmp::Ordering;
    use std::collections::BinaryHeap;
    #[derive(PartialEq)]
    struct Entry(f32, usize);
    impl Eq for Entry {}
    impl PartialOrd for Entry {
        fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
            Some(self.cmp(o))
        }
    }
    impl Ord for Entry {
        // Min-heap on score; among equal scores the larger index is "smaller" (evicted first).
        fn cmp(&self, o: &Self) -> Ordering {
            o.0.total_cmp(&self.0).then(self.1.cmp(&o.1))
        }
    }
    if k == 0 {
        return Vec::new();
    }
    let mut heap = BinaryHeap::with_capacity(k + 1);
    for (i, s) in scores {
        heap.push(Entry(s, i));
        if heap.len() > k {
            heap.pop();
        }
    }
    let mut out: Vec<(usize, f32)> = heap.into_iter().map(|e| (e.1, e.0)).collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

/// Builds an HNSW graph over the rows of `data` (row index = data id), inserting in parallel.
pub(crate) fn build_graph(dim: usize, data: &[f32], config: &VectorConfig) -> Hnsw<'static, f32, DistDot> {
    let n = data.len() / dim.max(1);
    // hnsw_rs dumps only graphs declared with its maximum layer count (16).
    let graph = Hnsw::<f32, DistDot>::new(config.m, n.max(1), 16, config.ef_construction, DistDot);
    let rows: Vec<(&[f32], usize)> = (0..n).map(|i| (&data[i * dim..(i + 1) * dim], i)).collect();
    graph.parallel_insert_slice(&rows);
    graph
}

/// A graph held in memory (for benchmarks and recall measurements).
pub struct Graph {
    graph: Hnsw<'static, f32, DistDot>,
}

impl Graph {
    /// Builds the graph over the rows of `data` (`dim` floats each) with `config`'s HNSW settings.
    pub fn build(dim: usize, data: &[f32], config: &VectorConfig) -> Graph {
        let mut graph = build_graph(dim, data, config);
        graph.set_searching_mode(true);
        Graph { graph }
    }

    /// The `k` nearest rows to `query` as (row index, dot product), searching with `ef` candidates (at least `k`).
    pub fn search(&self, query: &[f32], k: usize, ef: usize) -> Vec<(usize, f32)> {
        self.graph.search(query, k, ef.max(k)).into_iter().map(|n| (n.d_id, 1.0 - n.distance)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_k_is_ordered_and_breaks_ties_by_index() {
        let s = [(0, 0.5), (1, 0.9), (2, 0.5), (3, 0.1)];
        assert_eq!(top_k(s.into_iter(), 3), [(1, 0.9), (0, 0.5), (2, 0.5)]);
    }

    #[test]
    fn store_round_trips_and_graph_finds_exact_neighbours() {
        let dim = 8;
        let mut data = Vec::new();
        for i in 0..300 {
            let mut v: Vec<f32> = (0..dim).map(|j| (((i * 31 + j * 17) % 23) as f32) - 11.0).collect();
            crate::embed::normalize(&mut v);
            data.extend(v);
        }
        let vids: Vec<u64> = (0..300).map(|i| 1000 + i).collect();
        let dir = tempfile::tempdir().unwrap();
        let config = VectorConfig { exact_below: 100, ..VectorConfig::default() };
        assert!(VectorStore::write(dir.path(), dim, &vids, &data, &config).unwrap());
        let store = VectorStore::open(dir.path(), true, &config).unwrap();
        assert_eq!(store.vids, vids);
        let q = store.row(7).to_vec();
        // Rows repeat every 23, so check the score, not the index.
        assert!((store.search(&q, 1)[0].1 - 1.0).abs() < 1e-5);
        assert_eq!(store.search_exact(&q, 1)[0], (7, store.search_exact(&q, 1)[0].1));
        std::fs::write(dir.path().join(FILE), b"ENGVEC01junk").unwrap();
        assert!(matches!(VectorStore::open(dir.path(), false, &config), Err(Error::IndexCorrupt { .. })));
    }
}
