//! Groups known only at run time: once the tasks that
//! write a deferred group's expansion file are done (in this run, or
//! skipped as unchanged), the file is read, the group gets its instances,
//! and `graph.json` is rewritten so `flow log` and `flow explain` know them.
//! Whenever instances become known — at the start, or here — the outputs
//! of earlier instances no instance declares any more are moved aside
//! ([`crate::runtime::coordinator::earlier::stale`]) before anything can read them.

use super::{Collect, Driver};
use crate::expansion;
use crate::ir::{Domain, GroupId, TaskId};
use crate::runtime::event::Event;
use crate::runtime::protocol::outcome::Status;

impl Driver {
    /// Gives every deferred group whose writers are done its instances,
    /// and every nested group the parts whose parent instances are done.
    pub(super) fn expand_ready(&mut self, out: &mut Collect) {
        self.expand_groups(out);
        for (id, outer) in self.core.take_parts() {
            self.expand_part(id, outer, out);
        }
    }

    /// Reads the file of part `outer` of nested group `id`.
    fn expand_part(&mut self, id: GroupId, outer: u64, out: &mut Collect) {
        let Domain::Nested { expansion, .. } = &self.graph().group(id).domain else { return };
        let mut expansion = expansion.clone();
        let read = self.factory.part_file(id, outer).and_then(|file| {
            expansion.set_file(file);
            let text = match self.read_expansion(&expansion)? {
                Some(text) => text,
                // Under --dry-exec: one warning per nested task, not per file.
                None => {
                    if self.dry_warned.insert(id) {
                        self.dry_missing(&expansion, " (and the other files of this task that are missing)");
                    }
                    String::new()
                }
            };
            let items = expansion::items(&expansion, &text)
                .map_err(|p| format!("`{}` cannot be expanded: {p}", expansion.file()))?;
            // Instances whose names a resumed run could not read back never start.
            self.run_dir.append_part(id, outer, &items).map_err(|e| format!("cannot record its instances: {e}"))?;
            Ok(items)
        });
        let task = TaskId::part(id, outer);
        let label = self.factory.label(task);
        let items = match read {
            Ok(items) => items,
            Err(reason) => {
                self.core.fail_part(id, outer, out);
                self.failed_whole(task, reason);
                return;
            }
        };
        let (members, added) = self.factory.add_part(id, outer, &items);
        if let Domain::Nested { parent, .. } = self.graph().group(id).domain {
            let index = self.graph().index(parent, outer);
            self.settle_stale(&members, Some(index));
        }
        let count = added.end - added.start;
        self.core.add_part(&members, outer, added);
        self.summary.total += count * members.len() as u64;
        self.recorder.event(Event::PartExpanded { group: id, label, file: expansion.file().to_owned(), count });
    }

    /// Gives every deferred group whose writers are done its instances.
    fn expand_groups(&mut self, out: &mut Collect) {
        for id in self.core.take_resolvable() {
            let Domain::Deferred { expansion } = &self.graph().group(id).domain else {
                // A `for_each` mirror: it is expanded with its base group.
                continue;
            };
            let expansion = expansion.clone();
            let read = self.read_expansion(&expansion).map(|text| {
                text.unwrap_or_else(|| {
                    self.dry_missing(&expansion, "");
                    String::new()
                })
            });
            let read = read.and_then(|text| {
                expansion::resolve(&expansion, &text)
                    .map_err(|p| format!("`{}` cannot be expanded: {p}", expansion.file()))
            });
            match read {
                Ok((domain, count)) => {
                    let members = self.factory.resolve(id, domain, count);
                    self.settle_stale(&members, None);
                    self.core.resolve(self.factory.graph(), &members);
                    self.summary.total += count * members.len() as u64;
                    let _ = self.run_dir.write_graph(self.factory.graph());
                    for g in members {
                        let name = self.graph().group(g).name.clone();
                        let file = expansion.file().to_owned();
                        self.recorder.event(Event::Expanded { group: g, name, file, count });
                    }
                }
                Err(reason) => self.expansion_failed(id, reason, out),
            }
        }
    }

    /// The text of `expansion`'s file now; `None` for a missing file under
    /// `--dry-exec`, where the writers did not run.
    fn read_expansion(&self, expansion: &crate::ir::Expansion) -> Result<Option<String>, String> {
        let path = self.options.base_dir.join(expansion.file());
        let file = expansion.file();
        let text = match fs_err::metadata(&path) {
            Ok(m) if !m.is_file() => return Err(format!("`{file}` is not a regular file")),
            Ok(_) => fs_err::read_to_string(&path).map_err(|e| format!("cannot read `{file}`: {e}"))?,
            Err(_) if self.options.dry_exec => return Ok(None),
            Err(_) => return Err(format!("`{file}` does not exist, though the tasks that write it are done")),
        };
        Ok(Some(text))
    }

    /// Warns that `expansion`'s file is missing under `--dry-exec`: no instances.
    fn dry_missing(&mut self, expansion: &crate::ir::Expansion, more: &str) {
        let file = expansion.file();
        let message = format!("`{file}` does not exist (its writers did not run under --dry-exec): no instances{more}");
        self.recorder.event(Event::Warning { message });
    }

    /// The group fails as one; what waits for it is cancelled.
    fn expansion_failed(&mut self, id: GroupId, reason: String, out: &mut Collect) {
        self.core.fail_deferred(id, out);
        self.failed_whole(TaskId::whole(id), reason);
    }

    /// Says that `task`, a group or part whose instances could not be
    /// known, failed for `reason`.
    fn failed_whole(&mut self, task: TaskId, reason: String) {
        self.recorder.event(self.ended_at_once(task, Status::failed(None, None, reason)));
    }
}
