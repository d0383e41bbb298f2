//! The resources a worker on this machine owns: detected, or given with
//! `--cpus/--gpus/--memory/--resource`.

use flow_engine::resources::WorkerShape;
use flow_engine::runtime::{Given, detect};

use crate::args::WorkerArgs;
use crate::failure::Failure;
use crate::load_workflow;

/// A worker's resources on this machine: detected, then narrowed by the flags.
pub fn local(args: &WorkerArgs) -> Result<WorkerShape, Failure> {
    let memory = args.memory_bytes().map_err(Failure::Usage)?;
    let found = detect(Given { gpus: args.gpus.is_some(), memory: memory.is_some() });
    let whole = |flag: &str, v: f64| {
        if v.fract() == 0.0 && v >= 0.0 {
            Ok(v as usize)
        } else {
            Err(Failure::Usage(format!("`--{flag}` takes a whole number")))
        }
    };
    let cpus = match args.cpus {
        Some(n) => {
            let n = whole("cpus", n)?;
            // More CPUs than the machine has are allowed (oversubscription by choice).
            let next = found.cpus.iter().max().map_or(0, |m| m + 1);
            found.cpus.iter().copied().chain(next..).take(n).collect()
        }
        None => found.cpus,
    };
    let gpus = match args.gpus {
        Some(n) => {
            let next = found.gpus.iter().max().map_or(0, |m| m + 1);
            found.gpus.iter().copied().chain(next..).take(whole("gpus", n)?).collect()
        }
        None => found.gpus,
    };
    let memory = memory.unwrap_or(found.memory);
    let custom = load_workflow::custom_resources(&args.resources)?;
    Ok(WorkerShape { cpus, gpus, memory, custom })
}
