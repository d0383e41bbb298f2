//! The gate before dispatch: whether an instance about to start runs — its
//! `when`, and what the edges that wait for a failure say — and what an
//! instance that runs because something it waits for failed is told.

use super::Driver;
use crate::ir::TaskId;
use crate::runtime::coordinator::dispatch::upstream_failures::{Failed, Gate};
use crate::runtime::protocol::job::Job;

impl Driver {
    /// Whether `task` runs now; an error when its `when` cannot be rendered.
    pub(super) fn gate(&self, task: TaskId) -> Result<Gate, String> {
        if let Some(reason) = self.factory.skip_reason(task)? {
            return Ok(Gate::Skipped(reason.to_string()));
        }
        Ok(self.failures.verdict(self.graph(), &self.core, task))
    }

    /// Tells `job` which of the instances it waits for did not succeed:
    /// `FLOW_FAILED_TASKS` names them, the file `FLOW_FAILED_JSON` names
    /// says how each ended, and its definition (so its fingerprint) holds
    /// them, so a result made in reaction to a failure is not taken for
    /// one made after a success.
    pub(super) fn react(&self, job: &mut Job, failed: &[Failed]) -> Result<(), String> {
        let file = self.run_dir.path.join("failed").join(format!("{}.{}.json", job.label, job.attempt));
        let json = serde_json::to_vec_pretty(failed).map_err(|e| e.to_string())?;
        self.run_dir
            .write_file(&file, &json)
            .map_err(|e| format!("cannot write the list of failed instances {}: {e}", file.display()))?;
        let names: Vec<&str> = failed.iter().map(|f| f.task.as_str()).collect();
        job.env.push(("FLOW_FAILED_TASKS".to_owned(), names.join(" ")));
        job.env.push(("FLOW_FAILED_JSON".to_owned(), file.display().to_string()));
        let mut definition: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&job.definition).map_err(|e| e.to_string())?;
        let ended: Vec<_> = failed
            .iter()
            .map(|f| serde_json::json!({ "task": f.task, "state": f.state, "exit_code": f.exit_code, "signal": f.signal }))
            .collect();
        definition.insert("after_failures".to_owned(), ended.into());
        job.definition = serde_json::Value::Object(definition).to_string();
        Ok(())
    }
}
