//! Files a command writes (`--out`): written whole or not at all. (What `engine search` prints is
//! rendered in `integrations::daemon::search`, the same code in process and in the daemon.)

use anyhow::{Context, Result};
use std::io::Write;
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
