//! [`vfork_spawn`]: starting a process as glibc's `posix_spawnp` does, a
//! child sharing flow's memory until it calls `exec`, with three costs of
//! `posix_spawnp` left out. Flow's thread does not wait for the child's
//! `exec`: it goes on with its work while the child sets itself up (the
//! kernel tells it when the child's `exec` or exit has let go of what it
//! was given: `CLONE_CHILD_CLEARTID`), so that a core is not left idle
//! meanwhile; a program that cannot run is known when its process is
//! reaped ([`ExecError`]). Its child runs on a stack that the thread
//! keeps for later spawns, where `posix_spawnp` maps a new one for every
//! process and unmaps it after (the unmapping interrupts the other cores
//! that run flow's threads, to flush their TLBs); and its streams and
//! directory are set by the child itself, with no list of file actions
//! built and checked (a `getrlimit` per descriptor) for every process.
//! Flow's environment is copied once, and each process only adds its
//! job's variables: the standard library copies flow's whole environment
//! into a map, and then into a new array, for every process whose
//! environment it changes.
//!
//! Used on Linux with glibc on x86-64 and AArch64 (the layout of the
//! kernel's `sigaction` and its system call convention are known there),
//! when the job does not set `PATH` (the standard library looks the
//! program up in the child's `PATH`, `posix_spawnp` and this in flow's).

use std::cell::RefCell;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::AtomicU32;

mod child;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod entry;

use child::Child;
pub use child::ExecError;

/// Starts `argv` with flow's environment and `env` added to it (a later
/// variable of the same name wins), in `cwd`, in a new process group,
/// with `streams` as its stdin, stdout and stderr, SIGPIPE at its default
/// and no signal blocked, as the standard library does. `None` when this
/// system or this job needs the standard library.
pub fn vfork_spawn(
    argv: &[String],
    env: &[(String, String)],
    cwd: &Path,
    streams: [BorrowedFd<'_>; 3],
) -> Option<io::Result<Started>> {
    if !SUPPORTED || argv.is_empty() || env.iter().any(|(name, _)| name == "PATH") {
        return None;
    }
    Some(prepare(argv, env, cwd).and_then(|(argv, envp, cwd)| {
        let programs = Programs::find(argv.0[0].as_bytes())?;
        let streams = streams.map(|stream| stream.as_raw_fd());
        let (argv_pointers, envp_pointers, program_pointers) =
            (argv.pointers(), envp.pointers(), programs.0.pointers());
        spawn(Box::new(Child {
            running: AtomicU32::new(1),
            // Moved, each string stays where the pointers point.
            _strings: [argv.0, envp.0, programs.0.0].into_iter().flatten().collect(),
            argv: argv_pointers,
            envp: envp_pointers,
            programs: program_pointers,
            cwd,
            streams,
            error: ExecError::default(),
        }))
    }))
}

/// Whether [`spawn`] can run here.
const SUPPORTED: bool =
    cfg!(all(target_os = "linux", target_env = "gnu", any(target_arch = "x86_64", target_arch = "aarch64")));

/// A process [`vfork_spawn`] started.
pub struct Started {
    /// Its pid, which is also its process group's.
    pub pid: u32,
    /// Why it could not run its program, once it has ended.
    pub error: ExecError,
}

/// The C strings of a program's arguments or environment.
struct CStrings(Vec<CString>);

impl CStrings {
    /// Pointers to each, then a null pointer, as `exec` takes them.
    fn pointers(&self) -> Vec<*const libc::c_char> {
        self.0.iter().map(|s| s.as_ptr()).chain([std::ptr::null()]).collect()
    }
}

/// `argv`, the environment (flow's without the variables `env` sets, then
/// `env`) and `cwd` as C strings; a NUL byte in any is an error, as with
/// the standard library.
fn prepare(argv: &[String], env: &[(String, String)], cwd: &Path) -> io::Result<(CStrings, CStrings, CString)> {
    let argv = argv.iter().map(|arg| c(arg.clone().into_bytes())).collect::<io::Result<_>>()?;
    let own = |i: usize, name: &str| env[i + 1..].iter().all(|(later, _)| later != name);
    let mut envp: Vec<CString> = base()
        .iter()
        .filter(|(name, _)| env.iter().all(|(set, _)| set.as_bytes() != &name[..]))
        .map(|(_, entry)| entry.clone())
        .collect();
    for (_, (name, value)) in env.iter().enumerate().filter(|(i, (name, _))| own(*i, name)) {
        envp.push(c(format!("{name}={value}").into_bytes())?);
    }
    Ok((CStrings(argv), CStrings(envp), c(cwd.as_os_str().as_bytes().to_vec())?))
}

/// `bytes` as a C string; a NUL byte in it is an error.
fn c(bytes: Vec<u8>) -> io::Result<CString> {
    CString::new(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
}

/// Flow's environment as `NAME=value` strings with their names, read once.
fn base() -> &'static [(Vec<u8>, CString)] {
    static BASE: OnceLock<Vec<(Vec<u8>, CString)>> = OnceLock::new();
    BASE.get_or_init(|| {
        std::env::vars_os()
            .filter_map(|(name, value)| {
                let entry = [name.as_bytes(), b"=", value.as_bytes()].concat();
                Some((name.as_bytes().to_vec(), CString::new(entry).ok()?))
            })
            .collect()
    })
}

/// The paths the child tries to `exec`, in order, as glibc's `execvp`
/// (without its shell for scripts that have no `#!`, as `posix_spawnp`)
/// looks a program up: the program itself if its name has a `/`, else
/// the name in each directory of flow's `PATH` (`/bin:/usr/bin` without
/// one; an empty entry is the working directory).
struct Programs(CStrings);

impl Programs {
    fn find(program: &[u8]) -> io::Result<Self> {
        if program.is_empty() {
            return Err(io::Error::from_raw_os_error(libc::ENOENT));
        }
        if program.contains(&b'/') {
            return Ok(Self(CStrings(vec![c(program.to_vec())?])));
        }
        Self::find_in(program, std::env::var_os("PATH").as_ref().map(|path| path.as_bytes()))
    }

    /// The paths for `program` (no `/` in it) in `path`.
    fn find_in(program: &[u8], path: Option<&[u8]>) -> io::Result<Self> {
        let path = path.unwrap_or(b"/bin:/usr/bin");
        let candidate = |dir: &[u8]| match dir {
            b"" => c(program.to_vec()),
            dir => c([dir, b"/", program].concat()),
        };
        Ok(Self(CStrings(path.split(|&b| b == b':').map(candidate).collect::<io::Result<_>>()?)))
    }
}

/// Bytes of each stack for children, above a guard page.
const STACK_SIZE: usize = 64 << 10;
/// Children still setting up, at most, before a spawn waits for the oldest.
const MAX_SETTING_UP: usize = 64;
/// Stacks kept for later spawns, at most.
const MAX_SPARE_STACKS: usize = 4;

/// A stack of [`STACK_SIZE`] bytes above a page that faults, for one child
/// at a time: it runs on it until its `exec`, and the stack is then kept
/// for a later child of the same thread.
struct Stack {
    base: *mut libc::c_void,
    len: usize,
}

impl Stack {
    #[allow(unsafe_code)]
    fn map() -> io::Result<Self> {
        let guard = page_size();
        let len = STACK_SIZE + guard;
        let (protection, flags) = (libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS);
        // SAFETY: a new private anonymous mapping, owned by the `Stack`.
        let base = unsafe { libc::mmap(std::ptr::null_mut(), len, protection, flags | libc::MAP_STACK, -1, 0) };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let stack = Self { base, len };
        // SAFETY: the first page of the mapping made above.
        if unsafe { libc::mprotect(base, guard, libc::PROT_NONE) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(stack)
    }

    /// The top of the stack, where a child's stack starts (it grows down).
    fn top(&self) -> *mut libc::c_void {
        self.base.wrapping_byte_add(self.len)
    }
}

impl Drop for Stack {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: the mapping `map` made, used by no child any more.
        unsafe { libc::munmap(self.base, self.len) };
    }
}

fn page_size() -> usize {
    // SAFETY: `sysconf` only reads.
    #[allow(unsafe_code)]
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).unwrap_or(4096)
}

/// A thread's children that are still setting up, each with the stack it
/// runs on, and stacks kept for the next ones.
#[derive(Default)]
struct Launches {
    setting_up: Vec<(Box<Child>, Stack)>,
    spare: Vec<Stack>,
}

impl Launches {
    /// A stack for the next child: one let go of, or a new one.
    fn stack(&mut self) -> io::Result<Stack> {
        self.sweep();
        while self.setting_up.len() >= MAX_SETTING_UP {
            self.setting_up[0].0.wait_let_go();
            self.sweep();
        }
        self.spare.pop().map_or_else(Stack::map, Ok)
    }

    /// Forgets each child that has let go, keeping its stack for later (the
    /// others stay in the order they started).
    fn sweep(&mut self) {
        let mut i = 0;
        while i < self.setting_up.len() {
            if self.setting_up[i].0.let_go() {
                let (_, stack) = self.setting_up.remove(i);
                self.keep(stack);
            } else {
                i += 1;
            }
        }
    }

    fn keep(&mut self, stack: Stack) {
        if self.spare.len() < MAX_SPARE_STACKS {
            self.spare.push(stack);
        }
    }
}

impl Drop for Launches {
    /// The thread ends: its children's stacks are unmapped only once they let go.
    fn drop(&mut self) {
        for (child, _) in &self.setting_up {
            child.wait_let_go();
        }
    }
}

thread_local! {
    static LAUNCHES: RefCell<Launches> = RefCell::default();
}

/// Starts `child` with `clone(CLONE_VM | CLONE_CHILD_CLEARTID)` on a stack
/// of this thread's, every signal blocked around it (as glibc does), and
/// puts it in its own process group at once (the child does too: whichever
/// comes first, a signal to the group right after this reaches it). The
/// thread keeps `child` until the child lets go of it.
#[allow(unsafe_code)]
fn spawn(child: Box<Child>) -> io::Result<Started> {
    LAUNCHES.with_borrow_mut(|launches| {
        let stack = launches.stack()?;
        let pid = match clone(&child, &stack) {
            Ok(pid) => pid,
            Err(e) => {
                launches.keep(stack);
                return Err(e);
            }
        };
        // SAFETY: `setpgid` on our child; it fails harmlessly once the
        // child has called `exec` (by then it made its group itself).
        unsafe { libc::setpgid(pid, pid) };
        let error = child.error.clone();
        launches.setting_up.push((child, stack));
        Ok(Started { pid: pid as u32, error })
    })
}

/// `clone` of `child` onto `stack`: the child's pid.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[allow(unsafe_code)]
fn clone(child: &Child, stack: &Stack) -> io::Result<libc::pid_t> {
    let (all, mut old) = (u64::MAX, 0u64);
    // SAFETY: `rt_sigprocmask` with sets of the kernel's size (8 bytes on
    // these targets); all signals, glibc's own too, as `posix_spawn` blocks them.
    unsafe { libc::syscall(libc::SYS_rt_sigprocmask, libc::SIG_SETMASK, &raw const all, &raw mut old, 8) };
    let flags = libc::CLONE_VM | libc::CLONE_CHILD_CLEARTID | libc::SIGCHLD;
    let arg = std::ptr::from_ref(child).cast_mut().cast::<libc::c_void>();
    let (parent_tid, tls) = (std::ptr::null_mut::<libc::pid_t>(), std::ptr::null_mut::<libc::c_void>());
    // SAFETY: `entry::run` is the child's entry point and calls only the
    // kernel; the stack is mapped, writable and used by no other child;
    // `child` and the stack are kept unchanged until `running` is cleared
    // (the kernel clears that word, which stays alive as long).
    let pid = unsafe { libc::clone(entry::run, stack.top(), flags, arg, parent_tid, tls, child.running.as_ptr()) };
    let error = io::Error::last_os_error();
    // SAFETY: as above, restoring the mask the thread had.
    unsafe {
        libc::syscall(libc::SYS_rt_sigprocmask, libc::SIG_SETMASK, &raw const old, std::ptr::null_mut::<u64>(), 8)
    };
    if pid < 0 { Err(error) } else { Ok(pid) }
}

/// Not used here ([`SUPPORTED`] is false): this system needs the standard library.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn clone(_: &Child, _: &Stack) -> io::Result<libc::pid_t> {
    Err(io::ErrorKind::Unsupported.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `entry` (`NAME=value`) is among the variables of `env`.
    fn has(env: &CStrings, entry: &str) -> bool {
        env.0.iter().any(|e| e.as_bytes() == entry.as_bytes())
    }

    #[test]
    fn the_jobs_variables_replace_flows_and_the_last_of_a_name_wins() {
        let (name, value) = std::env::vars().next().expect("a variable in the test's environment");
        let env = [(name.clone(), "first".to_owned()), ("FLOW_TASK".into(), "a".into()), (name.clone(), "last".into())];
        let (argv, envp, cwd) = prepare(&["true".into()], &env, Path::new("/tmp")).unwrap();
        assert_eq!(argv.0, [c"true".to_owned()]);
        assert_eq!(cwd, c"/tmp".to_owned());
        assert!(has(&envp, &format!("{name}=last")));
        assert!(!has(&envp, &format!("{name}=first")));
        assert!(!has(&envp, &format!("{name}={value}")) || value == "last");
        assert!(has(&envp, "FLOW_TASK=a"));
        assert_eq!(envp.0.len(), base().len() + 1);
        assert_eq!(envp.pointers().last(), Some(&std::ptr::null()));
    }

    #[test]
    fn a_nul_byte_is_an_error_and_path_is_left_to_the_standard_library() {
        use std::os::fd::AsFd;
        let error = prepare(&["a\0b".into()], &[], Path::new("/")).err().unwrap();
        assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
        let null = fs_err::File::open("/dev/null").unwrap();
        let fd = null.file().as_fd();
        let path = [("PATH".to_owned(), "/bin".to_owned())];
        assert!(vfork_spawn(&["true".into()], &path, Path::new("/"), [fd, fd, fd]).is_none());
    }

    /// Issue 28.
    #[test]
    fn a_program_is_looked_up_in_each_directory_of_path_as_execvp_does() {
        let paths = |program: &[u8], path: Option<&[u8]>| Programs::find_in(program, path).unwrap().0.0;
        assert_eq!(paths(b"true", Some(b"/a::/b")), [c"/a/true", c"true", c"/b/true"]);
        assert_eq!(paths(b"true", None), [c"/bin/true", c"/usr/bin/true"]);
        assert_eq!(Programs::find(b"./x/true").unwrap().0.0, [c"./x/true"]);
        assert_eq!(Programs::find(b"").err().map(|e| e.kind()), Some(io::ErrorKind::NotFound));
    }

    /// Starts `argv` in `cwd` with stdin from /dev/null and stdout and
    /// stderr into a pipe: what it wrote and its wait status, or why it
    /// could not start.
    #[cfg(target_os = "linux")]
    fn run(argv: &[&str], env: &[(&str, &str)], cwd: &Path) -> io::Result<(String, i32)> {
        use std::io::Read;
        use std::os::fd::AsFd;
        let null = fs_err::File::open("/dev/null").unwrap();
        let (reader, writer) = nix::unistd::pipe().unwrap();
        let argv: Vec<String> = argv.iter().map(|s| (*s).to_owned()).collect();
        let env: Vec<(String, String)> = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        let streams = [null.file().as_fd(), writer.as_fd(), writer.as_fd()];
        let started = vfork_spawn(&argv, &env, cwd, streams).expect("supported here")?;
        drop(writer);
        let mut out = String::new();
        std::fs::File::from(reader).read_to_string(&mut out).unwrap();
        let status = reap(started.pid);
        started.error.get().map_or(Ok((out, status)), Err)
    }

    /// Waits for our child `pid`: its wait status.
    fn reap(pid: u32) -> i32 {
        let mut status = 0;
        // SAFETY: our child, reaped once.
        #[allow(unsafe_code)]
        let reaped = unsafe { libc::waitpid(pid as i32, &mut status, 0) };
        assert_eq!(reaped, pid as i32);
        status
    }

    /// Issue 28: the child is set up as `posix_spawnp` set it up before.
    #[cfg(all(target_os = "linux", target_env = "gnu", any(target_arch = "x86_64", target_arch = "aarch64")))]
    #[test]
    fn the_child_has_its_group_streams_directory_environment_and_signals() {
        let dir = tempfile::tempdir().unwrap();
        let script = "echo $$ $(cut -d' ' -f5 /proc/$$/stat) $PWD $FLOW_X; echo err >&2; exit 3";
        let (out, status) = run(&["sh", "-c", script], &[("FLOW_X", "x")], dir.path()).unwrap();
        let first: Vec<&str> = out.lines().next().unwrap().split_whitespace().collect();
        assert_eq!(first[0], first[1], "its own process group: {out}");
        assert_eq!(Path::new(first[2]).canonicalize().unwrap(), dir.path().canonicalize().unwrap());
        assert_eq!(first[3], "x");
        assert_eq!(out.lines().nth(1), Some("err"));
        assert_eq!(libc::WEXITSTATUS(status), 3);
        // No signal blocked; only glibc's two own signals ignored (SIGPIPE,
        // which the test harness ignores, is back at its default). Read by
        // the child itself: a shell blocks signals while it waits for one
        // of its own.
        let (out, _) = run(&["grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status"], &[], dir.path()).unwrap();
        assert_eq!(out.lines().collect::<Vec<_>>(), ["SigBlk:\t0000000000000000", "SigIgn:\t0000000180000000"]);
    }

    /// Issue 28: a program that cannot run is known once its child, which
    /// exits with status 127 as with `posix_spawnp`, is reaped.
    #[cfg(all(target_os = "linux", target_env = "gnu", any(target_arch = "x86_64", target_arch = "aarch64")))]
    #[test]
    fn a_missing_program_directory_or_permission_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = run(&["flow-no-such-program"], &[], dir.path()).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        let nowhere = run(&["true"], &[], &dir.path().join("gone")).unwrap_err();
        assert_eq!(nowhere.kind(), io::ErrorKind::NotFound);
        let file = dir.path().join("not-executable");
        fs_err::write(&file, "").unwrap();
        let denied = run(&[file.to_str().unwrap()], &[], dir.path()).unwrap_err();
        assert_eq!(denied.kind(), io::ErrorKind::PermissionDenied);
        // No child of this thread left: each was reaped.
        assert_eq!(fs_err::read_to_string("/proc/thread-self/children").unwrap(), "");
    }

    /// Issue 28: the thread does not wait for its child's `exec`, but the
    /// child is in its own process group as soon as the spawn returns, so
    /// that stopping its task at once reaches it.
    #[cfg(all(target_os = "linux", target_env = "gnu", any(target_arch = "x86_64", target_arch = "aarch64")))]
    #[test]
    fn the_group_is_there_when_the_spawn_returns() {
        use std::os::fd::AsFd;
        let null = fs_err::File::open("/dev/null").unwrap();
        let fd = null.file().as_fd();
        for _ in 0..50 {
            let started = vfork_spawn(&["sleep".into(), "10".into()], &[], Path::new("/"), [fd, fd, fd])
                .expect("supported here")
                .unwrap();
            // SAFETY: a signal to the group of our child.
            #[allow(unsafe_code)]
            let sent = unsafe { libc::kill(-(started.pid as i32), libc::SIGKILL) };
            assert_eq!(sent, 0, "{}", io::Error::last_os_error());
            let status = reap(started.pid);
            assert!(libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGKILL, "{status}");
        }
    }

    /// Issue 28: children set up while their thread goes on, each on a
    /// stack of its own, and the thread's stacks outlive it until its last
    /// child has called `exec`.
    #[cfg(all(target_os = "linux", target_env = "gnu", any(target_arch = "x86_64", target_arch = "aarch64")))]
    #[test]
    fn many_children_at_once_and_a_thread_that_ends_at_once() {
        use std::io::Read;
        use std::os::fd::AsFd;
        let null = fs_err::File::open("/dev/null").unwrap();
        let (reader, writer) = nix::unistd::pipe().unwrap();
        let streams = [null.file().as_fd(), writer.as_fd(), writer.as_fd()];
        let n = MAX_SETTING_UP * 2;
        let pids: Vec<u32> = (0..n)
            .map(|i| {
                let argv = ["sh".into(), "-c".into(), format!("echo {i}")];
                vfork_spawn(&argv, &[], Path::new("/"), streams).expect("supported here").unwrap().pid
            })
            .collect();
        let (fd, path) = (writer.try_clone().unwrap(), std::env::temp_dir());
        let last = std::thread::spawn(move || {
            let streams = [fd.as_fd(), fd.as_fd(), fd.as_fd()];
            vfork_spawn(&["echo".into(), "last".into()], &[], &path, streams).expect("supported here").unwrap()
        })
        .join()
        .unwrap();
        drop(writer);
        let mut out = String::new();
        std::fs::File::from(reader).read_to_string(&mut out).unwrap();
        for pid in pids.into_iter().chain([last.pid]) {
            assert_eq!(libc::WEXITSTATUS(reap(pid)), 0);
        }
        let mut lines: Vec<&str> = out.lines().collect();
        lines.sort_unstable();
        let mut expected: Vec<String> = (0..n).map(|i| i.to_string()).chain(["last".to_owned()]).collect();
        expected.sort_unstable();
        assert_eq!(lines, expected);
        assert!(last.error.get().is_none());
    }
}
