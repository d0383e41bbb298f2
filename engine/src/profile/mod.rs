//! Profiles: named cluster settings in `flow.profiles.toml` (next to the
//! workflow, or in the user's config directory), so a workflow file moves
//! between laptop and cluster unchanged.
//!
//! This module owns reading the profiles file, with the same reader and the
//! same kind of diagnostics as [`crate::spec`], into a [`Profile`]: the
//! runtime is given that typed value and never sees the file. It never
//! knows about graphs or running.

#[allow(clippy::module_inception)]
mod profile;
mod read;
mod settings;

pub use profile::{PROFILES_FILE, Profile, Queue};
pub use read::{files, is_unknown, load};
pub use settings::{Manager, QueueSettings, QueueWorker};
