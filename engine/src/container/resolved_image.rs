//! [`ResolvedImage`]: an image checked at run start.

use serde::{Deserialize, Serialize};

use super::container_engine::ContainerEngine;
use super::image::Image;

/// A task image as a run found it: the engine chosen for it, the image,
/// and what identified its content then ([`super::identify`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolvedImage {
    /// The engine that runs it.
    pub engine: ContainerEngine,
    /// The image.
    pub image: Image,
    /// Its content's identity, part of the fingerprint of the tasks that run in it.
    pub identity: String,
}
