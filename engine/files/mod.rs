//! Files the engine writes for others to read: replaced atomically, JSON kept in the user's layout.

pub(crate) mod atomic;
pub(crate) mod json;
