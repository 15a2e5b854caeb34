//! The integration tests, one binary: each module drives the real `engine` binary (or the library)
//! with the real model. One binary links tantivy and ONNX Runtime once, and shares the sample index
//! `common::sample_index` builds across every module.

mod common;

mod capture;
mod cli;
mod daemon;
mod embedder;
mod eval;
mod hardening;
mod hook;
mod index;
mod install;
mod mcp;
mod memory_cli;
mod milvus;
mod offline;
mod plugin;
mod rerank;
mod search;
mod secrets;
mod transcript;
mod trust;
