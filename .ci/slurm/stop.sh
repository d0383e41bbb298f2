#!/usr/bin/env bash
# Stops the Slurm that start.sh started in $FLOW_SLURM_DIR: cancels its
# jobs, then stops slurmd, slurmctld and munged by their pid files. Only
# processes started with that directory are signalled. Safe to run when
# nothing runs.
set -u

dir=${FLOW_SLURM_DIR:-/tmp/flow-ci-slurm}
conf=$dir/etc/slurm.conf
export PATH="$PATH:/usr/sbin:/sbin"

log() { echo "slurm: $*" >&2; }

# ours NAME: the pid in NAME's pid file, if it is a live process started with our directory.
ours() {
    local pid
    pid=$(cat "$dir/run/$1.pid" 2>/dev/null) || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$dir/" || return 1
    echo "$pid"
}

# running PID: the process exists and is not a zombie.
running() { [ -r "/proc/$1/stat" ] && [ "$(sed 's/.*) //' "/proc/$1/stat" | cut -c1)" != Z ]; }

# stop NAME...: SIGTERM, up to 10 s to end, then SIGKILL.
stop() {
    local name pid pids=""
    for name in "$@"; do
        pid=$(ours "$name") && { kill -TERM "$pid" 2>/dev/null; pids="$pids $pid"; }
        rm -f "$dir/run/$name.pid"
    done
    for _ in $(seq 1 40); do
        local alive=""
        for pid in $pids; do running "$pid" && alive="$alive $pid"; done
        [ -z "$alive" ] && return 0
        sleep 0.25
    done
    for pid in $pids; do running "$pid" && kill -KILL "$pid" 2>/dev/null; done
    log "killed$pids"
}

if ours slurmctld >/dev/null && [ -f "$conf" ]; then
    export SLURM_CONF=$conf
    jobs=$(squeue -h -o %A 2>/dev/null || true)
    if [ -n "$jobs" ]; then
        scancel $jobs 2>/dev/null || true
        for _ in $(seq 1 60); do
            [ -z "$(squeue -h -o %A 2>/dev/null)" ] && break
            sleep 0.5
        done
    fi
    # A job step may still be reporting to slurmctld after squeue is empty:
    # wait for job steps (never kill them) up to 30 s.
    for _ in $(seq 1 60); do
        grep -qlx slurmstepd /proc/[0-9]*/comm 2>/dev/null || break
        sleep 0.5
    done
fi
stop slurmd slurmctld
stop munged
exit 0
