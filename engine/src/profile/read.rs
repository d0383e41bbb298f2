//! Reading a profiles file into a [`Profile`]: its tables with the spec
//! layer's reader, then the values checked beyond their types, every problem
//! a [`Diagnostic`] at its place.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde_spanned::Spanned;

use super::profile::{PROFILES_FILE, Profile, Queue};
use super::settings::{QueueSettings, QueueWorker, default_max_workers, default_one, five_minutes, thirty_seconds};
use crate::container::ContainerEngine;
use crate::diag::{Code, Diagnostic, Source, closest};
use crate::ir::Amount;
use crate::resources::Capacity;
use crate::spec::{Format, read};
use crate::units::{parse_duration, parse_size};

// The names only show in messages: "unknown key `x` in a profile".
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename = "a profiles file")]
struct File {
    #[serde(default)]
    profile: BTreeMap<String, Spanned<RawProfile>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename = "a profile")]
struct RawProfile {
    #[serde(default)]
    listen: Option<String>,
    #[serde(default)]
    local_worker: Option<bool>,
    #[serde(default)]
    queue: Option<QueueSettings>,
    #[serde(default)]
    container_engine: Option<Spanned<String>>,
}

/// The values of each profile's queue that are checked beyond their types,
/// read apart from the strict [`File`] so that they are checked even when
/// the queue's table has other problems (a misspelt or a missing key).
#[derive(Deserialize)]
struct ValuesFile {
    #[serde(default)]
    profile: BTreeMap<String, ProfileValues>,
}

#[derive(Deserialize)]
struct ProfileValues {
    #[serde(default)]
    queue: Option<Spanned<QueueValues>>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct QueueValues {
    time_limit: Option<Spanned<String>>,
    idle_timeout: Option<Spanned<String>>,
    poll_interval: Option<Spanned<String>>,
    workers_per_allocation: Option<u32>,
    max_workers: Option<u32>,
    worker: Option<QueueWorker>,
}

/// The profiles files for a workflow in `dir`, in the order they are
/// searched: `dir/flow.profiles.toml`, then `$XDG_CONFIG_HOME/flow/profiles.toml`
/// (or `~/.config/flow/profiles.toml`); only those that exist.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .map(|c| c.join("flow").join("profiles.toml"));
    std::iter::once(dir.join(PROFILES_FILE)).chain(config).filter(|p| p.exists()).collect()
}

/// Whether `problems` only say the file has no such profile (so the next file may).
pub fn is_unknown(problems: &[Diagnostic]) -> bool {
    problems.iter().all(|d| d.code == Code::ProfileUnknown)
}

/// Reads profile `name` from `source` (a profiles file). Every problem in
/// the file is reported at once, each at its place.
pub fn load(source: &Arc<Source>, name: &str) -> Result<Profile, Vec<Diagnostic>> {
    let at = |d: Diagnostic| d.in_source(source.clone());
    let (file, mut problems) = read::<File>(source, Format::Toml, "a profiles file");
    let Some(file) = file else { return Err(problems.into_iter().map(at).collect()) };
    // The queue's values, checked even when its table has other problems.
    let (values, _) = read::<ValuesFile>(source, Format::Toml, "a profiles file");
    let values = values.and_then(|mut v| v.profile.remove(name)).and_then(|p| p.queue);
    let checked = values.map(|v| check_queue(&v, &mut problems));
    problems.sort_by_key(|d| d.span.as_ref().map_or(0, |span| span.start));
    let Some(raw) = file.profile.get(name) else {
        // A profile with a problem in its own table is dropped: say that problem, not that it is missing.
        if !problems.is_empty() {
            return Err(problems.into_iter().map(at).collect());
        }
        let names: Vec<&str> = file.profile.keys().map(String::as_str).collect();
        let mut d = Diagnostic::new(Code::ProfileUnknown, format!("there is no profile `{name}`"));
        d = match closest(name, names.iter().copied()) {
            Some(near) => d.help(format!("did you mean `{near}`?")),
            None if names.is_empty() => d.help("add a `[profile.NAME]` table"),
            None => d.help(format!("the profiles are: {}", names.join(", "))),
        };
        return Err(vec![at(d)]);
    };
    if !problems.is_empty() {
        return Err(problems.into_iter().map(at).collect());
    }
    let raw = raw.get_ref();
    let container_engine = match &raw.container_engine {
        None => None,
        Some(name) => match ContainerEngine::parse(name.get_ref()) {
            Some(engine) => Some(engine),
            None => return Err(vec![at(unknown_engine(name))]),
        },
    };
    let queue = raw.queue.clone().zip(checked).map(|(settings, c)| Queue {
        worker: c.worker(&settings.worker),
        settings,
        time_limit: c.time_limit,
        idle_timeout: c.idle_timeout,
        poll_interval: c.poll_interval,
    });
    Ok(Profile {
        name: name.to_owned(),
        // With a queue the coordinator must be reachable from compute nodes.
        listen: raw.listen.clone().or_else(|| queue.as_ref().map(|_| "0.0.0.0:0".to_owned())),
        local_worker: raw.local_worker.unwrap_or(queue.is_none()),
        queue,
        container_engine,
    })
}

/// The problem with an engine name flow does not know.
fn unknown_engine(name: &Spanned<String>) -> Diagnostic {
    let names = ContainerEngine::ALL.map(ContainerEngine::name);
    let help = match closest(name.get_ref(), names) {
        Some(near) => format!("did you mean `{near}`?"),
        None => format!("the engines are: {}", names.join(", ")),
    };
    Diagnostic::new(Code::ProfileValue, format!("unknown container engine `{}`", name.get_ref()))
        .at(name.span(), "no such engine")
        .help(help)
}

/// A queue's values, parsed.
struct Checked {
    time_limit: u64,
    idle_timeout: u64,
    poll_interval: u64,
    memory: Option<u64>,
    custom: BTreeMap<String, Amount>,
}

impl Checked {
    /// What a worker asking for `asked` has: without `cpus` a whole node,
    /// whose CPUs and GPUs are unknown; with `cpus`, no GPUs unless given.
    fn worker(&self, asked: &QueueWorker) -> Capacity {
        let whole = |n: u32| Amount::whole(u64::from(n));
        let gpus = if asked.cpus.is_none() { asked.gpus.map(whole) } else { Some(whole(asked.gpus.unwrap_or(0))) };
        Capacity { cpus: asked.cpus.map(whole), gpus, memory: self.memory, custom: Some(self.custom.clone()) }
    }
}

/// Parses the values of a queue's table, collecting every problem; a value
/// that is missing (its own problem, reported elsewhere) is left unchecked.
fn check_queue(q: &Spanned<QueueValues>, problems: &mut Vec<Diagnostic>) -> Checked {
    let mut duration = |field: &str, v: &Spanned<String>| match parse_duration(v.get_ref()) {
        Ok(0) => {
            let d = Diagnostic::new(Code::ProfileValue, format!("`{field}` must be longer than zero"));
            problems.push(d.at(v.span(), "zero").help("write a duration such as \"30m\" or \"2h\""));
            0
        }
        Ok(secs) => secs,
        Err(e) => {
            let d = Diagnostic::new(Code::ProfileValue, format!("`{field}`: {e}"));
            problems.push(d.at(v.span(), "not a duration").help("write a duration such as \"30m\" or \"2h\""));
            0
        }
    };
    let values = q.get_ref();
    let time_limit = values.time_limit.as_ref().map_or(0, |v| duration("time_limit", v));
    let idle_timeout = duration("idle_timeout", &values.idle_timeout.clone().unwrap_or_else(five_minutes));
    let poll_interval = duration("poll_interval", &values.poll_interval.clone().unwrap_or_else(thirty_seconds));
    // Problems of the table as a whole point at its `time_limit`, or at the table.
    let table = values.time_limit.as_ref().map_or(q.span(), Spanned::span);
    let shape = values.worker.clone().unwrap_or_default();
    let memory = shape.memory.as_ref().and_then(|m| match parse_size(m.get_ref()) {
        Ok(bytes) => Some(bytes),
        Err(e) => {
            let d = Diagnostic::new(Code::ProfileValue, format!("`worker.memory`: {e}"));
            problems.push(d.at(m.span(), "not a size").help("write a size such as \"16 GiB\""));
            None
        }
    });
    let mut custom = BTreeMap::new();
    for (name, &amount) in &shape.resources {
        match Amount::from_f64(amount) {
            Some(a) => {
                custom.insert(name.clone(), a);
            }
            None => problems.push(
                Diagnostic::new(Code::ProfileValue, format!("resource `{name}` must be a non-negative number"))
                    .at(table.clone(), "in this queue"),
            ),
        }
    }
    let per = values.workers_per_allocation.unwrap_or_else(default_one);
    let max = values.max_workers.unwrap_or_else(default_max_workers);
    for (field, value) in [("workers_per_allocation", per), ("max_workers", max)] {
        if value == 0 {
            let d = Diagnostic::new(Code::ProfileValue, format!("`{field}` must be at least 1"));
            problems.push(d.at(table.clone(), "in this queue"));
        }
    }
    if max < per && max > 0 {
        let d = Diagnostic::new(
            Code::ProfileValue,
            format!(
                "`max_workers` ({max}) is smaller than `workers_per_allocation` ({per}): no allocation could ever be submitted"
            ),
        );
        problems.push(d.at(table, "in this queue").help("raise `max_workers`"));
    }
    Checked { time_limit, idle_timeout, poll_interval, memory, custom }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(text: &str, name: &str) -> Result<Profile, Vec<String>> {
        let source = Source::new(PROFILES_FILE, text);
        load(&source, name).map_err(|ds| ds.iter().map(|d| format!("{} {}", d.location(&source), d.message)).collect())
    }

    #[test]
    fn a_slurm_queue_reads_with_defaults() {
        let p =
            profile("[profile.hpc.queue]\nmanager = \"slurm\"\npartition = \"debug\"\ntime_limit = \"1h\"\n", "hpc")
                .unwrap();
        assert_eq!(p.listen.as_deref(), Some("0.0.0.0:0"));
        assert!(!p.local_worker);
        let q = p.queue.unwrap();
        assert_eq!((q.time_limit, q.idle_timeout, q.poll_interval), (3600, 300, 30));
        assert_eq!((q.settings.backlog, q.settings.max_workers, q.settings.workers_per_allocation), (1, 4, 1));
    }

    #[test]
    fn pbs_queue_is_an_alias_of_partition() {
        let p = profile("[profile.p.queue]\nmanager = \"pbs\"\nqueue = \"workq\"\ntime_limit = \"10m\"\n", "p");
        assert_eq!(p.unwrap().queue.unwrap().settings.partition.as_deref(), Some("workq"));
    }

    #[test]
    fn every_bad_value_is_reported_at_its_place() {
        let text = "[profile.x.queue]\nmanager = \"slurm\"\ntime_limit = \"soon\"\nidle_timeout = \"0s\"\n\
                    worker = { memory = \"lots\" }\n";
        let errors = profile(text, "x").unwrap_err();
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors[0].starts_with("flow.profiles.toml:3:14 `time_limit`"), "{errors:?}");
        assert!(errors[1].contains("idle_timeout"), "{errors:?}");
        assert!(errors[2].starts_with("flow.profiles.toml:5:"), "{errors:?}");
    }

    #[test]
    fn a_profile_names_its_container_engine() {
        let p = profile("[profile.hpc]\ncontainer_engine = \"apptainer\"\n", "hpc").unwrap();
        assert_eq!(p.container_engine, Some(ContainerEngine::Apptainer));
        let errors = profile("[profile.hpc]\ncontainer_engine = \"apptainr\"\n", "hpc").unwrap_err();
        assert_eq!(errors, vec!["flow.profiles.toml:2:20 unknown container engine `apptainr`".to_owned()]);
    }

    #[test]
    fn unknown_names_get_a_suggestion() {
        let errors = profile("[profile.cluster]\nlisten = \"0.0.0.0:0\"\n", "clustr").unwrap_err();
        assert!(errors[0].contains("there is no profile `clustr`"));
        let errors = profile("[profile.c.queue]\nmanager = \"slurm\"\ntime_limt = \"1h\"\n", "c").unwrap_err();
        assert_eq!(
            errors,
            [
                "flow.profiles.toml:1:1 missing key `time_limit` in a queue",
                "flow.profiles.toml:3:1 unknown key `time_limt` in a queue"
            ]
        );
        // Every problem in the file at once: an unknown key, a wrong type, a bad manager.
        let text = "[profile.a]\nlisten = 7\nlocal_wrker = true\n[profile.b.queue]\nmanager = \"lsf\"\ntime_limit = \"1h\"\n\
                    worker = { cpus = \"many\" }\n";
        let errors = profile(text, "a").unwrap_err();
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert!(errors[0].starts_with("flow.profiles.toml:2:10"), "{errors:?}");
        assert!(errors[1].contains("unknown key `local_wrker` in a profile"), "{errors:?}");
        assert!(errors[2].starts_with("flow.profiles.toml:5:") && errors[2].contains("lsf"), "{errors:?}");
        assert!(errors[3].starts_with("flow.profiles.toml:7:"), "{errors:?}");
        let errors = profile("[profile.c.queue]\nmanager = \"lsf\"\ntime_limit = \"1h\"\n", "c").unwrap_err();
        assert!(errors[0].contains("lsf"), "{errors:?}");
    }

    /// Issue 13: `memory = "lots"` showed only once the misspelt
    /// `time_limt` was fixed; every problem of the table shows at once.
    #[test]
    fn bad_values_show_beside_misspelt_and_missing_keys() {
        let text = "[profile.c.queue]\nmanager = \"slurm\"\ntime_limt = \"1h\"\nworker = { memory = \"lots\" }\n";
        let errors = profile(text, "c").unwrap_err();
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert_eq!(errors[0], "flow.profiles.toml:1:1 missing key `time_limit` in a queue");
        assert_eq!(errors[1], "flow.profiles.toml:3:1 unknown key `time_limt` in a queue");
        assert!(errors[2].starts_with("flow.profiles.toml:4:21 `worker.memory`"), "{errors:?}");
    }

    #[test]
    fn a_queue_worker_is_a_capacity() {
        let p = profile("[profile.p.queue]\nmanager = \"slurm\"\ntime_limit = \"1h\"\n", "p").unwrap();
        assert_eq!(p.queue.unwrap().worker, Capacity { custom: Some(BTreeMap::new()), ..Capacity::default() });
        let text = "[profile.p.queue]\nmanager = \"slurm\"\ntime_limit = \"1h\"\n\
                    worker = { cpus = 4, memory = \"1 GiB\", resources = { fpga = 0.5 } }\n";
        let worker = profile(text, "p").unwrap().queue.unwrap().worker;
        assert_eq!(
            worker,
            Capacity {
                cpus: Some(Amount::whole(4)),
                gpus: Some(Amount::ZERO),
                memory: Some(1 << 30),
                custom: Some([("fpga".to_owned(), Amount(5000))].into()),
            }
        );
    }

    #[test]
    fn a_profile_without_a_queue_keeps_the_local_worker() {
        let p = profile("[profile.shared]\nlisten = \"0.0.0.0:7000\"\n", "shared").unwrap();
        assert!(p.local_worker && p.queue.is_none());
        assert_eq!(p.listen.as_deref(), Some("0.0.0.0:7000"));
    }
}
