//! `engine export`: every chunk with its vector as JSON lines.

use crate::cli::flags::ExportArgs;
use crate::cli::output::OutFile;
use anyhow::Result;

pub(crate) fn run(args: ExportArgs) -> Result<i32> {
    let dir = super::index_dir(args.index)?;
    let n = match args.out {
        Some(path) => {
            // The index is checked before anything is written: a missing one leaves the file.
            crate::index::status(&dir)?;
            let mut out = OutFile::create(&path)?;
            let n = crate::index::export::export(&dir, &mut out)?;
            out.finish()?;
            n
        }
        None => crate::index::export::export(&dir, &mut std::io::stdout().lock())?,
    };
    eprintln!("engine: exported {n} chunks");
    Ok(0)
}
