//! The signals that stop a run: Ctrl-C, `SIGTERM` and `SIGHUP`.

/// Resolves on Ctrl-C (SIGINT), SIGTERM (a CI job cancelled, `kill`) or
/// SIGHUP (the terminal closed): each stops the run the same way. SIGHUP is
/// left alone when it is ignored at start (`nohup flow run`).
pub(super) async fn interrupted() {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut term) = signal(SignalKind::terminate()) else {
        let _ = tokio::signal::ctrl_c().await;
        return;
    };
    let mut hup = if hangup_ignored() { None } else { signal(SignalKind::hangup()).ok() };
    let hangup = async {
        match &mut hup {
            Some(hup) => {
                hup.recv().await;
            }
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
        () = hangup => {}
    }
}

/// Whether SIGHUP is ignored (`SigIgn` in `/proc/self/status`; bit 0 is SIGHUP).
fn hangup_ignored() -> bool {
    let Ok(status) = fs_err::read_to_string("/proc/self/status") else { return false };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & 1 != 0)
}
