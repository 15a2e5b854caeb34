//! What a person reads (search results with highlighted query words) and files a command writes
//! (`--out`): written whole or not at all.

use crate::SearchResponse;
use anyhow::{Context, Result};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// A file a command writes with `--out`: into a temporary file beside it, renamed over it only
/// once complete, so a failing command leaves the target as it was. A path inside an index
/// directory is refused: overwriting `CURRENT` or a generation's file would destroy the index.
pub(crate) struct OutFile {
    path: PathBuf,
    tmp: PathBuf,
    file: std::io::BufWriter<std::fs::File>,
}

impl OutFile {
    pub fn create(path: &Path) -> Result<OutFile> {
        let abs = std::path::absolute(path)?;
        if abs.ancestors().skip(1).any(|d| d.file_name().is_some_and(|n| n == ".engine") || d.join("CURRENT").is_file())
        {
            return Err(crate::Error::InvalidInput(format!(
                "{} is inside an index directory; write the output elsewhere",
                path.display()
            ))
            .into());
        }
        let name = abs.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
        let tmp = abs.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
        let file = std::fs::File::create(&tmp).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(OutFile { path: path.to_path_buf(), tmp, file: std::io::BufWriter::new(file) })
    }

    /// Writes `bytes` to `path` whole, or leaves it as it was.
    pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
        let mut out = OutFile::create(path)?;
        out.write_all(bytes).with_context(|| format!("writing {}", path.display()))?;
        out.finish()
    }

    /// Renames the complete file over the target.
    pub fn finish(mut self) -> Result<()> {
        let done = self.file.flush().and_then(|()| self.file.get_ref().sync_all());
        done.and_then(|()| std::fs::rename(&self.tmp, &self.path))
            .with_context(|| format!("writing {}", self.path.display()))
    }
}

impl Write for OutFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl Drop for OutFile {
    /// An unfinished file is removed (after `finish` it was renamed away: nothing to remove).
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.tmp);
    }
}

fn highlight(text: &str, query: &str, color: bool) -> String {
    if !color {
        return text.to_string();
    }
    let terms: Vec<String> =
        query.split(|c: char| !c.is_alphanumeric()).filter(|t| t.len() > 2).map(str::to_lowercase).collect();
    text.split(' ')
        .map(|w| {
            let lw = w.to_lowercase();
            if terms.iter().any(|t| lw.contains(t.as_str())) {
                format!("\x1b[1;33m{w}\x1b[0m")
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Prints results for a person.
pub(crate) fn print_human(resp: &SearchResponse) {
    let color = std::io::stdout().is_terminal();
    if resp.degraded {
        eprintln!(
            "engine: answering from BM25 only: {}",
            resp.degraded_reason.as_deref().unwrap_or("no embedding model")
        );
    }
    if let Some(v) = resp.vectors {
        eprintln!(
            "engine: still embedding: {} of {} chunks have vectors; the rest are found by BM25 only",
            v.embedded, v.chunks
        );
    }
    if let Some(r) = resp.rerank.as_ref().filter(|r| !r.applied) {
        eprintln!("engine: not reranked: {}", r.reason.as_deref().unwrap_or("unknown reason"));
    }
    if resp.results.is_empty() {
        println!("no results for {:?}", resp.query);
    }
    for (i, h) in resp.results.iter().enumerate() {
        println!(
            "{:>2}. {:.4} {:<6}  {}:{}-{}  {}",
            i + 1,
            h.score,
            h.confidence.as_str(),
            h.path,
            h.start_line,
            h.end_line,
            h.title
        );
        println!("      {}", highlight(&h.snippet, &resp.query, color));
    }
}
