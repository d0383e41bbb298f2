//! The child of [`super::vfork_spawn`], from `clone` to `exec`. It shares
//! flow's memory while flow's thread goes on, and that thread's
//! thread-local storage too: so it calls the kernel itself, never a libc
//! function that could set `errno` under flow's thread, and it reads only
//! the [`Child`] prepared for it and writes only its own stack and its
//! [`ExecError`](super::ExecError).

use super::child::Child;

/// How the child exits when it could not run the program, as with glibc.
const SPAWN_ERROR: usize = 127;

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

/// The child, as glibc's `posix_spawn` child with the attributes the
/// standard library gives: every signal flow handles back at its default
/// (SIGPIPE too), its own process group, its streams (a stream already in
/// place loses close-on-exec), its directory, no signal blocked, then each
/// path of the program until one runs. It never returns to Rust code of
/// flow's.
#[allow(unsafe_code)]
pub(super) extern "C" fn run(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY (of this function): `arg` is a `Child` that its thread keeps,
    // unchanged, until this child has called `exec` or exited; each
    // pointer list ends with a null pointer; every call is a system call
    // with arguments of the kernel's types.
    unsafe {
        let child = &*arg.cast::<Child>();
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
                sigaction(sig, std::ptr::null(), &raw mut old);
                if old.handler == libc::SIG_DFL || old.handler == libc::SIG_IGN {
                    continue;
                }
                libc::SIG_DFL
            };
            sigaction(sig, &KernelSigaction { handler, flags: 0, restorer: 0, mask: 0 }, std::ptr::null_mut());
        }
        check(child, syscall(libc::SYS_setpgid, [0; 6]));
        for (target, stream) in (0..).zip(child.streams) {
            if stream == target {
                let flags =
                    check(child, syscall(libc::SYS_fcntl, [stream as usize, libc::F_GETFD as usize, 0, 0, 0, 0]));
                let cleared = flags & !(libc::FD_CLOEXEC as usize);
                check(child, syscall(libc::SYS_fcntl, [stream as usize, libc::F_SETFD as usize, cleared, 0, 0, 0]));
            } else {
                check(child, syscall(libc::SYS_dup3, [stream as usize, target as usize, 0, 0, 0, 0]));
            }
        }
        check(child, syscall(libc::SYS_chdir, [child.cwd.as_ptr() as usize, 0, 0, 0, 0, 0]));
        let none = 0u64;
        syscall(libc::SYS_rt_sigprocmask, [libc::SIG_SETMASK as usize, &raw const none as usize, 0, 8, 0, 0]);
        let (argv, envp) = (child.argv.as_ptr() as usize, child.envp.as_ptr() as usize);
        let mut denied = false;
        let mut error = libc::ENOENT;
        for &program in child.programs.iter().take_while(|p| !p.is_null()) {
            error = -syscall(libc::SYS_execve, [program as usize, argv, envp, 0, 0, 0]) as libc::c_int;
            match error {
                libc::EACCES => denied = true,
                libc::ENOENT | libc::ESTALE | libc::ENOTDIR | libc::ENODEV | libc::ETIMEDOUT => {}
                _ => fail(child, error),
            }
        }
        fail(child, if denied { libc::EACCES } else { error })
    }
}

/// `rt_sigaction` for `sig`, with the kernel's set size.
///
/// # Safety
/// `new` and `old` are null or valid.
#[allow(unsafe_code)]
unsafe fn sigaction(sig: libc::c_int, new: *const KernelSigaction, old: *mut KernelSigaction) {
    // SAFETY: as the caller promises.
    unsafe { syscall(libc::SYS_rt_sigaction, [sig as usize, new as usize, old as usize, 8, 0, 0]) };
}

/// What a system call returned, or the end of the child if it failed.
///
/// # Safety
/// Only in the child.
#[allow(unsafe_code)]
unsafe fn check(child: &Child, returned: isize) -> usize {
    match usize::try_from(returned) {
        Ok(value) => value,
        // SAFETY: in the child, as the caller promises.
        Err(_) => unsafe { fail(child, -returned as libc::c_int) },
    }
}

/// Ends the child that could not run its program, leaving `error` (an
/// `errno`) for flow to read once it has reaped the child.
///
/// # Safety
/// Only in the child.
#[allow(unsafe_code)]
unsafe fn fail(child: &Child, error: libc::c_int) -> ! {
    child.error.set(if error == 0 { libc::ECHILD } else { error });
    loop {
        // SAFETY: `exit_group` ends the child at once, running nothing of flow's.
        unsafe { syscall(libc::SYS_exit_group, [SPAWN_ERROR, 0, 0, 0, 0, 0]) };
    }
}

/// System call `number` with `args`: what it returned, `-errno` when it
/// failed (no `errno` is set).
///
/// # Safety
/// As for the call itself.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
unsafe fn syscall(number: libc::c_long, args: [usize; 6]) -> isize {
    let returned: isize;
    // SAFETY: the x86-64 system call convention; the kernel clobbers rcx and r11.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") number as isize => returned,
            in("rdi") args[0], in("rsi") args[1], in("rdx") args[2],
            in("r10") args[3], in("r8") args[4], in("r9") args[5],
            lateout("rcx") _, lateout("r11") _,
            options(nostack),
        );
    }
    returned
}

/// System call `number` with `args`: what it returned, `-errno` when it
/// failed (no `errno` is set).
///
/// # Safety
/// As for the call itself.
#[cfg(target_arch = "aarch64")]
#[allow(unsafe_code)]
unsafe fn syscall(number: libc::c_long, args: [usize; 6]) -> isize {
    let returned: isize;
    // SAFETY: the AArch64 system call convention.
    unsafe {
        std::arch::asm!(
            "svc 0",
            inlateout("x0") args[0] as isize => returned,
            in("x1") args[1], in("x2") args[2], in("x3") args[3],
            in("x4") args[4], in("x5") args[5], in("x8") number,
            options(nostack),
        );
    }
    returned
}
