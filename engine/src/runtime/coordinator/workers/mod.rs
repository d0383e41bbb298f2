//! The workers a run dispatches to: the embedded and remote ones behind one
//! interface ([`links`]), the listener that accepts remote ones
//! ([`remote`], from a [`lobby`] of connections not yet checked, with
//! [`refusals`] for the connections it turns away), the
//! tasks sent ahead to them ([`send_ahead`]), where an attempt ran
//! ([`placements`]), and `workers.json` ([`workers_file`]).

pub(in crate::runtime::coordinator) mod links;
pub(in crate::runtime::coordinator) mod lobby;
pub(in crate::runtime::coordinator) mod placements;
pub(in crate::runtime::coordinator) mod refusals;
pub(in crate::runtime::coordinator) mod remote;
pub(in crate::runtime::coordinator) mod send_ahead;
pub(in crate::runtime::coordinator) mod workers_file;
