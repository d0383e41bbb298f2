//! What earlier runs left: which instances they finished ([`resume`]), the
//! cache compared before dispatch ([`cache_checks`], with the one rule in
//! [`cache_lookup`]), the outputs no instance of this run will write again
//! ([`stale`]), what attempts a killed run never finished wrote
//! ([`unfinished`]), and the old runs no new run would read ([`prune`]).

pub(in crate::runtime::coordinator) mod cache_checks;
pub(in crate::runtime::coordinator) mod cache_lookup;
pub(in crate::runtime::coordinator) mod prune;
pub(in crate::runtime::coordinator) mod resume;
pub(in crate::runtime::coordinator) mod stale;
pub(in crate::runtime::coordinator) mod unfinished;
