//! What [`super::vfork_spawn`] gives its child, and where the child
//! leaves the error that kept it from running its program.

use std::ffi::CString;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

/// What the child needs, all prepared before it starts (it may not
/// allocate: it shares flow's memory and its allocator's locks), and
/// where it leaves the error that kept it from running the program. Its
/// thread keeps it, unchanged, until the child lets go of it.
pub(super) struct Child {
    /// Not 0 until the child has called `exec` or exited: the kernel then
    /// writes 0 here and wakes a futex wait on it (`CLONE_CHILD_CLEARTID`).
    pub(super) running: AtomicU32,
    /// Kept here for the pointers below, which point into them.
    pub(super) _strings: Vec<CString>,
    pub(super) argv: Vec<*const libc::c_char>,
    pub(super) envp: Vec<*const libc::c_char>,
    /// Each path to try.
    pub(super) programs: Vec<*const libc::c_char>,
    pub(super) cwd: CString,
    /// The descriptors to become its stdin, stdout and stderr.
    pub(super) streams: [libc::c_int; 3],
    pub(super) error: ExecError,
}

impl Child {
    /// Whether the child has let go of what it was given: its stack, and this.
    pub(super) fn let_go(&self) -> bool {
        self.running.load(Ordering::Acquire) == 0
    }

    /// Waits until the child has let go.
    #[allow(unsafe_code)]
    pub(super) fn wait_let_go(&self) {
        loop {
            let running = self.running.load(Ordering::Acquire);
            if running == 0 {
                return;
            }
            // SAFETY: a futex wait on a word that stays alive; it returns
            // at once if the word changed, or when the kernel wakes it.
            unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    self.running.as_ptr(),
                    libc::FUTEX_WAIT,
                    running,
                    std::ptr::null::<libc::timespec>(),
                )
            };
        }
    }
}

/// Where a child leaves the error (an `errno`) that kept it from running
/// its program, before it exits with status 127.
#[derive(Clone, Default)]
pub struct ExecError(Arc<AtomicI32>);

impl ExecError {
    /// Why the process could not run its program: known once it has been
    /// reaped (`None` if it ran it).
    pub fn get(&self) -> Option<io::Error> {
        match self.0.load(Ordering::Acquire) {
            0 => None,
            errno => Some(io::Error::from_raw_os_error(errno)),
        }
    }

    /// Leaves `errno` for flow (in the child).
    pub(super) fn set(&self, errno: libc::c_int) {
        self.0.store(errno, Ordering::Release);
    }
}
