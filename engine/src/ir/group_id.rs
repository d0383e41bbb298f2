//! [`GroupId`]: which group of the graph, by its position.

use serde::{Deserialize, Serialize};

/// Index of a group in [`super::Graph::groups`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct GroupId(pub u32);

impl GroupId {
    /// The id as a vector index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}
