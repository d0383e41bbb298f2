//! The per-instance `when`: rendered just before an instance would start,
//! with `read` returning the text of a file the run may have written.

use super::{JobFactory, Rendering};
use crate::ir::{DropReason, TaskId};
use crate::template::is_true;

impl JobFactory {
    /// Why instance `task` is skipped: its task's per-instance `when`
    /// rendered false (the one place that decides it, for the run and the
    /// previews). `None`: it runs.
    pub fn skip_reason(&self, task: TaskId) -> Result<Option<DropReason>, String> {
        let Some((rendered, reads)) = self.render_when(task) else { return Ok(None) };
        let rendered = match rendered {
            Err(_) if self.run_unread && reads.iter().any(|p| !self.base_dir.join(p).exists()) => return Ok(None),
            rendered => rendered?,
        };
        let text = self.graph.group(task.group).template.when.clone().unwrap_or_default();
        Ok((!is_true(&rendered)).then_some(DropReason::Condition { when: text, rendered }))
    }

    /// Lets an instance whose `when` reads a file that is not there run
    /// rather than fail: under `--dry-exec` the tasks that write it do not
    /// really run.
    pub fn run_unread_conditions(&mut self) {
        self.run_unread = true;
    }

    /// The files the per-instance `when` of `task` reads (with `read`), as
    /// written, from the workflow's directory.
    pub fn when_reads(&self, task: TaskId) -> Vec<String> {
        self.render_when(task).map(|(_, reads)| reads).unwrap_or_default()
    }

    /// The per-instance `when` of `task` rendered, and the files it read;
    /// `None` if it has none.
    fn render_when(&self, task: TaskId) -> Option<(Result<String, String>, Vec<String>)> {
        let when = self.groups[task.group.index()].when.as_ref()?;
        let label = self.label(task);
        let scope = self.scope(task, 0, 0);
        self.reads.take();
        let r = Rendering { renderer: &self.when_renderer, scope: &scope, label: &label, base_dir: &self.base_dir };
        let rendered = r.text(when, "when");
        Some((rendered, self.reads.take()))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::JobFactory;
    use crate::compile::compile_toml as graph;
    use crate::ir::TaskId;

    const GATE: &str = "[[tasks]]\nname = \"gate\"\nrange = \"1-2\"\ncommand = \"true\"\n\
                        when = \"{{ read('qc/' ~ index ~ '.txt') == 'yes' }}\"\n";

    #[test]
    fn a_when_that_reads_a_file_is_decided_per_instance_from_its_text() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("qc")).unwrap();
        std::fs::write(dir.path().join("qc/1.txt"), "yes\n").unwrap();
        std::fs::write(dir.path().join("qc/2.txt"), "no\n").unwrap();
        let mut factory = JobFactory::new(Arc::new(graph(GATE)), dir.path(), Path::new("/r")).unwrap();
        let gate = factory.graph().find("gate").unwrap();
        assert_eq!(factory.skip_reason(TaskId::new(gate, 0)), Ok(None));
        let reason = factory.skip_reason(TaskId::new(gate, 1)).unwrap().unwrap();
        assert_eq!(
            reason.to_string(),
            "when `{{ read('qc/' ~ index ~ '.txt') == 'yes' }}` was false (rendered `False`)"
        );
        assert_eq!(factory.when_reads(TaskId::new(gate, 1)), ["qc/2.txt"]);

        std::fs::remove_file(dir.path().join("qc/1.txt")).unwrap();
        let err = factory.skip_reason(TaskId::new(gate, 0)).unwrap_err();
        assert!(
            err.contains("cannot render `when` of gate[1]") && err.contains("cannot read `qc/1.txt`: no such file"),
            "{err}"
        );
        factory.run_unread_conditions();
        assert_eq!(factory.skip_reason(TaskId::new(gate, 0)), Ok(None));
    }
}
