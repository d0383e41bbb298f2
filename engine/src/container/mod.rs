//! Containers: which engine runs a task's image ([`ContainerEngine`]), the
//! image as the workflow names it ([`Image`]) and what identifies its
//! content ([`identify`]), and the engine's command line for one task
//! ([`Launch::command_line`]).
//!
//! This module is shared by the compiler (engine names in the workflow),
//! the profiles (an engine per cluster) and the runtime (checking the
//! images at run start, starting a task inside one). It never knows about
//! graphs, jobs or scheduling. See the guide page "Setup lines and
//! containers".

mod container_engine;
mod identity;
mod image;
mod launch;
mod resolved_image;

pub use container_engine::{ContainerEngine, on_path};
pub use identity::{ImageError, identify};
pub use image::Image;
pub use launch::{CommandLine, Launch};
pub use resolved_image::ResolvedImage;
