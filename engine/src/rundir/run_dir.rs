//! [`RunDir`]: the directory of one run, `.flow/runs/<id>/`, finding runs,
//! and reading and writing the run's JSON files as their types.
//!
//! ```text
//! .flow/                  next to the workflow file
//!   runs/<id>/            one per `flow run`; ids sort by start time
//!     meta.json           workflow path, start time, --dry-exec, command line (Meta)
//!     graph.json          the compiled IR, rewritten as deferred groups expand (Graph)
//!     parts.jsonl         the parts of nested groups, appended as they become known
//!     journal             task state changes (framed records, append-only)
//!     output.log          every task's stdout/stderr (framed records)
//!     access.json         address and secret remote workers join with (0600)
//!     workers.json        the workers connected now (Vec<WorkerInfo>)
//!     workers-left.json   the workers that left before the end (Vec<WorkerInfo>)
//!     allocs.json         the allocation queue and its allocations (AllocsFile)
//!     nodes/<task>.<n>    the node list of a multi-node attempt
//!     allocs/<n>.sh, .out an allocation's batch script and output
//!     lock                flock-ed while the run is live
//!     summary.json        written when the run ends; its presence = finished (Summary)
//!     summary.reserve     disk space kept for summary.json, removed when it is written
//!     report.html         `flow report`'s page, unless it was told another file
//!   chunks/<task>/<i>.txt each_chunk inputs
//! ```
//!
//! The JSON files are written through a file beside them and a rename, so a
//! reader of a live run never sees half a file; a file that does not parse
//! is an [`std::io::ErrorKind::InvalidData`] error holding a
//! [`RunDirError::Damaged`] that names it.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use std::os::unix::fs::PermissionsExt;

use fs_err::os::unix::fs::OpenOptionsExt;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::host::{UtcStyle, utc};
use crate::ir::Graph;
use crate::net::{ACCESS_FILE_MODE, AccessFile, NetError};
use crate::rundir::{ALLOCS_FILE, AllocsFile, Meta, RunDirError, Summary, WorkerInfo};

/// The mode of the state and run directories, and of the directories in
/// a run directory: the owner's only, or readable by the owner's group too.
const PRIVATE_DIR_MODE: u32 = 0o700;
const SHARED_DIR_MODE: u32 = 0o750;
/// The mode of the files in a private or shared run directory.
const PRIVATE_FILE_MODE: u32 = 0o600;
const SHARED_FILE_MODE: u32 = 0o640;

/// Disk space [`RunDir::reserve_summary`] keeps for `summary.json`.
const SUMMARY_RESERVE: usize = 64 << 10;

/// The state directory name, next to the workflow file.
pub const STATE_DIR: &str = ".flow";

/// One run's directory.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RunDir {
    /// The run's id (its directory name).
    pub id: String,
    /// The directory.
    pub path: PathBuf,
}

impl RunDir {
    /// Creates a new, empty run directory under `state` (a `.flow` directory).
    ///
    /// Task output is private: `state`, `state/runs` and the run directory
    /// are made 0700, or 0750 when `share_with_group` (the group may read,
    /// not write), whatever the umask; the files flow writes in the run
    /// directory follow it (see [`RunDir::write_file`]).
    pub fn create(state: &Path, share_with_group: bool) -> std::io::Result<RunDir> {
        let mode = if share_with_group { SHARED_DIR_MODE } else { PRIVATE_DIR_MODE };
        let runs = state.join("runs");
        create_dir(&runs, mode, true)?;
        // An existing `.flow` (from an older flow, or made by hand) is
        // closed too: it also holds chunk files cut from the inputs.
        for dir in [state, &runs] {
            set_mode(dir, mode)?;
        }
        let now = crate::host::now_us();
        let start = utc(now, UtcStyle::Compact);
        for attempt in 0..1000 {
            let id = format!("{start}-{:03}", (now / 1000 + attempt) % 1000);
            let path = runs.join(&id);
            match create_dir(&path, mode, false) {
                Ok(()) => return Ok(RunDir { id, path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(std::io::Error::other("could not pick a fresh run id"))
    }

    /// Every run under `state`, oldest first.
    pub fn list(state: &Path) -> Vec<RunDir> {
        let Ok(entries) = fs_err::read_dir(state.join("runs")) else { return Vec::new() };
        let mut runs: Vec<RunDir> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| Some(RunDir { id: e.file_name().into_string().ok()?, path: e.path() }))
            .collect();
        runs.sort_by(|a, b| a.id.cmp(&b.id));
        runs
    }

    /// The newest run under `state`.
    pub fn latest(state: &Path) -> Option<RunDir> {
        Self::list(state).pop()
    }

    /// The run with `id` (or the unique run whose id starts with it).
    pub fn find(state: &Path, id: &str) -> Option<RunDir> {
        let runs = Self::list(state);
        if let Some(exact) = runs.iter().find(|r| r.id == id) {
            return Some(exact.clone());
        }
        let mut matching = runs.into_iter().filter(|r| r.id.starts_with(id));
        match (matching.next(), matching.next()) {
            (Some(one), None) => Some(one),
            _ => None,
        }
    }

    /// `meta.json`.
    pub fn meta(&self) -> PathBuf {
        self.path.join("meta.json")
    }

    /// `graph.json`: the compiled IR.
    pub fn graph(&self) -> PathBuf {
        self.path.join("graph.json")
    }

    /// `journal`: task state changes.
    pub fn journal(&self) -> PathBuf {
        self.path.join("journal")
    }

    /// `output.log`: all task output.
    pub fn output_log(&self) -> PathBuf {
        self.path.join("output.log")
    }

    /// `access.json`: address and secret remote workers join with (mode 0600).
    pub fn access(&self) -> PathBuf {
        self.path.join("access.json")
    }

    /// `workers.json`: the workers of the run, for `flow workers`.
    pub fn workers(&self) -> PathBuf {
        self.path.join("workers.json")
    }

    /// `workers-left.json`: the workers that left before the run ended, so
    /// `flow explain` can still name the host a task ran on.
    pub fn workers_left(&self) -> PathBuf {
        self.path.join("workers-left.json")
    }

    /// `allocs.json`: the run's allocation queue and its allocations.
    pub fn allocs(&self) -> PathBuf {
        self.path.join(ALLOCS_FILE)
    }

    /// `summary.json`: written when the run ends.
    pub fn summary(&self) -> PathBuf {
        self.path.join("summary.json")
    }

    /// The run whose access file (`access.json`) is `file`.
    pub fn of_access_file(file: &Path) -> Option<RunDir> {
        let path = file.parent()?.to_path_buf();
        let id = path.file_name()?.to_string_lossy().into_owned();
        Some(RunDir { id, path })
    }

    /// Whether the run has ended (its summary exists).
    pub fn is_finished(&self) -> bool {
        self.summary().exists()
    }

    /// `report.html`: where `flow report` writes the run's page by default.
    pub fn report(&self) -> PathBuf {
        self.path.join("report.html")
    }

    /// `lock`: held by the process running the run.
    fn lock_path(&self) -> PathBuf {
        self.path.join("lock")
    }

    /// Takes the run's lock, held until the returned value is dropped (or
    /// the process dies, however it dies).
    pub fn lock(&self) -> std::io::Result<RunLock> {
        let file = self.create_file(&self.lock_path())?.into_parts().0;
        nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock)
            .map(|flock| RunLock { _flock: flock })
            .map_err(|(_, errno)| std::io::Error::from(errno))
    }

    /// Whether a live process holds the run's lock (the run is in progress).
    pub fn is_live(&self) -> bool {
        !self.is_finished() && self.lock_path().exists() && self.lock().is_err()
    }

    /// The mode of the files in this run directory: 0600, or 0640 when the
    /// directory is shared with the group; also of what is written about
    /// the run elsewhere, such as its report page.
    pub fn file_mode(&self) -> io::Result<u32> {
        let shared = fs_err::metadata(&self.path)?.permissions().mode() & 0o050 != 0;
        Ok(if shared { SHARED_FILE_MODE } else { PRIVATE_FILE_MODE })
    }

    /// Creates (or truncates) the file `path` in this run directory with
    /// its files' mode, whatever the umask.
    fn create_file(&self, path: &Path) -> io::Result<fs_err::File> {
        let mode = self.file_mode()?;
        let file = fs_err::OpenOptions::new().write(true).create(true).truncate(true).mode(mode).open(path)?;
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        Ok(file)
    }

    /// Writes the file `path` in this run directory (`nodes/…`,
    /// `allocs/…`), creating its directory: both get the run directory's
    /// modes, whatever the umask.
    pub fn write_file(&self, path: &Path, contents: &[u8]) -> io::Result<()> {
        if let Some(dir) = path.parent().filter(|dir| !dir.exists()) {
            create_dir(dir, fs_err::metadata(&self.path)?.permissions().mode() & 0o777, true)?;
        }
        self.create_file(path)?.write_all(contents)
    }

    /// Gives the file `path`, which flow created in this run directory
    /// (the journal, `output.log`), the run directory's file mode.
    pub fn protect(&self, path: &Path) -> io::Result<()> {
        set_mode(path, self.file_mode()?)
    }

    /// Reads `meta.json`.
    pub fn read_meta(&self) -> io::Result<Meta> {
        read_json(&self.meta())
    }

    /// Writes `meta.json`.
    pub fn write_meta(&self, meta: &Meta) -> io::Result<()> {
        write_json_mode(&self.meta(), meta, Style::Pretty, self.file_mode()?)
    }

    /// `parts.jsonl`: the parts of nested groups, a line each, in the
    /// order they became known.
    pub fn parts(&self) -> PathBuf {
        self.path.join("parts.jsonl")
    }

    /// Reads `graph.json`, with the parts of nested groups known so far.
    pub fn read_graph(&self) -> io::Result<Graph> {
        let mut graph: Graph = read_json(&self.graph())?;
        for g in 0..graph.groups.len() {
            if graph.is_nested(crate::ir::GroupId(g as u32)) {
                graph.groups[g].count = 0;
            }
        }
        let text = match fs_err::read_to_string(self.parts()) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(graph),
            Err(e) => return Err(e),
        };
        // A line cut short by a crash belongs to a part none of whose
        // instances started: it is left out.
        for part in text.lines().filter_map(|line| serde_json::from_str::<PartLine>(line).ok()) {
            graph.add_part(part.group, part.outer, part.items.iter().map(String::as_str));
        }
        Ok(graph)
    }

    /// Appends a part of nested group `group`: the items the file of its
    /// parent's instance `outer` gave.
    pub fn append_part(&self, group: crate::ir::GroupId, outer: u64, items: &crate::ir::StrPool) -> io::Result<()> {
        let line = PartLine { group, outer, items: items.iter().map(str::to_owned).collect() };
        let mut text = serde_json::to_string(&line).map_err(io::Error::other)?;
        text.push('\n');
        let mut file = fs_err::OpenOptions::new().append(true).open(self.parts()).or_else(|e| match e.kind() {
            io::ErrorKind::NotFound => self.create_file(&self.parts()),
            _ => Err(e),
        })?;
        file.write_all(text.as_bytes())
    }

    /// Writes `graph.json` (compact: it can hold a million lines of items).
    pub fn write_graph(&self, graph: &Graph) -> io::Result<()> {
        write_json_mode(&self.graph(), graph, Style::Compact, self.file_mode()?)
    }

    /// Reads `summary.json`; [`io::ErrorKind::NotFound`] while the run has not ended.
    pub fn read_summary(&self) -> io::Result<Summary> {
        read_json(&self.summary())
    }

    /// `summary.reserve`: disk space kept for `summary.json`.
    fn summary_reserve(&self) -> PathBuf {
        self.path.join("summary.reserve")
    }

    /// Sets disk space aside for `summary.json`, so that a run that fills
    /// the disk can still record how it ended (and is not taken for crashed).
    pub fn reserve_summary(&self) -> io::Result<()> {
        self.write_file(&self.summary_reserve(), &[0; SUMMARY_RESERVE])
    }

    /// Writes `summary.json`, which marks the run finished, in the space
    /// [`RunDir::reserve_summary`] set aside.
    pub fn write_summary(&self, summary: &Summary) -> io::Result<()> {
        match fs_err::remove_file(self.summary_reserve()) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        write_json_mode(&self.summary(), summary, Style::Pretty, self.file_mode()?)
    }

    /// Reads `workers.json`; [`io::ErrorKind::NotFound`] before any worker joined.
    pub fn read_workers(&self) -> io::Result<Vec<WorkerInfo>> {
        read_json(&self.workers())
    }

    /// Writes `workers.json`.
    pub fn write_workers(&self, workers: &[WorkerInfo]) -> io::Result<()> {
        write_json_mode(&self.workers(), workers, Style::Pretty, self.file_mode()?)
    }

    /// Reads `workers-left.json`; [`io::ErrorKind::NotFound`] before any worker left.
    pub fn read_workers_left(&self) -> io::Result<Vec<WorkerInfo>> {
        read_json(&self.workers_left())
    }

    /// Writes `workers-left.json`.
    pub fn write_workers_left(&self, workers: &[WorkerInfo]) -> io::Result<()> {
        write_json_mode(&self.workers_left(), workers, Style::Pretty, self.file_mode()?)
    }

    /// Reads `access.json`; an error says whether it is missing, unreadable or damaged.
    pub fn read_access(&self) -> Result<AccessFile, NetError> {
        AccessFile::read(&self.access())
    }

    /// Writes `access.json`, readable by its owner only.
    pub fn write_access(&self, access: &AccessFile) -> io::Result<()> {
        write_json_mode(&self.access(), access, Style::Pretty, ACCESS_FILE_MODE)
    }

    /// Reads `allocs.json`; [`io::ErrorKind::NotFound`] for a run without a queue.
    pub fn read_allocs(&self) -> io::Result<AllocsFile> {
        read_json(&self.allocs())
    }

    /// Writes `allocs.json`.
    pub fn write_allocs(&self, allocs: &AllocsFile) -> io::Result<()> {
        write_json_mode(&self.allocs(), allocs, Style::Pretty, self.file_mode()?)
    }
}

/// Creates the directory `path` and its missing parents, each with
/// permissions `mode` at most (a umask may take more away) and `path`
/// itself with exactly `mode`: a directory flow makes for a run is never
/// opened to others by a permissive umask (issue 29).
pub fn create_dirs(path: &Path, mode: u32) -> io::Result<()> {
    create_dir(path, mode, true)
}

/// Creates the directory `path` (and its parents if `recursive`) with
/// permissions `mode`, whatever the umask.
fn create_dir(path: &Path, mode: u32, recursive: bool) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(recursive)
        .mode(mode)
        .create(path)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot create directory `{}`: {e}", path.display())))?;
    set_mode(path, mode)
}

/// Sets the permissions of `path` to `mode`.
fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    fs_err::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// A line of `parts.jsonl`.
#[derive(Serialize, serde::Deserialize)]
struct PartLine {
    group: crate::ir::GroupId,
    outer: u64,
    items: Vec<String>,
}

/// The lock of a run in progress; released on drop.
#[derive(Debug)]
pub struct RunLock {
    _flock: nix::fcntl::Flock<std::fs::File>,
}

/// `None` for a file the run has not written (yet): a reader's
/// [`io::ErrorKind::NotFound`].
pub fn if_written<T>(read: io::Result<T>) -> io::Result<Option<T>> {
    match read {
        Ok(value) => Ok(Some(value)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// How a JSON file is laid out.
#[derive(Clone, Copy)]
enum Style {
    /// Indented, with a final newline: small files people may read.
    Pretty,
    /// One line, no newline.
    Compact,
}

/// Reads the JSON file `path`; an error names it.
fn read_json<T: DeserializeOwned>(path: &Path) -> io::Result<T> {
    let text = fs_err::read_to_string(path)?;
    serde_json::from_str(&text).map_err(|e| RunDirError::Damaged { path: path.to_owned(), what: e.to_string() }.into())
}

/// Writes `value` to `path` with permissions `mode` through a file beside
/// it and a rename, so a reader of a live run's files never sees half a file.
fn write_json_mode<T: Serialize + ?Sized>(path: &Path, value: &T, style: Style, mode: u32) -> io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    // A leftover from a crashed writer may have other permissions: start anew.
    match fs_err::remove_file(&tmp) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let file = fs_err::OpenOptions::new().write(true).create_new(true).mode(mode).open(&tmp)?;
    let mut file = io::BufWriter::new(file);
    match style {
        Style::Pretty => serde_json::to_writer_pretty(&mut file, value).map_err(io::Error::other)?,
        Style::Compact => serde_json::to_writer(&mut file, value).map_err(io::Error::other)?,
    }
    if let Style::Pretty = style {
        file.write_all(b"\n")?;
    }
    let file = file.into_inner().map_err(io::IntoInnerError::into_error)?;
    // Whatever the umask took away.
    file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    fs_err::rename(&tmp, path)
}

/// The run that `flow log`/`flow status` name: in the `.flow` directory next
/// to `workflow`, or found from `cwd` upwards; `id` (or a unique prefix of
/// it), or the latest.
pub fn locate(workflow: Option<&Path>, id: Option<&str>, cwd: &Path) -> Result<RunDir, RunDirError> {
    let state = state_dir(workflow, cwd)?;
    match id {
        Some(id) => RunDir::find(&state, id).ok_or_else(|| RunDirError::NoSuchRun { id: id.to_owned(), state }),
        None => RunDir::latest(&state).ok_or(RunDirError::NoRuns { state }),
    }
}

/// The `.flow` directory next to `workflow`, or found from `cwd` upwards.
pub fn state_dir(workflow: Option<&Path>, cwd: &Path) -> Result<PathBuf, RunDirError> {
    match workflow {
        Some(file) => Ok(file.parent().unwrap_or(Path::new(".")).join(STATE_DIR)),
        None => find_state_dir(cwd).ok_or(RunDirError::NoStateDir),
    }
}

/// Finds the `.flow` directory for commands that inspect runs: `dir/.flow`
/// for `dir` and each of its ancestors, nearest first.
pub fn find_state_dir(start: &Path) -> Option<PathBuf> {
    start.ancestors().map(|d| d.join(STATE_DIR)).find(|d| d.join("runs").is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_sort_and_resolve() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join(STATE_DIR);
        let a = RunDir::create(&state, false).unwrap();
        let b = RunDir::create(&state, false).unwrap();
        assert_ne!(a.id, b.id);
        assert_eq!(RunDir::list(&state).len(), 2);
        assert_eq!(RunDir::latest(&state).unwrap(), std::cmp::max(a.clone(), b.clone()).clone());
        assert_eq!(RunDir::find(&state, &a.id), Some(a));
        assert_eq!(find_state_dir(&dir.path().join("x/y")), Some(state));
    }

    #[test]
    fn access_file_round_trips_privately() {
        use crate::net::Secret;
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::create(&dir.path().join(STATE_DIR), false).unwrap();
        let access =
            AccessFile { address: "node17:40123".into(), secret: Secret::generate().unwrap(), run_id: run.id.clone() };
        run.write_access(&access).unwrap();
        run.write_access(&access).unwrap();
        let mode = fs_err::metadata(run.access()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, ACCESS_FILE_MODE);
        // The same address, run and secret (which only serializing shows).
        let json = |a: &AccessFile| serde_json::to_value(a).unwrap();
        assert_eq!(json(&run.read_access().unwrap()), json(&access));
        let files: Vec<_> = fs_err::read_dir(&run.path).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(files, ["access.json"], "no temporary file is left behind");
    }

    /// Issue 18: the summary of a run that filled the disk is written in the
    /// space set aside when the run started.
    #[test]
    fn the_summary_is_written_in_the_space_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::create(&dir.path().join(STATE_DIR), false).unwrap();
        run.reserve_summary().unwrap();
        assert_eq!(fs_err::metadata(run.summary_reserve()).unwrap().len(), SUMMARY_RESERVE as u64);
        let summary =
            Summary { run_id: run.id.clone(), total: 3, io_errors: vec!["disk full".into()], ..Summary::default() };
        run.write_summary(&summary).unwrap();
        assert_eq!(run.read_summary().unwrap(), summary);
        assert!(!run.summary_reserve().exists(), "the reserve is given back");
        run.write_summary(&summary).unwrap();
    }
}
