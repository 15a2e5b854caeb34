//! The flags of `engine memory` and its subcommands.

use crate::memory;
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub(crate) struct MemoryArgs {
    /// Project root (default: the directory of the nearest .engine/ above the current directory,
    /// else the current directory). Records live in ROOT/.claude/memory.
    #[arg(long, global = true)]
    pub root: Option<PathBuf>,
    /// Index to update after a change (default: the project's own .engine/, when it has one).
    #[arg(long, global = true)]
    pub index: Option<PathBuf>,
    /// Leave the index alone after a change (it updates on the next `engine index` or session
    /// start).
    #[arg(long, global = true)]
    pub no_reindex: bool,
    /// Print JSON.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub action: MemoryAction,
}

#[derive(Debug, Subcommand)]
pub(crate) enum MemoryAction {
    /// Add a record; its content comes from --content, or from stdin when that is absent or "-".
    Add {
        /// One line saying what the record is about.
        #[arg(long)]
        title: String,
        /// The record's text ("-" or absent: read stdin).
        #[arg(long)]
        content: Option<String>,
        /// decision, convention, bugfix, note, … (lowercase letters, digits and '-').
        #[arg(long, default_value = memory::category::NOTE)]
        category: String,
        /// A tag (repeatable).
        #[arg(long = "tag", value_name = "TAG")]
        tags: Vec<String>,
        /// A project file the record is about (repeatable).
        #[arg(long = "file", value_name = "PATH")]
        files: Vec<String>,
        /// Id (or unique prefix) of an older record this one replaces (repeatable).
        #[arg(long, value_name = "ID")]
        supersedes: Vec<String>,
    },
    /// List records, newest first; superseded ones only with --all.
    List {
        /// Only this category.
        #[arg(long)]
        category: Option<String>,
        /// Only records with this tag.
        #[arg(long)]
        tag: Option<String>,
        /// Only records of sessions whose id starts with this.
        #[arg(long, value_name = "ID_PREFIX")]
        session: Option<String>,
        /// Only records created at or after this date (YYYY-MM-DD) or RFC 3339 time.
        #[arg(long, value_name = "DATE")]
        since: Option<String>,
        /// Also superseded records.
        #[arg(long)]
        all: bool,
    },
    /// Show one record in full.
    Show {
        /// Its id, or a prefix only it has.
        id: String,
    },
    /// Delete records.
    Delete {
        /// Ids, or prefixes only one record has.
        #[arg(required = true)]
        ids: Vec<String>,
    },
    /// Change a record: the fields given as flags, or, with none, the whole record in $VISUAL or
    /// $EDITOR (default vi). Its id and creation time stay.
    Edit {
        /// Its id, or a prefix only it has.
        id: String,
        /// New title (a record's file is renamed to follow it).
        #[arg(long)]
        title: Option<String>,
        /// New content ("-": read stdin).
        #[arg(long)]
        content: Option<String>,
        /// New category (lowercase letters, digits and '-').
        #[arg(long)]
        category: Option<String>,
        /// Replace the tags with these (repeatable).
        #[arg(long = "tag", value_name = "TAG")]
        tags: Vec<String>,
        /// Replace the files with these (repeatable).
        #[arg(long = "file", value_name = "PATH")]
        files: Vec<String>,
    },
    /// Counts by category and source, sessions, dates, size, superseded and duplicate records.
    Stats,
    /// List what a cleanup would delete and why (exact and near duplicates, superseded records,
    /// session and bugfix records past their age); --apply deletes them.
    Gc {
        /// Delete what the list names (without it, nothing is deleted).
        #[arg(long)]
        apply: bool,
    },
    /// Write every record as JSON lines (stdout by default).
    Export {
        /// Write here instead of stdout (whole or not at all).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Read records from JSON lines ("-": stdin). Every line is checked first: one bad line and
    /// nothing is imported.
    Import {
        /// The JSON lines file ("-": stdin).
        file: PathBuf,
    },
    /// Capture records from a Claude Code transcript, as the hook does at PreCompact and SessionEnd.
    Capture {
        /// The transcript (.jsonl).
        transcript: PathBuf,
        /// Why the session ended, for its session record.
        #[arg(long)]
        reason: Option<String>,
    },
}
