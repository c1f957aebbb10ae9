# A one-node Slurm cluster on localhost for the tests, from Debian's slurm-wlm and munge: sourced by
# the test, it writes slurm.conf and a munge key into $CLUSTER (a temp folder), starts munged,
# slurmctld and slurmd in the foreground mode each under its own pid, waits for the node to be idle,
# and on exit (trap) stops them by pid and removes $CLUSTER. Exits 77 (CTest's skip) saying why when
# they cannot start. Needs: CLUSTER set to a temp folder of the caller's; root (slurmd runs jobs as
# their user). Exports SLURM_CONF, so that sbatch, squeue and scancel find this cluster. crash_node JOB
# takes the node down under a running job and brings it back (slurmd restarted).

skip() { echo "SKIP: $*" >&2; exit 77; }

for tool in munged mungekey slurmctld slurmd sbatch squeue sinfo scancel; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool not installed (Debian: apt-get install slurm-wlm munge)"
done
[ "$(id -u)" = 0 ] || skip "slurmd must run as root to start jobs (this is uid $(id -u))"

CLUSTER_PIDS=""
stop_cluster() {
  # Jobs first, while slurmd can still end them: a job's slurmstepd would outlive the daemons.
  if [ -n "$CLUSTER_PIDS" ] && [ -n "${SLURM_CONF:-}" ]; then
    scancel --quiet --partition=debug 2>/dev/null
    for _ in $(seq 40); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.25; done
  fi
  for pid in $CLUSTER_PIDS; do kill "$pid" 2>/dev/null; done
  for pid in $CLUSTER_PIDS; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null
  done
  CLUSTER_PIDS=""
}
trap 'stop_cluster; rm -rf "$CLUSTER"' EXIT
trap 'exit 143' TERM INT HUP

# Ports of this run's own (tests of two checkouts may run at once).
base=$((20000 + ($$ % 5000) * 2))
mkdir -p "$CLUSTER/state" "$CLUSTER/spool" "$CLUSTER/log" "$CLUSTER/munge"
chmod 711 "$CLUSTER/munge"
mungekey --create --keyfile "$CLUSTER/munge/munge.key" >/dev/null 2>&1 ||
  dd if=/dev/urandom of="$CLUSTER/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$CLUSTER/munge/munge.key"
munged --foreground --force --key-file "$CLUSTER/munge/munge.key" --socket "$CLUSTER/munge/socket" \
  --pid-file "$CLUSTER/munge/munged.pid" --log-file "$CLUSTER/log/munged.log" --seed-file "$CLUSTER/munge/seed" \
  >"$CLUSTER/log/munged.out" 2>&1 &
CLUSTER_PIDS="$CLUSTER_PIDS $!"
for _ in $(seq 50); do [ -S "$CLUSTER/munge/socket" ] && break; sleep 0.1; done
[ -S "$CLUSTER/munge/socket" ] || skip "munged did not start: $(tail -3 "$CLUSTER/log/munged.log" 2>/dev/null)"

cat > "$CLUSTER/slurm.conf" <<CONF
ClusterName=stitchtest
SlurmctldHost=localhost
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$CLUSTER/munge/socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
StateSaveLocation=$CLUSTER/state
SlurmdSpoolDir=$CLUSTER/spool
SlurmctldPidFile=$CLUSTER/slurmctld.pid
SlurmdPidFile=$CLUSTER/slurmd.pid
SlurmctldLogFile=$CLUSTER/log/slurmctld.log
SlurmdLogFile=$CLUSTER/log/slurmd.log
SlurmctldTimeout=30
SlurmdTimeout=30
MinJobAge=600
KillWait=5
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Default=YES Nodes=localhost MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$CLUSTER/slurm.conf"

slurmctld -D -i -f "$SLURM_CONF" >"$CLUSTER/log/slurmctld.out" 2>&1 &
CLUSTER_PIDS="$CLUSTER_PIDS $!"
start_slurmd() {
  slurmd -D -N localhost -f "$SLURM_CONF" >>"$CLUSTER/log/slurmd.out" 2>&1 &
  SLURMD_PID=$!
  CLUSTER_PIDS="$CLUSTER_PIDS $SLURMD_PID"
}
start_slurmd

# The node fails under a running job and comes back: slurmd and the job's processes (its slurmstepd and
# what it started) die at once, slurmctld is told the node is down, and slurmd starts again; returns
# when the node is idle. $1: the job's id (JOBID_TASK or the raw id).
crash_node() {
  local raw pids i
  raw=$(squeue -h -j "$1" -o %A | head -1)
  [ -n "$raw" ] || return 1
  pids="$(scontrol listpids "$raw" 2>/dev/null | awk 'NR > 1 && $1 ~ /^[0-9]+$/ {print $1}') $(pgrep -f "^slurmstepd: \[$raw\.")"
  kill -9 "$SLURMD_PID" $pids 2>/dev/null
  wait "$SLURMD_PID" 2>/dev/null
  CLUSTER_PIDS=$(echo "$CLUSTER_PIDS" | tr ' ' '\n' | grep -vx "$SLURMD_PID" | tr '\n' ' ')
  scontrol update nodename=localhost state=down reason="test: node crashed" || return 1
  start_slurmd
  for i in $(seq 120); do
    case "$(sinfo -h -n localhost -o %T 2>/dev/null)" in idle* | mixed* | alloc*) return 0 ;; esac
    [ "$i" = 20 ] && scontrol update nodename=localhost state=resume 2>/dev/null  # if ReturnToService did not
    sleep 0.5
  done
  return 1
}

idle=""
for _ in $(seq 60); do
  state=$(sinfo -h -n localhost -o %T 2>/dev/null)
  case "$state" in idle*) idle=1; break ;; esac
  sleep 0.5
done
if [ -z "$idle" ]; then
  echo "slurmctld: $(tail -5 "$CLUSTER/log/slurmctld.log" "$CLUSTER/log/slurmctld.out" 2>/dev/null)" >&2
  echo "slurmd: $(tail -5 "$CLUSTER/log/slurmd.log" "$CLUSTER/log/slurmd.out" 2>/dev/null)" >&2
  skip "the one-node cluster did not come up (node state: ${state:-none}); the daemons' logs are above"
fi
