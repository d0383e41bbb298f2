//! [`WorkerId`]: how the core names a worker.

/// A worker's id, unique for the life of a [`super::Core`] (never reused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WorkerId(pub u32);
