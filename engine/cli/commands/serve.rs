//! `engine serve`: the warm daemon the hook starts by itself.

use crate::cli::flags::ServeArgs;
use anyhow::Result;

pub(crate) fn run(args: ServeArgs) -> Result<i32> {
    let dir = super::index_dir(args.index)?;
    crate::integrations::daemon::serve(&dir, args.idle_timeout.map(std::time::Duration::from_secs))?;
    Ok(0)
}
