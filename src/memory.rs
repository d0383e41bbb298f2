//! When the allocator (mimalloc) gives freed memory back to the system.

/// mimalloc's `mi_option_purge_delay` (the same place in the option list of
/// mimalloc 2 and 3; the crate does not name it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
/// How long freed pages wait before they go back to the system in a run
/// or a worker (mimalloc's default is 1,000); other commands return them at once.
pub const PURGE_DELAY_MS: std::ffi::c_long = 100;

/// Makes mimalloc give free pages back to the system `delay_ms` after
/// they are freed, not a second after: a coordinator's peak is then its
/// live data and a tenth of a second of freed jobs and messages (issue 28).
/// At once (0) would cost a run a fifth more CPU per task in system calls
/// and page faults. The environment variable `MIMALLOC_PURGE_DELAY`
/// (milliseconds) overrides it.
#[allow(unsafe_code)]
pub fn return_freed_memory(delay_ms: std::ffi::c_long) {
    // SAFETY: sets one of mimalloc's options, called at the start of `main`
    // before any other thread exists.
    unsafe { libmimalloc_sys::mi_option_set_default(MI_OPTION_PURGE_DELAY, delay_ms) };
}

/// Gives the pages freed so far back to the system at once, without
/// waiting for the purge delay. `flow run` calls it once the workflow is
/// compiled, before the run allocates its state (issue 28): pages mimalloc
/// reuses are resident, and it clears a zeroed allocation made from them,
/// while pages the system takes back and hands out again cost nothing until
/// written, so the per-instance state of a queue stays mostly out of memory.
/// Covers the calling thread's pages and the arenas all threads share.
#[allow(unsafe_code)]
pub fn return_freed_memory_now() {
    // SAFETY: `mi_collect` frees only what mimalloc holds and no live
    // allocation uses; any thread may call it at any time.
    unsafe { libmimalloc_sys::mi_collect(true) };
}
