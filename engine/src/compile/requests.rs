//! Resource requests: a task's `cpus`/`gpus`/`memory`/`resources`/`time_request`
//! and its `variants`, turned into [`Resources`] and checked for possibility.

use std::collections::BTreeMap;
use std::ops::Range;

use super::ctx::Ctx;
use super::value_error::ValueError;
use crate::diag::{Code, Diagnostic};
use crate::ir::{Amount, KeySpans, Resources};
use crate::resources::{Holder, LARGEST, Shortfall, Unfit, no_variant_fits};
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
    ctx: &mut Ctx,
    spec: &TaskSpec,
    task_span: &Range<usize>,
    retries: u32,
) -> Option<(Vec<Resources>, Vec<Vec<Resources>>)> {
    let first = requests(ctx, spec, task_span, 0);
    let mut later = Vec::new();
    if first.is_some() && names_attempt(spec) {
        for attempt in 1..=retries {
            match requests(ctx, spec, task_span, attempt) {
                Some(v) => later.push(v),
                None => break,
            }
        }
    }
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

/// The requests of attempt `attempt` (0 for the first).
fn requests(ctx: &mut Ctx, spec: &TaskSpec, task_span: &Range<usize>, attempt: u32) -> Option<Vec<Resources>> {
    let own = Request {
        cpus: spec.cpus.as_ref(),
        gpus: spec.gpus.as_ref(),
        memory: spec.memory.as_ref(),
        resources: spec.resources.as_ref(),
        time_request: spec.time_request.as_ref(),
    };
    let Some(variants) = &spec.variants else {
        let r = request(ctx, &own, attempt)?;
        check_fits(ctx, std::slice::from_ref(&r), task_span, Some(&key_spans(spec)), attempt);
        return Some(vec![r]);
    };
    if variants.value.is_empty() {
        ctx.report(
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
        match request(ctx, &req, attempt) {
            Some(r) => out.push(r),
            None => ok = false,
        }
    }
    if ok {
        check_fits(ctx, &out, &variants.span, None, attempt);
    }
    ok.then_some(out)
}

/// One request of attempt `attempt`, or `None` after reporting what is wrong with it.
fn request(ctx: &mut Ctx, r: &Request, attempt: u32) -> Option<Resources> {
    let mut ok = true;
    let mut amount = |ctx: &mut Ctx, q: Option<&Sp<Quantity>>, key: &str, default: Amount, indexed: bool| {
        let Some(q) = q else { return default };
        match ctx.quantity(
            q,
            key,
            Some(attempt),
            amount_of,
            |s| amount_of(s.trim().parse::<f64>().map_err(|_| ValueError::NotNumber(s.to_owned()))?),
            &format!("`{key}` takes a non-negative number, e.g. 2 or 0.25"),
        ) {
            Some(a) if indexed && a.0 > Amount::SCALE && !a.is_whole() => {
                ctx.report(
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
    let cpus = amount(ctx, r.cpus, "cpus", Resources::DEFAULT_CPUS, false);
    let gpus = amount(ctx, r.gpus, "gpus", Amount::ZERO, true);
    let mut custom = BTreeMap::new();
    if let Some(res) = r.resources {
        for (name, q) in &res.value {
            let a = amount(ctx, Some(q), name, Amount::ZERO, false);
            custom.insert(name.clone(), a);
        }
    }
    let memory = match r.memory {
        None => 0,
        Some(q) => ctx
            .quantity(q, "memory", Some(attempt), |n| Ok(mib_to_bytes(n)?), |s| Ok(parse_size(s)?), SIZE_HELP)
            .unwrap_or_else(|| {
                ok = false;
                0
            }),
    };
    let time_request = match r.time_request {
        None => None,
        Some(q) => match duration(ctx, q, "time_request", Some(attempt)) {
            Some(d) => Some(d),
            None => {
                ok = false;
                None
            }
        },
    };
    ok.then_some(Resources { cpus, gpus, memory, custom, time_request })
}

fn amount_of(n: f64) -> Result<Amount, ValueError> {
    Amount::from_f64(n).ok_or(if n < 0.0 { ValueError::Negative(n) } else { ValueError::NotAmount(n) })
}

/// A duration key in whole seconds; `attempt` for a resource key rendered
/// per attempt, `None` for one worked out once for the task.
pub fn duration(ctx: &mut Ctx, q: &Sp<Quantity>, key: &str, attempt: Option<u32>) -> Option<u64> {
    let secs = |n: f64| {
        if n.is_finite() && n >= 0.0 { Ok(n.ceil() as u64) } else { Err(ValueError::NotSeconds(n)) }
    };
    ctx.quantity(q, key, attempt, secs, |s| Ok(parse_duration(s)?), DURATION_HELP)
}

/// Reports when no variant fits the worker described in the options, in
/// the scheduler's words ([`crate::resources::Capacity`]); a retry's
/// problem names its attempt. A single request that is short of one
/// resource is pointed at that resource's key (`memory = …`), else at
/// `span`.
fn check_fits(ctx: &mut Ctx, variants: &[Resources], span: &Range<usize>, keys: Option<&KeySpans>, attempt: u32) {
    let Some(worker) = &ctx.options().worker else { return };
    let shortfalls: Option<Vec<Shortfall>> = variants.iter().map(|v| worker.shortfall(v)).collect();
    let Some(shortfalls) = shortfalls.filter(|s| !s.is_empty()) else { return };
    let message = match shortfalls.as_slice() {
        [only] => format!("the request {}", only.against(LARGEST)),
        all => no_variant_fits(all, LARGEST),
    };
    let key = match (shortfalls.as_slice(), keys) {
        ([only], Some(keys)) => only.key(keys),
        _ => None,
    };
    let span = key.unwrap_or(span);
    let message = if attempt > 0 { format!("attempt {attempt}: {message}") } else { message };
    let why = Unfit::Short { shortfalls, holder: Holder::Largest };
    ctx.report(
        Diagnostic::new(Code::CompileImpossibleResources, message).at(span.clone(), why.label()).help(why.help()),
    );
}

/// Where the task's own resource and container keys are written
/// ([`KeySpans`]); a task with `variants` has only `nodes` and `container` there.
pub fn key_spans(spec: &TaskSpec) -> KeySpans {
    let span = |q: &Option<Sp<Quantity>>| q.as_ref().map(|q| q.span.clone());
    let (nodes, container) = (span(&spec.nodes), spec.container.as_ref().map(|c| c.span.clone()));
    if spec.variants.is_some() {
        return KeySpans { nodes, container, ..KeySpans::default() };
    }
    let resources = spec.resources.as_ref().map(|r| r.value.iter().map(|(k, q)| (k.clone(), q.span.clone())));
    KeySpans {
        cpus: span(&spec.cpus),
        gpus: span(&spec.gpus),
        memory: span(&spec.memory),
        resources: resources.into_iter().flatten().collect(),
        nodes,
        container,
    }
}

/// Reports a task whose `nodes` asks for more workers than the one the
/// options describe, in the run's words ([`Unfit::TooFewWorkers`]), when
/// one of its variants fits that worker (when none does, [`check_fits`]
/// has said so): `flow check --memory …` refuses what `flow run` would.
pub fn check_nodes(ctx: &mut Ctx, variants: &[Resources], nodes: Option<u64>, key: Option<&Sp<Quantity>>) {
    let (Some(worker), Some(key), Some(needs)) = (&ctx.options().worker, key, nodes) else { return };
    if needs <= 1 || variants.iter().all(|v| worker.shortfall(v).is_some()) {
        return;
    }
    let why = Unfit::TooFewWorkers { needs, fitting: 1, workers: 1 };
    ctx.report(
        Diagnostic::new(Code::CompileImpossibleResources, format!("the task {why}"))
            .at(key.span.clone(), why.label())
            .help(why.help()),
    );
}
