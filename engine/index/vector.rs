//! The vector leg: L2-normalised chunk vectors, searched by dot product. Small collections are
//! searched exactly (a flat scan is both faster and exact below a measured crossover, see
//! `[vector] exact_below`); larger ones through an HNSW graph (hnsw_rs, `DistDot`, built with
//! parallel insertion and persisted next to the vectors).
//!
//! On disk (inside one index generation): `vectors.bin` — magic, dimension, count, how many rows
//! the graph covers, the vector ids, then the rows the graph does not cover — and, when a graph
//! exists, `vectors.base` (the rows it covers, bare floats) and hnsw_rs's `graph.hnsw.graph` /
//! `graph.hnsw.data`. The graph's rows never change while the graph is reused, so their file is
//! hard-linked into the next generation like the graph's: an update rewrites only the ids and
//! the rows added since the graph was built.
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
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"ENGVEC03";
/// The format before the graph's rows had a file of their own: every row in `vectors.bin`.
const MAGIC_V2: &[u8; 8] = b"ENGVEC02";
/// The format before graphs were reused: no graph row count (the graph, if any, covers every row).
const MAGIC_V1: &[u8; 8] = b"ENGVEC01";
/// Name of the file of the graph's rows inside a generation directory.
const BASE: &str = "vectors.base";
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
    #[cfg(any(test, feature = "internals"))]
    pub fn empty(dim: usize) -> VectorStore {
        VectorStore { dim, vids: Vec::new(), data: Vec::new(), graph: None, graph_rows: 0, dead: 0, ef_search: 64 }
    }

    /// Number of rows (removed ones a reused graph still holds included).
    pub fn len(&self) -> usize {
        self.vids.len()
    }

    /// How many rows the graph on disk covers (0: none).
    #[cfg(test)]
    pub(crate) fn graph_rows(&self) -> usize {
        self.graph_rows
    }

    /// The HNSW candidate-list size searches use (see [`VectorConfig::ef_search_for`]).
    #[cfg(any(test, feature = "internals"))]
    pub fn ef_search(&self) -> usize {
        self.ef_search
    }

    /// Whether the store holds no vector.
    #[cfg(any(test, feature = "internals"))]
    pub fn is_empty(&self) -> bool {
        self.vids.is_empty()
    }

    pub(crate) fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }

    /// Writes `rows` into `dir`, fsynced, with a graph built over them when there are enough
    /// (`[vector] exact_below`). Returns whether a graph was written.
    pub(crate) fn write(dir: &Path, rows: &mut Rows, config: &VectorConfig) -> Result<bool> {
        rows.load_all()?;
        let (dim, vids, data) = (rows.dim, &rows.vids, &rows.data);
        let graph = vids.len() >= config.exact_below;
        if !graph {
            write_rows(dir, dim, vids, data, 0)?;
            return Ok(false);
        }
        write_base(dir, data)?;
        write_rows(dir, dim, vids, &[], vids.len())?;
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

    /// Writes `rows` into `dir` over the graph of the generation `from`, which covers their
    /// first `graph_rows` (unchanged but for tombstones), hard-linking its files.
    pub(crate) fn write_over(dir: &Path, rows: &Rows, from: &Path) -> Result<()> {
        let g = rows.graph_rows;
        let tail = &rows.data[(g - rows.first) * rows.dim..];
        write_rows(dir, rows.dim, &rows.vids, tail, g)?;
        let mut linked = vec![format!("{GRAPH}.hnsw.graph"), format!("{GRAPH}.hnsw.data")];
        match rows.first {
            // The previous generation's rows were all read (a format without `vectors.base`).
            0 => write_base(dir, &rows.data[..g * rows.dim])?,
            _ => linked.push(BASE.to_string()),
        }
        for name in linked {
            std::fs::hard_link(from.join(&name), dir.join(&name))
                .ctx(|| format!("linking {} into {}", from.join(&name).display(), dir.display()))?;
        }
        Ok(())
    }

    /// Loads the store of one generation.
    pub fn open(dir: &Path, with_graph: bool, config: &VectorConfig) -> Result<VectorStore> {
        let mut rows = Rows::open(dir)?;
        rows.load_all()?;
        let Rows { dim, vids, data, graph_rows, .. } = rows;
        let dead = vids.iter().filter(|&&v| v == TOMBSTONE).count();
        let graph = if with_graph {
            // hnsw_rs's loaded graph borrows its loader; the loader lives as long as the process
            // keeps this generation open (a few hundred bytes once the data is copied in).
            let io: &'static mut HnswIo = Box::leak(Box::new(HnswIo::new(dir, GRAPH)));
            // hnsw_rs asserts on some damaged files instead of returning an error.
            let loaded = crate::error::catch_panic(|| io.load_hnsw::<f32, DistDot>());
            let mut g: Hnsw<'static, f32, DistDot> = loaded
                .and_then(|r| r.map_err(|e| e.to_string()))
                .map_err(|reason| Error::IndexCorrupt { path: dir.join(GRAPH), reason })?;
            g.set_searching_mode(true);
            Some(g)
        } else {
            None
        };
        let ef_search = config.ef_search_for(graph_rows);
        Ok(VectorStore { dim, vids, data, graph, graph_rows, dead, ef_search })
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

/// A generation's rows as an update edits them: every row's id, and the floats of the rows from
/// `first` on. Rows before `first` are the graph's, unchanged while the graph is reused: they stay
/// in the previous generation's `vectors.base` and are read only when something needs them all.
pub(crate) struct Rows {
    /// Floats per vector.
    pub dim: usize,
    /// The vector id of each row ([`TOMBSTONE`] for a removed one).
    pub vids: Vec<u64>,
    /// The floats of rows `first..vids.len()`.
    data: Vec<f32>,
    first: usize,
    /// Rows `0..graph_rows` are in the previous generation's graph.
    graph_rows: usize,
    /// The generation whose `vectors.base` holds rows `0..first`.
    from: Option<PathBuf>,
}

impl Rows {
    /// No rows.
    pub fn new(dim: usize) -> Rows {
        Rows { dim, vids: Vec::new(), data: Vec::new(), first: 0, graph_rows: 0, from: None }
    }

    /// The rows of the generation in `dir`, without the graph's.
    pub fn open(dir: &Path) -> Result<Rows> {
        let path = dir.join(FILE);
        let corrupt = |reason: &str| Error::IndexCorrupt { path: path.clone(), reason: reason.into() };
        let bytes = match std::fs::read(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(corrupt("missing")),
            read => read.ctx(|| format!("reading {}", path.display()))?,
        };
        let magic = bytes.get(..8).unwrap_or_default();
        let (v1, v2) = (magic == MAGIC_V1, magic == MAGIC_V2);
        if bytes.len() < 28 || (magic != MAGIC && !v1 && !v2) {
            return Err(corrupt("bad header"));
        }
        let dim = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize;
        let n = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes")) as usize;
        let (graph_rows, start) = if v1 {
            (if dir.join(format!("{GRAPH}.hnsw.graph")).is_file() { n } else { 0 }, 20)
        } else {
            (u64::from_le_bytes(bytes[20..28].try_into().expect("8 bytes")) as usize, 28)
        };
        // Before this format every row was in this file; now the graph's are in `vectors.base`.
        let first = if v1 || v2 { 0 } else { graph_rows };
        if graph_rows > n || bytes.len() != start + n * 8 + (n - first) * dim * 4 {
            return Err(corrupt("truncated"));
        }
        let vids =
            bytes[start..start + n * 8].chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8"))).collect();
        let data =
            bytes[start + n * 8..].chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4"))).collect();
        Ok(Rows { dim, vids, data, first, graph_rows, from: (first > 0).then(|| dir.to_path_buf()) })
    }

    /// How many rows the previous generation's graph covers (0: none).
    pub fn graph_rows(&self) -> usize {
        self.graph_rows
    }

    /// Appends a row.
    pub fn push(&mut self, vid: u64, row: &[f32]) {
        self.vids.push(vid);
        self.data.extend_from_slice(row);
    }

    /// Reads the graph's rows from the previous generation, if they are not in memory yet.
    pub fn load_all(&mut self) -> Result<()> {
        let Some(from) = self.from.take() else { return Ok(()) };
        let path = from.join(BASE);
        let bytes = match std::fs::read(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::IndexCorrupt { path, reason: "missing".into() })
            }
            read => read.ctx(|| format!("reading {}", path.display()))?,
        };
        if bytes.len() != self.first * self.dim * 4 {
            return Err(Error::IndexCorrupt { path, reason: "truncated".into() });
        }
        let mut data: Vec<f32> = Vec::with_capacity(self.vids.len() * self.dim);
        data.extend(bytes.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4"))));
        data.extend_from_slice(&self.data);
        self.data = data;
        self.first = 0;
        Ok(())
    }

    /// Whether an update with these rows may keep the graph over the first `graph_rows`: few
    /// enough rows are removed or outside it.
    pub fn graph_reusable(&self, stale_max: f32) -> bool {
        let dead = self.vids.iter().filter(|&&v| v == TOMBSTONE).count();
        let n = self.vids.len();
        self.graph_rows > 0 && (dead + n - self.graph_rows) as f64 <= stale_max as f64 * n as f64
    }

    /// Drops tombstoned rows, reading every row first; the graph no longer fits them.
    pub fn compact(&mut self) -> Result<()> {
        self.load_all()?;
        let dim = self.dim;
        let mut kept = 0;
        for row in 0..self.vids.len() {
            if self.vids[row] != TOMBSTONE {
                self.vids[kept] = self.vids[row];
                self.data.copy_within(row * dim..(row + 1) * dim, kept * dim);
                kept += 1;
            }
        }
        self.vids.truncate(kept);
        self.data.truncate(kept * dim);
        self.graph_rows = 0;
        Ok(())
    }
}

/// Writes the graph's rows as bare floats (`vectors.base`), fsynced.
fn write_base(dir: &Path, data: &[f32]) -> Result<()> {
    let path = dir.join(BASE);
    // Streamed: a whole-array byte copy would add the vectors' size to the peak of a build.
    let mut f = std::io::BufWriter::with_capacity(1 << 20, crate::index::store::create_new(&path)?);
    for x in data {
        f.write_all(&x.to_le_bytes()).ctx(|| format!("writing {}", path.display()))?;
    }
    let f = f.into_inner().map_err(|e| e.into_error()).ctx(|| format!("writing {}", path.display()))?;
    f.sync_all().ctx(|| format!("syncing {}", path.display()))
}

/// Writes `vectors.bin` (ids, then the rows from `graph_rows` on), fsynced.
fn write_rows(dir: &Path, dim: usize, vids: &[u64], data: &[f32], graph_rows: usize) -> Result<()> {
    let path = dir.join(FILE);
    let mut f = std::io::BufWriter::with_capacity(1 << 20, crate::index::store::create_new(&path)?);
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
#[cfg(any(test, feature = "internals"))]
pub struct Graph {
    graph: Hnsw<'static, f32, DistDot>,
}

#[cfg(any(test, feature = "internals"))]
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
        let mut rows = Rows::new(dim);
        for (i, &vid) in vids.iter().enumerate() {
            rows.push(vid, &data[i * dim..(i + 1) * dim]);
        }
        let dir = tempfile::tempdir().unwrap();
        let config = VectorConfig { exact_below: 100, ..VectorConfig::default() };
        assert!(VectorStore::write(dir.path(), &mut rows, &config).unwrap());
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
