//! [`Outgoing`]: what goes down a remote worker's connection, and the
//! [`Release`] of it that waits for the journal (see `books/journal_thread.rs`).

use tokio::sync::mpsc;

use crate::runtime::protocol::messages::ToWorker;

/// What goes down a remote worker's connection: a message, or messages
/// the driver has encoded already (its jobs, in the order they were sent),
/// so that a job is encoded and dropped on the thread that made it.
#[derive(Debug, PartialEq)]
pub(super) enum Outgoing {
    /// One message, encoded by the connection's writer.
    Message(ToWorker),
    /// Messages encoded with [`crate::net::encode`], each with its header.
    Encoded(Vec<u8>),
}

/// The sending end of a remote worker's connection.
pub(super) type WorkerLink = mpsc::UnboundedSender<Outgoing>;

/// A message to a remote worker, sent once the records before it are written.
pub(super) type Release = (WorkerLink, Outgoing);
