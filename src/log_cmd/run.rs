//! [`Run`]: the run `flow log` reads, and [`Selection`]: the instances
//! its selectors pick.

use std::io;
use std::path::Path;

use flow_engine::ir::{Finally, Graph, Resources, TaskId};
use flow_engine::ir::{Selected, Selector};
use flow_engine::log::{JournalEntry, JournalRecord, JournalState, OutputReader, OutputRecord, OutputStream};
use flow_engine::rundir::{JournalHealth, RunDir, RunDirError, RunView, locate};

use crate::failure::Failure;
use crate::json::TaskRef;
use crate::stdout::say;

/// The run being read: its files but the journal and the output log,
/// which are read as each command needs them.
pub(super) struct Run {
    pub(super) view: RunView,
}

impl Run {
    /// The run `run` (an id or a prefix; the latest when `None`) of
    /// `workflow` (the `.flow` directory here or in a parent when `None`).
    pub(super) fn open(workflow: Option<&Path>, run: Option<&str>) -> Result<Run, Failure> {
        let cwd =
            std::env::current_dir().map_err(|e| Failure::Io(format!("cannot read the current directory: {e}")))?;
        let dir = locate(workflow, run, &cwd)?;
        Ok(Run::at(&dir)?)
    }

    /// The run in `dir`.
    pub(super) fn at(dir: &RunDir) -> Result<Run, RunDirError> {
        Ok(Run { view: RunView::read(dir)? })
    }

    /// The run's directory.
    pub(super) fn dir(&self) -> &RunDir {
        &self.view.dir
    }

    /// The run's graph.
    pub(super) fn graph(&self) -> &Graph {
        &self.view.graph
    }

    /// How `--json` names instance `task`.
    pub(super) fn task_ref(&self, task: TaskId) -> TaskRef {
        TaskRef::new(self.graph(), task)
    }

    /// What the variant `task`'s attempt `entry` ran with asks for: the one
    /// it names, else the task's only one.
    pub(super) fn requested(&self, task: TaskId, entry: Option<&JournalEntry>) -> Option<&Resources> {
        let variants = &self.graph().groups.get(task.group.index())?.variants;
        let named = entry.and_then(|e| e.metrics.as_ref().map(|m| m.variant).or(e.wrote.as_ref().map(|w| w.variant)));
        match named {
            Some(variant) => variants.get(variant as usize),
            None if variants.len() == 1 => variants.first(),
            None => None,
        }
    }

    /// `name[index]`, or `name` for a plain task.
    pub(super) fn label(&self, task: TaskId) -> String {
        self.task_ref(task).label
    }

    pub(super) fn select(&self, selectors: &[String]) -> Result<Selection, Failure> {
        let picks = selectors
            .iter()
            .map(|text| {
                let selector = Selector::parse(text).map_err(|e| Failure::Usage(e.to_string()))?;
                match selector.resolve(self.graph()) {
                    // The `[finally]` command's output, unless a task has its name.
                    Err(_) if text == Finally::LABEL && self.graph().finally.is_some() => {
                        Ok(Selected { group: Finally::TASK.group, positions: None })
                    }
                    resolved => resolved.map_err(|e| Failure::Usage(format!("`{text}` in this run: {e}"))),
                }
            })
            .collect::<Result<_, Failure>>()?;
        Ok(Selection { picks })
    }

    /// The journal folded per task (empty if there is none yet).
    pub(super) fn journal(&self) -> io::Result<JournalState> {
        let mut state = JournalState::default();
        self.each_journal_record(|r| state.apply(&r))?;
        Ok(state)
    }

    /// Passes each record of the journal to `each`, in order, holding none
    /// (none if there is no journal yet); warns of damage.
    pub(super) fn each_journal_record(&self, each: impl FnMut(JournalRecord)) -> io::Result<()> {
        warn("journal", &self.view.each_journal_record(each)?);
        Ok(())
    }

    /// The output log, if the run has written one.
    pub(super) fn output(&self) -> io::Result<Option<OutputReader>> {
        Ok(self.view.output()?)
    }

    /// Every record of the output log that `keep` accepts, in file order; warns about a torn tail.
    pub(super) fn each_record(&self, mut keep: impl FnMut(OutputRecord, u64) -> io::Result<()>) -> io::Result<()> {
        let Some(mut reader) = self.output()? else { return Ok(()) };
        while let Some(record) = reader.next() {
            let record = record?;
            // Allocation output is not a task's (`flow alloc log` shows it).
            if record.stream != OutputStream::Allocation {
                keep(record, reader.last_start())?;
            }
        }
        warn("output.log", &self.view.health(reader.damage(), reader.torn_tail()));
        Ok(())
    }
}

/// Says what of `file` could not be read: the incomplete record at its end
/// (which a live run is still writing, and is not said), and the damaged
/// stretches skipped, around which the records were read.
pub(super) fn warn(file: &str, health: &JournalHealth) {
    if let Some(torn) = health.torn {
        say!(
            "warning: {file} ends with {} bytes of an incomplete record (the run was interrupted); ignored",
            torn.bytes
        );
    }
    for d in &health.damage {
        say!("warning: {file} is damaged: {d}; the records before and after them were read");
    }
}

/// The task instances the selectors name (all of them when there are none).
pub(super) struct Selection {
    picks: Vec<Selected>,
}

impl Selection {
    pub(super) fn contains(&self, task: TaskId) -> bool {
        self.picks.is_empty() || self.picks.iter().any(|s| s.contains(task.group, task.instance))
    }
}
