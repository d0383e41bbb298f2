//! The guard process that ends a worker's tasks if the worker dies without
//! doing so (see `flow_engine::runtime::Guard`): started by `flow run` and
//! `flow worker` as `flow guard`, a subcommand not meant for people.

use std::sync::Arc;

use crate::stdout::say;
use flow_engine::runtime::{Guard, serve_guard};

/// Starts the guard for this process's tasks; without one (it could not be
/// started) the worker still runs, and says so.
pub fn start() -> Option<Arc<Guard>> {
    let started = std::env::current_exe().and_then(|exe| {
        let mut command = std::process::Command::new(exe);
        command.arg("guard");
        Guard::start(command)
    });
    match started {
        Ok(guard) => Some(Arc::new(guard)),
        Err(e) => {
            say!("warning: could not start the guard process ({e}); if flow is killed, its tasks run on");
            None
        }
    }
}

/// `flow guard`: follows the worker's tasks on stdin until it closes.
pub fn serve() {
    serve_guard(std::io::BufReader::new(std::io::stdin()));
}
