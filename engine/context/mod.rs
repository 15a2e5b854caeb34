//! What a prompt's reader gets: whether anything answers it (abstention), a confidence label per
//! hit, and the tiered, budgeted, escaped context block.

pub(crate) mod abstain;
pub mod tier;
