//! `engine models install` and `engine doctor`: the pinned model files for a binary that lives
//! away from its checkout (`cargo install`), installed by the repository's own installer and
//! manifest, built into the binary, so both stay the ones its tests ran; and a report of what the
//! engine would load.

use crate::cli::flags::{ModelsAction, ModelsArgs, ModelsInstallArgs};
use crate::error::Error;
use crate::models::{Manifest, Models};
use anyhow::Result;
use std::path::PathBuf;

/// The installer and what it reads, as `scripts/fetch-models.sh` finds them in a checkout.
const CHECKOUT: [(&str, &str); 4] = [
    ("scripts/fetch-models.sh", include_str!("../../../scripts/fetch-models.sh")),
    ("scripts/derive-embedder.py", include_str!("../../../scripts/derive-embedder.py")),
    ("scripts/onnx_graph.py", include_str!("../../../scripts/onnx_graph.py")),
    ("models/models.toml", include_str!("../../../models/models.toml")),
];

pub(crate) fn run(args: ModelsArgs) -> Result<i32> {
    match args.action {
        ModelsAction::Install(args) => install(args),
    }
}

fn install(args: ModelsInstallArgs) -> Result<i32> {
    let dest = match args.dest {
        Some(dir) => std::path::absolute(dir)?,
        None => crate::models::user_dir(&|name| std::env::var_os(name)).ok_or_else(|| {
            Error::InvalidInput("no per-user data directory (HOME is not set): give --dest DIR".into())
        })?,
    };
    let work = WorkDir::new()?;
    for (path, text) in CHECKOUT {
        let file = work.0.join(path);
        std::fs::create_dir_all(file.parent().expect("a path inside the work directory"))?;
        std::fs::write(&file, text)?;
    }
    let mut command = std::process::Command::new("bash");
    command.arg(work.0.join(CHECKOUT[0].0)).arg("--dest").arg(&dest).env_remove("ENGINE_MODELS_DIR");
    if args.reranker {
        command.arg("--reranker");
    }
    for name in &args.embedder {
        command.arg("--embedder").arg(name);
    }
    let status = command.status().map_err(|e| Error::io("running bash for the model installer", e))?;
    if !status.success() {
        let reason = "the installer stopped (its message is above); nothing half-written was kept".to_string();
        return Err(Error::ModelMissing { path: dest, reason }.into());
    }
    println!("models installed in {}; `engine doctor` shows what the engine loads", dest.display());
    Ok(0)
}

/// A scratch directory removed when dropped.
struct WorkDir(PathBuf);

impl WorkDir {
    fn new() -> Result<WorkDir> {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!("engine-models-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        Ok(WorkDir(dir))
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What the engine would load: the models directory it finds (and those it passed over), each
/// group of the manifest installed, missing or optional, and whether the embedder loads.
pub(crate) fn doctor() -> Result<i32> {
    let models = match Models::locate() {
        Ok(m) => m,
        Err(e) => {
            println!("models     none found");
            return Err(e.into());
        }
    };
    println!("models     {}", models.dir().display());
    for why in &models.refused {
        println!("           {why}");
    }
    let mut broken = Vec::new();
    for group in groups(&models.manifest) {
        let bad: Vec<String> = group.files.iter().filter_map(|f| models.file(f).err().map(|e| e.to_string())).collect();
        let state = match (bad.len(), group.required) {
            (0, _) => "installed".to_string(),
            (n, false) if n == group.files.len() => format!("not installed (optional: {})", group.install),
            (n, _) => format!("{n} of {} files missing or damaged ({})", group.files.len(), group.install),
        };
        println!("{:<10} {}: {state}", group.kind, group.name);
        for why in &bad {
            if group.required || bad.len() < group.files.len() {
                println!("           {why}");
            }
        }
        if group.required {
            broken.extend(bad);
        }
    }
    let start = std::time::Instant::now();
    match crate::embed::OnnxEmbedder::load(&models, &crate::Settings::default()) {
        Ok(_) => println!("loads      the default embedder loads ({} ms)", start.elapsed().as_millis()),
        Err(e) => broken.push(e.to_string()),
    }
    match broken.first() {
        None => Ok(0),
        Some(first) => {
            let reason = format!("{first} ({} problems in all; run `engine models install`)", broken.len());
            Err(Error::ModelMissing { path: models.dir().to_path_buf(), reason }.into())
        }
    }
}

/// A part of the manifest installed together.
struct Group<'a> {
    kind: &'static str,
    name: String,
    files: Vec<&'a str>,
    required: bool,
    install: String,
}

fn embedder_files(e: &crate::models::EmbedderEntry) -> Vec<&str> {
    let packaged = e.packages.iter().flat_map(|p| p.files.iter().map(|f| f.file.as_str()));
    packaged.chain(e.derived.iter().map(|d| d.file.as_str())).collect()
}

fn groups(m: &Manifest) -> Vec<Group<'_>> {
    let install = |flags: &str| format!("engine models install{flags}");
    let mut out = vec![
        Group {
            kind: "runtime",
            name: format!("onnxruntime {}", m.runtime.version),
            files: m.runtime.files.iter().map(|f| f.file.as_str()).collect(),
            required: true,
            install: install(""),
        },
        Group {
            kind: "embedder",
            name: format!("{} (default)", m.embedder.id),
            files: embedder_files(&m.embedder),
            required: true,
            install: install(""),
        },
    ];
    for (name, e) in &m.embedders {
        out.push(Group {
            kind: "embedder",
            name: format!("{} ({name})", e.id),
            files: embedder_files(e),
            required: false,
            install: install(&format!(" --embedder {name}")),
        });
    }
    if let Some(r) = &m.reranker {
        let packaged = r.packages.iter().flat_map(|p| p.files.iter());
        out.push(Group {
            kind: "reranker",
            name: r.id.clone(),
            files: r.files.iter().chain(packaged).map(|f| f.file.as_str()).collect(),
            required: false,
            install: install(" --reranker"),
        });
    }
    out
}
