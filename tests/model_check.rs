//! The model check of reruns (issue 18): generated workflows and edit
//! sequences, each rerun compared with an oracle. After every run:
//!
//! - *correct*: every output is byte for byte what a clean run of the same
//!   files writes in a fresh directory, and no output of an instance that no
//!   longer exists is left where a glob would read it;
//! - *minimal*: the instances that executed (the execution log every
//!   command appends to) are exactly those the oracle names;
//! - *predicted*: `flow plan --why --json` before the run, and `flow run
//!   --dry-exec` in a copy, named the same.
//!
//! The oracle: an instance is skipped iff an earlier success of the same
//! task had the same key (what its command printed as the material of its
//! fingerprint in the clean run), every output that success wrote still
//! has its bytes, and no attempt of the instance started since it last
//! finished without succeeding (a taint is per instance, whatever the key,
//! as in flow).
//!
//! Failures are part of the files: `b` may fail on what it reads (and
//! logs so), with or without `continue_on_failure`, and a task `h` may wait
//! for `b` with `on = "failure"` or `"always"`, whole or element-wise. The
//! clean run then fails the same way, and `failures::Fate` checks it by the
//! rules of `after`: what waits for all of `b` to succeed is cancelled
//! unless the failure is ignored; `h` runs on a failure iff one of the `b`
//! instances it waits for failed, `always` whatever happened, and is told
//! exactly which failed; the run exits 1 iff a failure is not ignored. A
//! rerun must then exit the same, execute every failing instance again and
//! every `h` that reacts to a failure (never from the cache), and otherwise
//! skip by the rule above. *correct* holds for what ran or was unchanged;
//! what a failure cancelled keeps its files from earlier runs.
//!
//! `plan --why` and `--dry-exec` foresee no failure (see the guide page on
//! failures), so with one they are bounds, not equal: what a failure
//! cancels they count as would-run (an upper bound, checked as the
//! instances that wait for an upstream that runs), and a failure handler
//! they never count (a lower bound: they must name none of it). Runs with
//! an injected failure (the edit `Fail`) or a `kill -9` execute a subset
//! of the oracle's instances, `h` aside, which reacts to a failure the
//! oracle does not know.
//!
//! `FLOW_MODEL_CASES` sets the number of sequences (default 200),
//! `FLOW_MODEL_SEED` the seed, `FLOW_MODEL_SKIP=stale,plan,dry` leaves
//! checks (or features of the grammar, `workflows::Draw`) out to look past
//! a known defect, and `FLOW_MODEL_DRAW` switches on the rules and checks
//! that find defects not fixed yet (`workflows::DEFAULT_OFF`, none now). Failing cases are kept in
//! `tests/model_check.proptest-regressions` and replayed first.
//! `coverage` holds the grammar to the keys of the schema and the options
//! of `flow run`. `edits` draws the changes between runs, among them edits
//! of the workflow text (tasks renamed or reordered, TOML↔YAML) and of an
//! included file (`included`).

mod coverage;
mod edits;
mod failures;
mod harness;
mod included;
mod regressions;
mod runs;
mod sources;
mod trees;
mod workflows;

use proptest::test_runner::{Config, FileFailurePersistence, RngAlgorithm, TestCaseError, TestRng, TestRunner};

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Runs `cases` sequences from `seed`; two halves run side by side, as two tests.
fn model_check(part: u64) {
    let cases = env_number("FLOW_MODEL_CASES", 200).div_ceil(2);
    let seed = env_number("FLOW_MODEL_SEED", 18) * 2 + part;
    let config = Config {
        cases: cases as u32,
        max_shrink_iters: env_number("FLOW_MODEL_SHRINK", 200) as u32,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("tests/model_check.proptest-regressions"))),
        source_file: Some(file!()),
        ..Config::default()
    };
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes));
    let result = runner.run(&edits::sequence(3..=5, &workflows::Draw::from_env()), |(shape, edits)| {
        harness::check_sequence(&shape, &edits).map_err(|e| {
            TestCaseError::fail(format!(
                "{e}\n--- workflow.toml:\n{}--- {shape:?}\n--- edits: {edits:?}",
                shape.workflow()
            ))
        })
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn reruns_match_the_oracle() {
    model_check(0);
}

#[test]
fn reruns_match_the_oracle_second_half() {
    model_check(1);
}

/// The edits of the workflow text and of an included file, on a shape
/// with every task: each holds the oracle in a fixed sequence too.
#[test]
fn edits_of_the_workflow_text_and_an_included_file_match_the_oracle() {
    use edits::Edit::{IncludeVar, Included, Namespace, Rename, Reorder, Syntax};
    let shape = handled_shape();
    let edits = [
        Namespace,
        Reorder,
        Rename(0),
        Included(0, 1),
        IncludeVar(1),
        Included(1, 1),
        Included(2, 1),
        Syntax,
        Rename(1),
        Namespace,
        Rename(0),
    ];
    if let Err(e) = harness::check_sequence(&shape, &edits) {
        panic!("{e}\n--- workflow.toml:\n{}", shape.workflow());
    }
}

/// A shape with most tasks: `a` to `e`, a handler `h` and an include.
fn handled_shape() -> workflows::Shape {
    workflows::Shape {
        source: workflows::Source::Range,
        template: false,
        variants: false,
        cwd: false,
        script: None,
        common: true,
        mirror: Some(true),
        gated: false,
        combine: true,
        dynamic: true,
        nested: false,
        fragile: Some(false),
        handler: Some(workflows::Handler { always: true, each: false }),
        defaults: false,
        finally: false,
        streams: false,
        grows: false,
        untracked: false,
        vars_file: false,
        argv: false,
        stdin: false,
        setup: false,
        append: false,
        skips: false,
        include: Some(true),
        tree: true,
        gpus: false,
        licensed: false,
    }
}

/// A failing task that leaves part of its output, and a failure handler
/// with an output, through failures added, fixed, and made to vanish.
#[test]
fn partial_outputs_of_failures_and_a_handler_s_output_match_the_oracle() {
    use edits::Edit::{Nothing, Poison, SetN};
    let mut shape = handled_shape();
    for (always, each, ignored) in [(false, true, true), (false, false, false), (true, true, false)] {
        shape.handler = Some(workflows::Handler { always, each });
        shape.fragile = Some(ignored);
        let edits = [Poison(1), Poison(1), Poison(2), SetN(1), Nothing];
        if let Err(e) = harness::check_sequence(&shape, &edits) {
            panic!("{e}\n--- workflow.toml:\n{}", shape.workflow());
        }
    }
}

/// A symlink input retargeted (once to a file with the same contents),
/// and a directory input whose file, link and entries change.
#[test]
fn links_and_a_directory_input_match_the_oracle() {
    use edits::Edit::{DataExtra, DataFile, Move, Retarget, Target, Touch};
    let edits = [Retarget(0), Target(0, 1), Retarget(0), DataExtra, DataFile(1), Retarget(1), Touch, Move, DataExtra];
    if let Err(e) = harness::check_sequence(&handled_shape(), &edits) {
        panic!("{e}\n--- workflow.toml:\n{}", handled_shape().workflow());
    }
}

/// Runs on a remote worker (`flow run --listen --no-local-worker` and
/// `flow worker`) find the results of local runs, and the other way round.
#[test]
fn runs_on_a_remote_worker_match_the_oracle() {
    use edits::Edit::{Common, Nothing, Remote, SetN};
    let edits = [Remote(false), Common(1), Remote(true), Nothing, SetN(2), Remote(false)];
    if let Err(e) = harness::check_sequence(&handled_shape(), &edits) {
        panic!("{e}\n--- workflow.toml:\n{}", handled_shape().workflow());
    }
}

/// The options of `flow run` that describe the workers (`--gpus`,
/// `--memory`, `--resource`, `--profile`) and treat failures and stale
/// outputs (`--keep-going`, `--max-fails`, `--keep-stale-outputs`), with a
/// custom resource and a request that grows with the attempt: a task no
/// worker can hold is refused and changes nothing, and what a run with an
/// option left behind the next run puts right.
#[test]
fn options_of_flow_run_match_the_oracle() {
    use edits::Edit::{Both, Licence, Memory, Nothing, Poison, Policy, Remote, SetN};
    use edits::Policy::{KeepGoing, KeepStale, MaxFails};
    let mut shape = handled_shape();
    shape.licensed = true;
    let edits = [
        Licence(2),
        Policy(KeepGoing),
        Poison(1),
        Policy(MaxFails(1)),
        Poison(1),
        Licence(0),
        Memory(2),
        Licence(1),
        Policy(MaxFails(50)),
        Both(Box::new(SetN(2)), Box::new(Policy(KeepStale))),
        Nothing,
        Both(Box::new(SetN(3)), Box::new(Remote(true))),
        Memory(1),
    ];
    for (grows, variants) in [(true, false), (false, true)] {
        shape.grows = grows;
        shape.variants = variants;
        shape.gpus = variants;
        if let Err(e) = harness::check_sequence(&shape, &edits) {
            panic!("{e}\n--- workflow.toml:\n{}", shape.workflow());
        }
    }
}
