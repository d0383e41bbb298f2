//! [`OutputSink`]: where a worker's task output goes — the run log when the
//! worker is embedded, the coordinator connection when it is remote.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::output_budget::OutputBudget;
use crate::log::{OutputLogSender, OutputRecord};

/// Destination of task output records.
#[derive(Debug, Clone)]
pub enum OutputSink {
    /// The run's output log (embedded worker).
    Log(OutputLogSender),
    /// A channel to the coordinator connection (remote worker), and what
    /// the worker may hold of output before its tasks wait.
    Channel(mpsc::Sender<OutputRecord>, Arc<OutputBudget>),
}

impl OutputSink {
    /// Sends one record, waiting while the destination is full; `false` once it is closed.
    pub async fn send(&self, record: OutputRecord) -> bool {
        match self {
            OutputSink::Log(log) => log.send(record).await.is_ok(),
            OutputSink::Channel(tx, budget) => {
                budget.take(record.data.len()).await;
                tx.send(record).await.is_ok()
            }
        }
    }
}
