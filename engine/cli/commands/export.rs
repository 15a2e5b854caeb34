//! `engine export`: every chunk with its vector as JSON lines.

use crate::cli::flags::ExportArgs;
use anyhow::Result;

pub(crate) fn run(args: ExportArgs) -> Result<i32> {
    let dir = super::index_dir(args.index)?;
    let n = match args.out {
        Some(path) => {
            let file =
                std::fs::File::create(&path).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
            let mut w = std::io::BufWriter::new(file);
            let n = crate::index::export::export(&dir, &mut w)?;
            std::io::Write::flush(&mut w)?;
            n
        }
        None => crate::index::export::export(&dir, &mut std::io::stdout().lock())?,
    };
    eprintln!("engine: exported {n} chunks");
    Ok(0)
}
