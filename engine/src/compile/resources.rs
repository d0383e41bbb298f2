//! Resource requests: a task's `cpus`/`gpus`/`memory`/`resources`/`time_request`
//! and its `variants`, turned into [`Resources`] and checked for possibility.

use std::collections::BTreeMap;
use std::ops::Range;

use super::compiler::Compiler;
use crate::diag::{Code, Diagnostic};
use crate::ir::{Amount, Resources};
use crate::resources::{LARGEST, Shortfall, no_variant_fits};
use crate::spec::{Quantity, Sp, TaskSpec};
use crate::units::{mib_to_bytes, parse_duration, parse_size};

const DURATION_HELP: &str =
    "use a duration like \"90s\", \"15m\", \"2h\", \"1h30m\", \"HH:MM:SS\", or a number of seconds";
const SIZE_HELP: &str = "use a size like \"4 GiB\" or \"512 MB\", or a number of MiB";

/// The keys one request is made of (the task's own, or one variant's).
struct Request<'a> {
    cpus: Option<&'a Sp<Quantity>>,
    gpus: Option<&'a Sp<Quantity>>,
    memory: Option<&'a Sp<Quantity>>,
    resources: Option<&'a Sp<BTreeMap<String, Sp<Quantity>>>>,
    time_request: Option<&'a Sp<Quantity>>,
}

/// The task's resource requests in the order they are tried, for the first
/// attempt and, when a resource key names `attempt`, for each retry (the
/// `retries` later attempts; an empty list when they ask for the same).
/// Variant keys that are left out are taken from the task.
pub fn variants(
    c: &mut Compiler,
    spec: &TaskSpec,
    task_span: &Range<usize>,
    retries: u32,
) -> Option<(Vec<Resources>, Vec<Vec<Resources>>)> {
    c.attempt = Some(0);
    let first = requests(c, spec, task_span);
    let mut later = Vec::new();
    if first.is_some() && names_attempt(spec) {
        for attempt in 1..=retries {
            c.attempt = Some(attempt);
            match requests(c, spec, task_span) {
                Some(v) => later.push(v),
                None => break,
            }
        }
    }
    c.attempt = None;
    let first = first?;
    if later.iter().all(|v| *v == first) {
        later.clear();
    }
    Some((first, later))
}

/// Whether a resource key of the task or of a variant is a template that
/// may name `attempt`.
fn names_attempt(spec: &TaskSpec) -> bool {
    let text =
        |q: Option<&Sp<Quantity>>| matches!(q.map(|q| &q.value), Some(Quantity::Text(t)) if t.contains("attempt"));
    let custom =
        |r: Option<&Sp<BTreeMap<String, Sp<Quantity>>>>| r.is_some_and(|r| r.value.values().any(|q| text(Some(q))));
    let own = [&spec.cpus, &spec.gpus, &spec.memory, &spec.time_request].iter().any(|q| text(q.as_ref()))
        || custom(spec.resources.as_ref());
    let variants = spec.variants.iter().flat_map(|v| &v.value).any(|v| {
        let v = &v.value;
        [&v.cpus, &v.gpus, &v.memory, &v.time_request].iter().any(|q| text(q.as_ref())) || custom(v.resources.as_ref())
    });
    own || variants
}

/// The requests of the attempt `c.attempt` is set to.
fn requests(c: &mut Compiler, spec: &TaskSpec, task_span: &Range<usize>) -> Option<Vec<Resources>> {
    let own = Request {
        cpus: spec.cpus.as_ref(),
        gpus: spec.gpus.as_ref(),
        memory: spec.memory.as_ref(),
        resources: spec.resources.as_ref(),
        time_request: spec.time_request.as_ref(),
    };
    let Some(variants) = &spec.variants else {
        let r = request(c, &own)?;
        check_fits(c, std::slice::from_ref(&r), task_span);
        return Some(vec![r]);
    };
    if variants.value.is_empty() {
        c.error(
            Diagnostic::new(Code::CompileEmptyVariants, "`variants` is empty")
                .at(variants.span.clone(), "no variants")
                .help("add at least one [[tasks.variants]] table, or remove `variants`"),
        );
        return None;
    }
    let mut out = Vec::new();
    let mut ok = true;
    for v in &variants.value {
        let v = &v.value;
        let req = Request {
            cpus: v.cpus.as_ref().or(own.cpus),
            gpus: v.gpus.as_ref().or(own.gpus),
            memory: v.memory.as_ref().or(own.memory),
            resources: v.resources.as_ref().or(own.resources),
            time_request: v.time_request.as_ref().or(own.time_request),
        };
        match request(c, &req) {
            Some(r) => out.push(r),
            None => ok = false,
        }
    }
    if ok {
        check_fits(c, &out, &variants.span);
    }
    ok.then_some(out)
}

fn request(c: &mut Compiler, r: &Request) -> Option<Resources> {
    let mut ok = true;
    let mut amount = |c: &mut Compiler, q: Option<&Sp<Quantity>>, key: &str, default: Amount, indexed: bool| {
        let Some(q) = q else { return default };
        match c.quantity(
            q,
            key,
            amount_of,
            |s| amount_of(s.trim().parse::<f64>().map_err(|_| format!("`{s}` is not a number"))?),
            &format!("`{key}` takes a non-negative number, e.g. 2 or 0.25"),
        ) {
            Some(a) if indexed && a.0 > Amount::SCALE && !a.is_whole() => {
                c.error(
                    Diagnostic::new(Code::CompileImpossibleResources, format!("`{key} = {a}` cannot be satisfied"))
                        .at(q.span.clone(), "fraction above one")
                        .help(format!(
                            "a fraction of a device shares one device; ask for a whole number of {key} or less than one"
                        )),
                );
                ok = false;
                default
            }
            Some(a) => a,
            None => {
                ok = false;
                default
            }
        }
    };
    let cpus = amount(c, r.cpus, "cpus", Resources::DEFAULT_CPUS, false);
    let gpus = amount(c, r.gpus, "gpus", Amount::ZERO, true);
    let mut custom = BTreeMap::new();
    if let Some(res) = r.resources {
        for (name, q) in &res.value {
            let a = amount(c, Some(q), name, Amount::ZERO, false);
            custom.insert(name.clone(), a);
        }
    }
    let memory = match r.memory {
        None => 0,
        Some(q) => c.quantity(q, "memory", mib_to_bytes, parse_size, SIZE_HELP).unwrap_or_else(|| {
            ok = false;
            0
        }),
    };
    let time_request = match r.time_request {
        None => None,
        Some(q) => match duration(c, q, "time_request") {
            Some(d) => Some(d),
            None => {
                ok = false;
                None
            }
        },
    };
    ok.then_some(Resources { cpus, gpus, memory, custom, time_request })
}

fn amount_of(n: f64) -> Result<Amount, String> {
    Amount::from_f64(n)
        .ok_or_else(|| if n < 0.0 { format!("{n} must not be negative") } else { format!("{n} is not a valid amount") })
}

/// A duration key in whole seconds.
pub fn duration(c: &mut Compiler, q: &Sp<Quantity>, key: &str) -> Option<u64> {
    let secs = |n: f64| {
        if n.is_finite() && n >= 0.0 { Ok(n.ceil() as u64) } else { Err(format!("{n} is not a duration")) }
    };
    c.quantity(q, key, secs, parse_duration, DURATION_HELP)
}

/// Reports when no variant fits the worker described in the options, in
/// the scheduler's words ([`crate::resources::Capacity`]).
fn check_fits(c: &mut Compiler, variants: &[Resources], span: &Range<usize>) {
    let Some(worker) = &c.options.worker else { return };
    let shortfalls: Option<Vec<Shortfall>> = variants.iter().map(|v| worker.shortfall(v)).collect();
    let Some(shortfalls) = shortfalls.filter(|s| !s.is_empty()) else { return };
    let message = match shortfalls.as_slice() {
        [only] => format!("the request {}", only.against(LARGEST)),
        all => no_variant_fits(all, LARGEST),
    };
    let message = match c.attempt {
        Some(attempt) if attempt > 0 => format!("attempt {attempt}: {message}"),
        _ => message,
    };
    c.error(
        Diagnostic::new(Code::CompileImpossibleResources, message)
            .at(span.clone(), "cannot fit on any worker")
            .help("lower the request, add a smaller variant, or describe a bigger worker (--cpus, --gpus, --memory, --resource)"),
    );
}
