//! Scenario tests of the scheduler core, on hand-built graphs with a
//! recording [`super::Out`].

mod adopt;
mod deferred;
mod dependencies;
pub(crate) mod env;
mod failures;
mod ordering;
mod parts;
mod placement;
mod prefetch;
mod resources;
mod retry;
mod scale;
mod skips;
mod slots;
mod status_edges;
mod waiting;
