//! Official extensions (negotiated under `capabilities.extensions`, 2026-07-28): their wire
//! types, kept apart from the core protocol's. Each module names its extension identifier.

pub mod skills;
pub mod tasks;
