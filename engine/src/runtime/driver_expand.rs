//! The driver's side of groups known only at run time: once the tasks that
//! write a deferred group's expansion file are done (in this run, or
//! skipped as unchanged), the file is read, the group gets its instances,
//! and `graph.json` is rewritten so `flow log` and `flow explain` know them.

use super::driver::{Collect, Driver};
use super::event::Event;
use super::worker::Status;
use crate::expansion;
use crate::ir::{Domain, GroupId, TaskId};

impl Driver {
    /// Gives every deferred group whose writers are done its instances.
    pub(super) fn expand_ready(&mut self, out: &mut Collect) {
        for id in self.core.take_resolvable() {
            let Domain::Deferred { expansion } = &self.graph().group(id).domain else {
                // A `for_each` mirror: it is expanded with its base group.
                continue;
            };
            let expansion = expansion.clone();
            match self.read_expansion(&expansion) {
                Ok((domain, count)) => {
                    let members = self.factory.resolve(id, domain, count);
                    self.core.resolve(self.factory.graph(), &members);
                    self.summary.total += count * members.len() as u64;
                    let _ = self.run_dir.write_graph(self.factory.graph());
                    for g in members {
                        let name = self.graph().group(g).name.clone();
                        let file = expansion.file().to_owned();
                        self.event_batch.push(Event::Expanded { group: g, name, file, count });
                    }
                }
                Err(reason) => self.expansion_failed(id, reason, out),
            }
        }
    }

    /// The domain `expansion`'s file gives now. Under `--dry-exec` the
    /// writers did not run: a missing file gives no instances.
    fn read_expansion(&mut self, expansion: &crate::ir::Expansion) -> Result<(Domain, u64), String> {
        let path = self.options.base_dir.join(expansion.file());
        let file = expansion.file();
        let text = match fs_err::metadata(&path) {
            Ok(m) if !m.is_file() => return Err(format!("`{file}` is not a regular file")),
            Ok(_) => fs_err::read_to_string(&path).map_err(|e| format!("cannot read `{file}`: {e}"))?,
            Err(_) if self.options.dry_exec => {
                let message =
                    format!("`{file}` does not exist (its writers did not run under --dry-exec): no instances");
                self.event_batch.push(Event::Warning { message });
                String::new()
            }
            Err(_) => return Err(format!("`{file}` does not exist, though the tasks that write it are done")),
        };
        expansion::resolve(expansion, &text).map_err(|p| format!("`{file}` cannot be expanded: {p}"))
    }

    /// The group fails as one; what waits for it is cancelled.
    fn expansion_failed(&mut self, id: GroupId, reason: String, out: &mut Collect) {
        let task = TaskId::whole(id);
        let location = self.source_location(self.graph().group(id).span.start);
        self.core.fail_deferred(id, out);
        self.event_batch.push(Event::TaskFinished {
            task,
            label: self.factory.label(task),
            attempt: 0,
            status: Status::failed(None, None, reason),
            retrying: false,
            duration: std::time::Duration::ZERO,
            stderr_tail: String::new(),
            location,
        });
    }
}
