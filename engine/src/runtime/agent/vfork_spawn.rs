//! [`vfork_spawn`]: starting a process as glibc's `posix_spawnp` does (a
//! child sharing flow's memory until it calls `exec`, flow's thread waiting
//! meanwhile), with two costs of `posix_spawnp` left out. Its child runs on
//! a stack each thread keeps for all its spawns, where `posix_spawnp` maps
//! a new one for every process and unmaps it after (the unmapping
//! interrupts the other cores that run flow's threads, to flush their
//! TLBs); and its streams and directory are set by the child itself, with
//! no list of file actions built and checked (a `getrlimit` per
//! descriptor) for every process. Flow's environment is copied once, and
//! each process only adds its job's variables: the standard library copies
//! flow's whole environment into a map, and then into a new array, for
//! every process whose environment it changes.
//!
//! Used on Linux with glibc on x86-64 and AArch64 (the layout of the
//! kernel's `sigaction` is known there), when the job does not set `PATH`
//! (the standard library looks the program up in the child's `PATH`,
//! `posix_spawnp` and this in flow's).

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::OnceLock;

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
) -> Option<io::Result<u32>> {
    if !SUPPORTED || argv.is_empty() || env.iter().any(|(name, _)| name == "PATH") {
        return None;
    }
    Some(prepare(argv, env, cwd).and_then(|(argv, envp, cwd)| {
        let programs = Programs::find(argv.0[0].as_bytes())?;
        let (argv, envp, programs) = (argv.pointers(), envp.pointers(), programs.0.pointers());
        let streams = streams.map(|stream| stream.as_raw_fd());
        let mut child = Child { argv: &argv, envp: &envp, programs: &programs, cwd: &cwd, streams, error: 0 };
        spawn(&mut child)
    }))
}

/// Whether [`spawn`] can run here.
const SUPPORTED: bool =
    cfg!(all(target_os = "linux", target_env = "gnu", any(target_arch = "x86_64", target_arch = "aarch64")));

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

/// What the child needs, all prepared before it starts (it may not
/// allocate: it shares flow's memory and its allocator's locks), and where
/// it leaves the error that kept it from running the program.
struct Child<'a> {
    argv: &'a [*const libc::c_char],
    envp: &'a [*const libc::c_char],
    /// Each path to try, then a null pointer.
    programs: &'a [*const libc::c_char],
    cwd: &'a CString,
    /// The descriptors to become its stdin, stdout and stderr.
    streams: [libc::c_int; 3],
    /// Written by the child when it fails: an `errno`.
    error: libc::c_int,
}

/// How the child exits when it could not run the program, as with glibc.
const SPAWN_ERROR: libc::c_int = 127;
/// Bytes of each thread's stack for its children, above a guard page.
const STACK_SIZE: usize = 64 << 10;

/// A stack of [`STACK_SIZE`] bytes above a page that faults, mapped once
/// for each thread that spawns. One thread's children never run at once:
/// each one borrows the stack only until its `exec`, while the thread
/// waits.
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

thread_local! {
    static STACK: Result<Stack, i32> = Stack::map().map_err(|e| e.raw_os_error().unwrap_or(libc::ENOMEM));
}

/// Starts `child` with `clone(CLONE_VM | CLONE_VFORK)` on this thread's
/// stack for children, every signal blocked around it (as glibc does):
/// its pid, or the error that kept it from running the program (it is
/// reaped then).
#[allow(unsafe_code)]
fn spawn(child: &mut Child<'_>) -> io::Result<u32> {
    STACK.with(|stack| {
        let stack = stack.as_ref().map_err(|&e| io::Error::from_raw_os_error(e))?;
        let (all, mut old) = (u64::MAX, 0u64);
        // SAFETY: `rt_sigprocmask` with sets of the kernel's size (8 bytes on
        // these targets); all signals, glibc's own too, as `posix_spawn` blocks them.
        unsafe { libc::syscall(libc::SYS_rt_sigprocmask, libc::SIG_SETMASK, &raw const all, &raw mut old, 8) };
        let flags = libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD;
        let arg = std::ptr::from_mut(child).cast::<libc::c_void>();
        // SAFETY: `run` is the child's entry point; the stack is mapped,
        // writable and used by no other child (this thread waits until the
        // child has called `exec` or exited); `child` outlives the wait.
        let pid = unsafe { libc::clone(run, stack.top(), flags, arg) };
        let clone_error = io::Error::last_os_error();
        // SAFETY: as above, restoring the mask the thread had.
        unsafe {
            libc::syscall(libc::SYS_rt_sigprocmask, libc::SIG_SETMASK, &raw const old, std::ptr::null_mut::<u64>(), 8)
        };
        if pid < 0 {
            return Err(clone_error);
        }
        // SAFETY: the child wrote `error` (if at all) before this thread went on.
        let error = unsafe { std::ptr::read_volatile(&child.error) };
        if error != 0 {
            let mut status = 0;
            // SAFETY: our child, which exited: reaping it does not block for long.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            return Err(io::Error::from_raw_os_error(error));
        }
        Ok(pid as u32)
    })
}

/// The kernel's `struct sigaction` on x86-64 and AArch64.
#[repr(C)]
struct KernelSigaction {
    handler: libc::sighandler_t,
    flags: libc::c_ulong,
    restorer: usize,
    mask: u64,
}

/// glibc's own signals (SIGCANCEL, SIGSETXID), which its `posix_spawn`
/// leaves ignored in the child.
const GLIBC_SIGNALS: [libc::c_int; 2] = [32, 33];

/// The child, from `clone` to `exec`, as glibc's `posix_spawn` child with
/// the attributes the standard library gives: every signal flow handles
/// back at its default (SIGPIPE too), its own process group, its streams
/// (a stream already in place loses close-on-exec), its directory, no
/// signal blocked, then each path of the program until one runs. It calls
/// only the kernel, on memory prepared before, and never returns to Rust
/// code of flow's.
#[allow(unsafe_code)]
extern "C" fn run(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY (of this function): `arg` is the `Child` of `spawn`, alive and
    // not touched by its thread until this child execs or exits; each
    // pointer list ends with a null pointer.
    unsafe {
        let child = &mut *arg.cast::<Child<'_>>();
        let raw = |sig: libc::c_int, new: *const KernelSigaction, old: *mut KernelSigaction| {
            libc::syscall(libc::SYS_rt_sigaction, sig, new, old, 8) as libc::c_int
        };
        for sig in 1..=64 {
            if sig == libc::SIGKILL || sig == libc::SIGSTOP {
                continue;
            }
            let handler = if sig == libc::SIGPIPE {
                libc::SIG_DFL
            } else if GLIBC_SIGNALS.contains(&sig) {
                libc::SIG_IGN
            } else {
                let mut old = KernelSigaction { handler: 0, flags: 0, restorer: 0, mask: 0 };
                raw(sig, std::ptr::null(), &raw mut old);
                if old.handler == libc::SIG_DFL || old.handler == libc::SIG_IGN {
                    continue;
                }
                libc::SIG_DFL
            };
            raw(sig, &KernelSigaction { handler, flags: 0, restorer: 0, mask: 0 }, std::ptr::null_mut());
        }
        let error = || *libc::__errno_location();
        if libc::setpgid(0, 0) != 0 {
            fail(child, error());
        }
        let streams = child.streams;
        for (target, stream) in (0..).zip(streams) {
            let placed = if stream == target {
                let flags = libc::fcntl(stream, libc::F_GETFD);
                flags != -1 && libc::fcntl(stream, libc::F_SETFD, flags & !libc::FD_CLOEXEC) != -1
            } else {
                libc::dup2(stream, target) == target
            };
            if !placed {
                fail(child, error());
            }
        }
        if libc::chdir(child.cwd.as_ptr()) != 0 {
            fail(child, error());
        }
        let none = 0u64;
        libc::syscall(libc::SYS_rt_sigprocmask, libc::SIG_SETMASK, &raw const none, std::ptr::null_mut::<u64>(), 8);
        let (argv, envp) = (child.argv.as_ptr(), child.envp.as_ptr());
        let mut denied = false;
        let mut program = child.programs.as_ptr();
        while !(*program).is_null() {
            libc::execve(*program, argv, envp);
            match error() {
                libc::EACCES => denied = true,
                libc::ENOENT | libc::ESTALE | libc::ENOTDIR | libc::ENODEV | libc::ETIMEDOUT => {}
                other => fail(child, other),
            }
            program = program.add(1);
        }
        fail(child, if denied { libc::EACCES } else { error() })
    }
}

/// Ends the child that could not run its program, leaving `error` (an
/// `errno`) to the thread that started it.
///
/// # Safety
/// Only in the child, on the `Child` it was given.
#[allow(unsafe_code)]
unsafe fn fail(child: &mut Child<'_>, error: libc::c_int) -> ! {
    child.error = if error == 0 { libc::ECHILD } else { error };
    // SAFETY: `_exit` ends the child at once, running nothing of flow's.
    unsafe { libc::_exit(SPAWN_ERROR) }
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
        let pid = vfork_spawn(&argv, &env, cwd, streams).expect("supported here")?;
        drop(writer);
        let mut out = String::new();
        std::fs::File::from(reader).read_to_string(&mut out).unwrap();
        let mut status = 0;
        // SAFETY: our child, reaped once.
        #[allow(unsafe_code)]
        let reaped = unsafe { libc::waitpid(pid as i32, &mut status, 0) };
        assert_eq!(reaped, pid as i32);
        Ok((out, status))
    }

    /// Issue 28: the child is set up as `posix_spawnp` set it up before.
    #[cfg(all(target_os = "linux", target_env = "gnu", any(target_arch = "x86_64", target_arch = "aarch64")))]
    #[test]
    fn the_child_has_its_group_streams_directory_environment_and_signals() {
        let dir = tempfile::tempdir().unwrap();
        let script = "echo $$ $(cut -d' ' -f5 /proc/$$/stat) $PWD $FLOW_X; \
                      grep -E '^Sig(Blk|Ign)' /proc/$$/status; echo err >&2; exit 3";
        let (out, status) = run(&["sh", "-c", script], &[("FLOW_X", "x")], dir.path()).unwrap();
        let mut lines = out.lines();
        let first: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
        assert_eq!(first[0], first[1], "its own process group: {out}");
        assert_eq!(Path::new(first[2]).canonicalize().unwrap(), dir.path().canonicalize().unwrap());
        assert_eq!(first[3], "x");
        // No signal blocked; only glibc's two own signals ignored (SIGPIPE,
        // which the test harness ignores, is back at its default).
        assert_eq!(lines.collect::<Vec<_>>(), ["SigBlk:\t0000000000000000", "SigIgn:\t0000000180000000", "err"]);
        assert_eq!(libc::WEXITSTATUS(status), 3);
    }

    /// Issue 28: a program that cannot run is an error of the spawn, as
    /// with `posix_spawnp`, and its child is reaped.
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
        // No child of this thread left: each was reaped by the spawn.
        assert_eq!(fs_err::read_to_string("/proc/thread-self/children").unwrap(), "");
    }
}
