//! The outbox: what is kept, carried, sent again and let go.

use super::*;
use crate::ir::GroupId;
use crate::runtime::protocol::outcome::{Outcome, Status};

fn t(i: u64) -> TaskId {
    TaskId::new(GroupId(0), i)
}

fn outbox() -> Outbox {
    Outbox::new(Arc::new(OutputBudget::new(1 << 20)))
}

/// Job `task` (attempt `attempt`, labelled `label`, on CPU `task`) starts.
fn start(outbox: &mut Outbox, task: TaskId, attempt: u32, label: &str) {
    let job = Carried { attempt, label: label.into(), cpus: vec![task.instance as u32], gpus: Vec::new() };
    outbox.carry(task, job);
}

fn carried(task: TaskId, attempt: u32, label: &str, finished: bool) -> CarriedTask {
    let (cpus, gpus) = (vec![task.instance as u32], Vec::new());
    CarriedTask { task, attempt, label: label.into(), finished, cpus, gpus }
}

fn finished(task: TaskId, attempt: u32) -> ToCoordinator {
    ToCoordinator::Finished { task, attempt, outcome: Outcome::instant(Status::Succeeded) }
}

fn output(task: TaskId, attempt: u32, data: &[u8]) -> ToCoordinator {
    out(task, attempt, OutputStream::Stdout, data)
}

fn out(task: TaskId, attempt: u32, stream: OutputStream, data: &[u8]) -> ToCoordinator {
    ToCoordinator::Output(OutputRecord { task, attempt, stream, time_us: 1, data: data.to_vec() })
}

/// What the queue holds of output, as text.
fn texts<'a>(batch: impl IntoIterator<Item = &'a ToCoordinator>) -> Vec<String> {
    batch
        .into_iter()
        .filter_map(|msg| match msg {
            ToCoordinator::Output(r) => Some(format!("{}:{}", r.stream.as_str(), String::from_utf8_lossy(&r.data))),
            _ => None,
        })
        .collect()
}

#[test]
fn a_failed_batch_is_sent_again_first_and_its_jobs_stay_carried() {
    let mut outbox = outbox();
    start(&mut outbox, t(0), 0, "a[0]");
    start(&mut outbox, t(1), 2, "a[1]");
    outbox.push(output(t(0), 0, b"before the loss\n"));
    outbox.push(finished(t(0), 0));
    let batch = outbox.take_batch();
    assert_eq!(batch.len(), 2);
    // The connection drops: the batch goes back, and more comes meanwhile.
    outbox.push(output(t(1), 2, b"after the loss\n"));
    outbox.put_back(batch);
    assert_eq!(outbox.carried(), [carried(t(0), 0, "a[0]", true), carried(t(1), 2, "a[1]", false)]);
    let again = outbox.take_batch();
    assert_eq!(again, [output(t(0), 0, b"before the loss\n"), finished(t(0), 0), output(t(1), 2, b"after the loss\n")]);
    outbox.sent(again, 3, Instant::now());
    assert!(outbox.is_empty());
    assert_eq!(outbox.carried().len(), 1, "a delivered result ends its job here");
}

#[test]
fn a_result_delivered_just_before_a_loss_is_carried_and_sent_again() {
    let mut outbox = outbox();
    let start_at = Instant::now();
    start(&mut outbox, t(0), 0, "a[0]");
    start(&mut outbox, t(1), 0, "a[1]");
    outbox.push(finished(t(0), 0));
    let batch = outbox.take_batch();
    outbox.sent(batch, 1, start_at);
    outbox.push(finished(t(1), 0));
    let batch = outbox.take_batch();
    outbox.sent(batch, 1, start_at + RECENT);
    assert!(outbox.carried().is_empty() && outbox.is_empty());
    // The connection drops just after: the results of the last RECENT come back.
    outbox.lost(start_at + RECENT + Duration::from_millis(1));
    assert_eq!(outbox.carried(), [carried(t(1), 0, "a[1]", true)]);
    assert_eq!(outbox.take_batch(), [finished(t(1), 0)]);
    outbox.lost(start_at + RECENT * 3);
    assert!(outbox.is_empty(), "kept once");
}

#[test]
fn output_delivered_just_before_a_loss_is_sent_again_less_what_the_run_has() {
    let budget = Arc::new(OutputBudget::new(1 << 20));
    let mut outbox = Outbox::new(budget.clone());
    let now = Instant::now();
    start(&mut outbox, t(0), 0, "a[0]");
    start(&mut outbox, t(1), 0, "a[1]");
    for msg in [output(t(0), 0, b"one\n"), output(t(1), 0, b"other\n"), output(t(0), 0, b"two\n")] {
        budget.add(output_len(&msg));
        outbox.push(msg);
    }
    let batch = outbox.take_batch();
    outbox.sent(batch, 3, now);
    assert_eq!(budget.held(), 0, "delivered output is kept, not held");
    budget.add(8);
    outbox.push(out(t(0), 0, OutputStream::Stderr, b"warning\n"));
    outbox.push(output(t(0), 0, b"three\n"));
    budget.add(6);
    outbox.lost(now + Duration::from_secs(1));
    assert_eq!(
        texts(&outbox.queue),
        ["stdout:one\n", "stdout:other\n", "stdout:two\n", "stderr:warning\n", "stdout:three\n"]
    );
    // The resumed run has "one\ntw" of a[0]'s stdout and nothing of its
    // stderr; it did not adopt a[1], which is forgotten.
    outbox.forget(t(1));
    outbox.resume(&[StoredOutput { task: t(0), attempt: 0, stdout: 6, stderr: 0 }]);
    assert_eq!(texts(&outbox.take_batch()), ["stdout:o\n", "stderr:warning\n", "stdout:three\n"]);
    assert_eq!(budget.held(), 2 + 8 + 6, "what was dropped is no longer held");
}

#[test]
fn output_the_run_lacks_and_the_worker_no_longer_keeps_is_said_lost() {
    let mut outbox = outbox();
    start(&mut outbox, t(0), 0, "a[0]");
    outbox.push(output(t(0), 0, b"0123456789"));
    outbox.push(output(t(0), 0, b"abc"));
    let batch = outbox.take_batch();
    let long_ago = Instant::now();
    outbox.sent(batch, 1, long_ago);
    outbox.lost(long_ago + RECENT * 2);
    outbox.resume(&[StoredOutput { task: t(0), attempt: 0, stdout: 4, stderr: 0 }]);
    assert_eq!(
        texts(&outbox.take_batch()),
        [
            "system:flow worker: 6 bytes of this attempt's stdout are lost: its coordinator was killed before \
             writing them, and the worker no longer kept them\n",
            "stdout:abc"
        ]
    );
}

#[test]
fn delivered_output_is_let_go_first_when_the_budget_is_reached() {
    let budget = Arc::new(OutputBudget::new(10));
    let mut outbox = Outbox::new(budget.clone());
    start(&mut outbox, t(0), 0, "a[0]");
    for data in [b"12345", b"67890"] {
        budget.add(5);
        outbox.push(output(t(0), 0, data));
    }
    let batch = outbox.take_batch();
    let now = Instant::now();
    outbox.sent(batch, 2, now);
    assert_eq!(outbox.recent_bytes, 10);
    budget.add(4);
    outbox.push(output(t(0), 0, b"more"));
    let batch = outbox.take_batch();
    outbox.put_back(batch);
    outbox.sent(Vec::new(), 0, now);
    assert_eq!(outbox.recent_bytes, 5, "the oldest chunk went");
    outbox.lost(now);
    assert_eq!(texts(&outbox.queue), ["stdout:67890", "stdout:more"]);
    assert_eq!(budget.held(), 9);
}

#[test]
fn what_is_written_after_the_loss_was_found_counts_as_not_delivered() {
    let mut outbox = outbox();
    start(&mut outbox, t(0), 0, "a[0]");
    outbox.push(output(t(0), 0, b"in flight"));
    outbox.push(finished(t(0), 0));
    let batch = outbox.take_batch();
    // The worker finds the connection lost while the writer still writes into it.
    outbox.lost(Instant::now());
    assert!(outbox.is_down());
    outbox.sent(batch, 2, Instant::now());
    assert_eq!(outbox.carried(), [carried(t(0), 0, "a[0]", true)]);
    outbox.reconnected();
    assert!(!outbox.is_down());
    assert_eq!(outbox.take_batch(), [output(t(0), 0, b"in flight"), finished(t(0), 0)]);
}

#[test]
fn what_was_not_sent_of_a_batch_stays_in_order() {
    let mut outbox = outbox();
    for i in 0..3 {
        outbox.push(output(t(i), 0, b"x"));
    }
    let batch = outbox.take_batch();
    outbox.sent(batch, 1, Instant::now());
    assert_eq!(outbox.take_batch(), [output(t(1), 0, b"x"), output(t(2), 0, b"x")]);
}

#[test]
fn a_forgotten_job_says_nothing_more_until_it_starts_again() {
    let mut outbox = outbox();
    start(&mut outbox, t(0), 1, "a[0]");
    outbox.push(output(t(0), 1, b"old"));
    outbox.push(ToCoordinator::Heartbeat);
    let in_flight = vec![output(t(0), 1, b"in flight")];
    assert_eq!(outbox.forget(t(0)), Some(1));
    assert_eq!(outbox.forget(t(0)), None, "forgotten once");
    outbox.put_back(in_flight);
    outbox.push(finished(t(0), 1));
    assert_eq!(outbox.take_batch(), [ToCoordinator::Heartbeat]);
    assert!(outbox.carried().is_empty());
    // Sent again in the resumed run as the same attempt: it speaks again.
    start(&mut outbox, t(0), 1, "a[0]");
    outbox.push(finished(t(0), 1));
    assert_eq!(outbox.take_batch().len(), 1);
}

#[test]
fn a_batch_holds_about_as_much_output_as_one_write() {
    let mut outbox = outbox();
    let chunk = vec![b'x'; 100 << 10];
    for _ in 0..5 {
        outbox.push(output(t(0), 0, &chunk));
    }
    assert_eq!(outbox.take_batch().len(), 3, "300 KiB reaches the limit");
    assert_eq!(outbox.take_batch().len(), 2);
    start(&mut outbox, t(5), 0, "b");
    outbox.drop_job(t(5));
    assert!(outbox.carried().is_empty());
}

#[test]
fn a_fenced_worker_keeps_only_the_results_of_tasks_that_ended_on_their_own() {
    // Issue 26: what the guard killed while the worker was paused is no result.
    let mut outbox = outbox();
    for i in 0..4 {
        start(&mut outbox, t(i), 0, &format!("a[{i}]"));
    }
    outbox.push(finished(t(0), 0));
    let failed = Status::failed(Some(3), None, "exit code 3".into());
    outbox.push(ToCoordinator::Finished { task: t(1), attempt: 0, outcome: Outcome::instant(failed) });
    let killed = Status::failed(None, Some(15), "killed by SIGTERM".into());
    outbox.push(ToCoordinator::Finished { task: t(2), attempt: 0, outcome: Outcome::instant(killed) });
    assert_eq!(outbox.without_result(), [t(2), t(3)], "killed, and still running");
}
