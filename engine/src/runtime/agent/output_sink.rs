//! [`OutputSink`]: where a worker's task output goes — the run log when the
//! worker is embedded, the coordinator connection when it is remote.

use tokio::sync::mpsc;

use crate::log::{OutputLogSender, OutputRecord};

/// Destination of task output records.
#[derive(Debug, Clone)]
pub enum OutputSink {
    /// The run's output log (embedded worker).
    Log(OutputLogSender),
    /// A channel to the coordinator connection (remote worker).
    Channel(mpsc::Sender<OutputRecord>),
}

impl OutputSink {
    /// Sends one record, waiting while the destination is full; `false` once it is closed.
    pub async fn send(&self, record: OutputRecord) -> bool {
        match self {
            OutputSink::Log(log) => log.send(record).await.is_ok(),
            OutputSink::Channel(tx) => tx.send(record).await.is_ok(),
        }
    }
}
