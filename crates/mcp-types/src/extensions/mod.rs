//! Official extensions (negotiated under `capabilities.extensions`): their wire types, kept apart
//! from the core protocol's — tasks, skills, MCP Apps (`ui`). Each module names its extension
//! identifier.

pub mod skills;
pub mod tasks;
pub mod ui;
