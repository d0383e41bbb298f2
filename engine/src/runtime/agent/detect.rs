//! What this machine offers a local worker: CPU ids (the affinity mask),
//! memory (`/proc/meminfo`) and GPUs (`CUDA_VISIBLE_DEVICES`, else
//! `nvidia-smi -L`).

use crate::resources::WorkerShape;

/// What the command line already says, so that it is not looked for.
#[derive(Debug, Clone, Copy, Default)]
pub struct Given {
    /// A number of GPUs is given.
    pub gpus: bool,
    /// An amount of memory is given.
    pub memory: bool,
}

/// Detects this machine's resources: the CPU ids flow may use, the GPU
/// device ids, and the total memory (0 when unknown); no custom resources.
/// What `given` names is looked for only as far as it matters: with a
/// number of GPUs given, their ids come from `CUDA_VISIBLE_DEVICES` alone
/// (`nvidia-smi` numbers GPUs from 0, as a count does, so it is not run:
/// a worker starts without a process of its own), and with memory given,
/// it is left at 0.
pub fn detect(given: Given) -> WorkerShape {
    let visible = std::env::var("CUDA_VISIBLE_DEVICES").ok();
    WorkerShape {
        cpus: cpus(),
        gpus: match (&visible, given.gpus) {
            (None, true) => Vec::new(),
            _ => gpus(visible.as_deref()),
        },
        memory: if given.memory { 0 } else { memory() },
        custom: Default::default(),
    }
}

fn cpus() -> Vec<u32> {
    #[cfg(target_os = "linux")]
    if let Ok(set) = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)) {
        let ids: Vec<u32> =
            (0..nix::sched::CpuSet::count()).filter(|&i| set.is_set(i).unwrap_or(false)).map(|i| i as u32).collect();
        if !ids.is_empty() {
            return ids;
        }
    }
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    (0..n as u32).collect()
}

/// GPU ids from `CUDA_VISIBLE_DEVICES` (numeric ids; `""` means none), else
/// one per line of `nvidia-smi -L`.
fn gpus(visible: Option<&str>) -> Vec<u32> {
    if let Some(list) = visible {
        let ids: Vec<u32> = list.split(',').filter_map(|s| s.trim().parse().ok()).collect();
        let named = list.split(',').filter(|s| !s.trim().is_empty()).count();
        // Device UUIDs are numbered in order.
        return if ids.len() == named { ids } else { (0..named as u32).collect() };
    }
    match std::process::Command::new("nvidia-smi").arg("-L").output() {
        Ok(out) if out.status.success() => {
            let n = String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.starts_with("GPU ")).count();
            (0..n as u32).collect()
        }
        _ => Vec::new(),
    }
}

fn memory() -> u64 {
    let Ok(info) = fs_err::read_to_string("/proc/meminfo") else { return 0 };
    info.lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_lists() {
        assert_eq!(gpus(Some("0,2")), vec![0, 2]);
        assert_eq!(gpus(Some("")), Vec::<u32>::new());
        assert_eq!(gpus(Some("GPU-aa,GPU-bb")), vec![0, 1]);
    }

    #[test]
    fn this_machine_has_cpus_and_memory() {
        let d = detect(Given::default());
        assert!(!d.cpus.is_empty());
        assert!(d.memory > 0);
        assert_eq!(detect(Given { gpus: false, memory: true }).memory, 0, "given: not read");
    }
}
