//! `engine config check`: a config file's unknown keys, bad values and values out of range;
//! `engine config reference`: every key, as `docs/config.md` holds it.

use crate::cli::flags::{ConfigAction, ConfigArgs};
use crate::config::SettingsLayer;
use anyhow::Result;
use std::path::{Path, PathBuf};

pub(crate) fn run(args: ConfigArgs, config: Option<&Path>) -> Result<i32> {
    match args.action {
        ConfigAction::Check { file, show } => check(file, show, config),
        ConfigAction::Reference => {
            print!("{}", crate::config::reference_markdown());
            Ok(0)
        }
    }
}

fn check(file: Option<PathBuf>, show: bool, config: Option<&Path>) -> Result<i32> {
    let path = file.or_else(|| config.map(Path::to_path_buf)).unwrap_or_else(|| PathBuf::from("engine.toml"));
    if !path.is_file() {
        return Err(crate::Error::InvalidInput(format!("no config file at {}", path.display())).into());
    }
    let (layer, warnings) = SettingsLayer::from_file(&path)?;
    let settings = layer.resolve_unchecked();
    let out_of_range: Vec<String> = settings.problems().into_iter().map(|p| format!("config: {p}")).collect();
    for w in warnings.iter().chain(&out_of_range) {
        eprintln!("engine: {}: {}", path.display(), crate::error::one_line(w));
    }
    if show {
        println!("{}", toml::to_string(&settings)?);
    }
    let problems = warnings.len() + out_of_range.len();
    if problems == 0 {
        println!("{}: ok", path.display());
        return Ok(0);
    }
    if out_of_range.is_empty() {
        println!("{}: {problems} problem(s); the defaults named above are used instead", path.display());
    } else {
        println!(
            "{}: {problems} problem(s); commands refuse values out of range (the hook and the daemon use their section's defaults)",
            path.display()
        );
    }
    Ok(crate::cli::exit::USAGE)
}
