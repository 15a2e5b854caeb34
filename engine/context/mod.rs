//! What a prompt's reader gets: whether anything answers it ([`abstain`]), a confidence label per
//! hit when abstention is off ([`labels`]), and the tiered, budgeted context block ([`block`]) of
//! excerpts that keep their lines ([`excerpt`]), made safe to embed ([`markup`]).

pub(crate) mod abstain;
mod block;
mod excerpt;
mod labels;
mod markup;

pub(crate) use block::summary;
pub use block::{context, ContextBlock, Layer, Rule, Shown};
pub use labels::label;
pub(crate) use markup::{clean, clean_text, sanitize_block, visible};
