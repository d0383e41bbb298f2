#!/usr/bin/env bash
# Starts a throw-away single-node Slurm on this machine for the tests that
# need one (tests/slurm.rs): munged, slurmctld and slurmd in the background
# (no systemd), all config, state, logs and pid files under one directory.
# Needs root (slurmd switches to the job owner's uid); installs Debian's
# Slurm packages when they are missing.
#
# stdout carries only `export` lines, so start it with
#     eval "$(.ci/slurm/start.sh)"
# and stop it with `.ci/slurm/stop.sh`. Progress and errors go to stderr.
# If the cluster is already up, it only prints the exports again.
#
# Environment:
#   FLOW_SLURM_DIR    state directory          [/tmp/flow-ci-slurm]
#   FLOW_SLURM_PORTS  slurmctld and slurmd     [6817 6818]
#   FLOW_SLURM_WAIT   seconds to wait for the node to be idle  [60]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${FLOW_SLURM_DIR:-/tmp/flow-ci-slurm}
read -r ctld_port slurmd_port <<<"${FLOW_SLURM_PORTS:-6817 6818}"
wait_s=${FLOW_SLURM_WAIT:-60}
conf=$dir/etc/slurm.conf
sock=$dir/munge/munge.socket
export PATH="$PATH:/usr/sbin:/sbin"

log() { echo "slurm: $*" >&2; }
die() { log "error: $*"; exit 1; }
exports() { echo "export SLURM_CONF='$conf'"; }

[ "$(id -u)" = 0 ] || die "must run as root (slurmd runs jobs as their owner)"

# alive NAME: the pid file names a live process started with our directory.
alive() {
    local pid
    pid=$(cat "$dir/run/$1.pid" 2>/dev/null) || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$dir/"
}
node_state() { SLURM_CONF=$conf sinfo -h -N -o '%T' 2>/dev/null | head -n1; }

if alive munged && alive slurmctld && alive slurmd && [ "$(node_state)" = idle ]; then
    log "already running (state in $dir)"
    exports
    exit 0
fi
FLOW_SLURM_DIR=$dir "$here/stop.sh" >&2 || true

missing=""
for program in munged slurmctld slurmd sbatch sinfo; do
    command -v "$program" >/dev/null || missing="$missing $program"
done
if [ -n "$missing" ]; then
    log "installing Slurm (missing:$missing)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update >&2
    apt-get install -y --no-install-recommends munge slurmctld slurmd slurm-client >&2
fi

for port in "$ctld_port" "$slurmd_port"; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        die "port $port is in use (another Slurm?); set FLOW_SLURM_PORTS=\"CTLD SLURMD\""
    fi
done

rm -rf "$dir/state" "$dir/spool" "$dir/run"  # no jobs of an earlier cluster
mkdir -p "$dir"/{etc,munge,state,spool,log,run}
chmod 755 "$dir" "$dir"/{etc,munge,state,spool,log,run}

node=$(hostname -s 2>/dev/null || hostname)
hardware=$(slurmd -C | head -n1)  # as slurmd itself detects it
cpus=$(sed -n 's/.* CPUs=\([0-9]*\).*/\1/p' <<<"$hardware")
memory=$(sed -n 's/.* RealMemory=\([0-9]*\).*/\1/p' <<<"$hardware")
[ -n "$cpus" ] && [ -n "$memory" ] || die "cannot read CPUs and memory from 'slurmd -C': $hardware"

# No cgroups (containers lack them): a job's processes are its process
# group. CPUs and memory are consumable, so small jobs share the node;
# what can never run is rejected at submission; no accounting daemon, so
# finished jobs stay visible to `scontrol show job` for MinJobAge seconds.
cat >"$conf" <<EOF
ClusterName=flowci
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
PlugStackConfig=$dir/etc/plugstack.conf
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
DefMemPerCPU=$((memory / cpus))
EnforcePartLimits=ALL
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.log
MinJobAge=600
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
KillWait=5
OverTimeLimit=0
InactiveLimit=0
ReturnToService=2
SlurmdTimeout=60
MessageTimeout=10
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
: >"$dir/etc/plugstack.conf"

[ -s "$dir/munge/munge.key" ] || dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$dir/munge/munge.key"
munged --force --socket="$sock" --key-file="$dir/munge/munge.key" --pid-file="$dir/run/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" ||
    die "munged did not start; see $dir/log/munged.log"

fail() {
    log "error: $*"
    for daemon in slurmctld slurmd; do
        grep -iE 'error|fatal' "$dir/log/$daemon.log" 2>/dev/null | tail -n 5 >&2 || true
    done
    FLOW_SLURM_DIR=$dir "$here/stop.sh" >&2 || true
    exit 1
}
slurmctld -f "$conf" || fail "slurmctld did not start"
slurmd -f "$conf" -N "$node" || fail "slurmd did not start"

deadline=$(($(date +%s) + wait_s))
until [ "$(node_state)" = idle ]; do
    alive slurmctld || fail "slurmctld exited"
    alive slurmd || fail "slurmd exited"
    [ "$(date +%s)" -lt "$deadline" ] || fail "the node is not idle after ${wait_s}s"
    sleep 0.5
done
log "up: node $node, $cpus CPUs, $memory MB, partition debug, state in $dir"
exports
