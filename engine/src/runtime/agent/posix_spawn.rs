//! [`posix_spawn`]: starting a process with `posix_spawnp` and an
//! environment prepared once per worker. The standard library copies
//! flow's whole environment into a map, and then into a new array, for
//! every process whose environment it changes; here flow's environment is
//! copied once, and each process only adds its job's variables. Used where
//! it behaves as the standard library's spawn does: on Linux with glibc
//! (which has `posix_spawn_file_actions_addchdir_np` from 2.29), and when
//! the job does not set `PATH`, where the standard library looks the
//! program up in the child's `PATH` rather than flow's.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::OnceLock;

/// `posix_spawn_file_actions_addchdir_np`, looked up when the program runs
/// (a binary that named it would not start with a glibc before 2.29).
type AddChdir = unsafe extern "C" fn(*mut libc::posix_spawn_file_actions_t, *const libc::c_char) -> libc::c_int;

/// Starts `argv` with flow's environment and `env` added to it (a later
/// variable of the same name wins), in `cwd`, in a new process group,
/// with `streams` as its stdin, stdout and stderr, SIGPIPE at its default
/// and no signal blocked, as the standard library does. `None` when this
/// system or this job needs the standard library.
pub fn posix_spawn(
    argv: &[String],
    env: &[(String, String)],
    cwd: &Path,
    streams: [BorrowedFd<'_>; 3],
) -> Option<io::Result<u32>> {
    let add_chdir = add_chdir()?;
    if argv.is_empty() || env.iter().any(|(name, _)| name == "PATH") {
        return None;
    }
    Some(prepare(argv, env, cwd).and_then(|(argv, envp, cwd)| {
        // SAFETY: `argv` and `envp` hold pointers to strings that outlive
        // the call, each list ending with a null pointer; `add_chdir` is
        // the function of that name (or `None` was returned above).
        #[allow(unsafe_code)]
        unsafe {
            spawn(add_chdir, &argv.pointers(), &envp.pointers(), &cwd, streams)
        }
    }))
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
    let c = |bytes: Vec<u8>| CString::new(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e));
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

/// `posix_spawn_file_actions_addchdir_np` of this process's C library, if
/// it has one (glibc 2.29 and later).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn add_chdir() -> Option<AddChdir> {
    static ADD_CHDIR: OnceLock<Option<AddChdir>> = OnceLock::new();
    *ADD_CHDIR.get_or_init(|| {
        let name = c"posix_spawn_file_actions_addchdir_np";
        // SAFETY: `dlsym` with RTLD_DEFAULT only looks a name up.
        let symbol = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
        // SAFETY: glibc's function of that name has the type `AddChdir`.
        (!symbol.is_null()).then(|| unsafe { std::mem::transmute::<*mut libc::c_void, AddChdir>(symbol) })
    })
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn add_chdir() -> Option<AddChdir> {
    None
}

/// Calls `posix_spawnp`: the pid of the child, or why it could not start
/// (glibc reports a failed `chdir` or `exec` of the child).
///
/// # Safety
/// `argv` and `envp` are lists of pointers to C strings ending with a null
/// pointer, `argv` has at least one string, and `add_chdir` is
/// `posix_spawn_file_actions_addchdir_np`.
#[allow(unsafe_code)]
unsafe fn spawn(
    add_chdir: AddChdir,
    argv: &[*const libc::c_char],
    envp: &[*const libc::c_char],
    cwd: &CString,
    streams: [BorrowedFd<'_>; 3],
) -> io::Result<u32> {
    use std::mem::MaybeUninit;
    let check = |result: libc::c_int| if result == 0 { Ok(()) } else { Err(io::Error::from_raw_os_error(result)) };
    // SAFETY (of each call below): the structures are initialised by
    // their `init` before any other use and destroyed once, after the
    // spawn; the signal sets are initialised by `sigemptyset`.
    unsafe {
        let mut actions = MaybeUninit::<libc::posix_spawn_file_actions_t>::uninit();
        check(libc::posix_spawn_file_actions_init(actions.as_mut_ptr()))?;
        let mut attr = MaybeUninit::<libc::posix_spawnattr_t>::uninit();
        if let Err(e) = check(libc::posix_spawnattr_init(attr.as_mut_ptr())) {
            libc::posix_spawn_file_actions_destroy(actions.as_mut_ptr());
            return Err(e);
        }
        let (actions, attr) = (actions.as_mut_ptr(), attr.as_mut_ptr());
        let result = (|| {
            for (target, stream) in streams.iter().enumerate() {
                check(libc::posix_spawn_file_actions_adddup2(actions, stream.as_raw_fd(), target as libc::c_int))?;
            }
            check(add_chdir(actions, cwd.as_ptr()))?;
            let mut signals = MaybeUninit::<libc::sigset_t>::uninit();
            libc::sigemptyset(signals.as_mut_ptr());
            check(libc::posix_spawnattr_setsigmask(attr, signals.as_ptr()))?;
            libc::sigaddset(signals.as_mut_ptr(), libc::SIGPIPE);
            check(libc::posix_spawnattr_setsigdefault(attr, signals.as_ptr()))?;
            check(libc::posix_spawnattr_setpgroup(attr, 0))?;
            let flags = libc::POSIX_SPAWN_SETPGROUP | libc::POSIX_SPAWN_SETSIGMASK | libc::POSIX_SPAWN_SETSIGDEF;
            check(libc::posix_spawnattr_setflags(attr, flags as libc::c_short))?;
            let mut pid = 0;
            check(libc::posix_spawnp(&mut pid, argv[0], actions, attr, argv.as_ptr().cast(), envp.as_ptr().cast()))?;
            Ok(pid as u32)
        })();
        libc::posix_spawnattr_destroy(attr);
        libc::posix_spawn_file_actions_destroy(actions);
        result
    }
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
        let error = prepare(&["a\0b".into()], &[], Path::new("/")).err().unwrap();
        assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
        let null = fs_err::File::open("/dev/null").unwrap();
        let fd = std::os::fd::AsFd::as_fd(null.file());
        let path = [("PATH".to_owned(), "/bin".to_owned())];
        assert!(posix_spawn(&["true".into()], &path, Path::new("/"), [fd, fd, fd]).is_none());
    }
}
