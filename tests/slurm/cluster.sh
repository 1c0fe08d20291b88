#!/usr/bin/env bash
# A real one-node Slurm cluster (munged + slurmctld + slurmd) living entirely
# inside one folder, for tests that need a job engine.
#
#   tests/slurm/cluster.sh start DIR   # DIR: a fresh temporary folder
#   tests/slurm/cluster.sh stop DIR
#
# start prints one line, `export SLURM_CONF=DIR/slurm.conf`, for the caller to
# eval; with it set, sbatch/squeue/sinfo/scontrol/scancel talk to this cluster
# only. Exit 77 (the skip convention) when Slurm or munge is not installed or
# we are not root: the daemons are run as root so that no slurm user and no
# system munge are needed. Any other failure: reason and log tail on stderr,
# everything started is stopped again, exit 1.
#
# Nothing outside DIR is written or read beyond the binaries: a private munged
# with its own key and socket, free TCP ports picked at start, state, spool,
# pid and log files all in DIR. stop only signals processes whose environment
# carries this DIR's marker, so it never touches another cluster or a system
# Slurm.
set -euo pipefail

readonly START_TIMEOUT=${SLURM_FIXTURE_START_TIMEOUT:-30} # seconds
readonly STOP_TIMEOUT=${SLURM_FIXTURE_STOP_TIMEOUT:-15}   # seconds, per stage
# Every daemon we start gets this variable in its environment; slurmd passes it
# on to the slurmstepd it forks, so stop can find those too, and a pid file
# whose pid was reused by an unrelated process is recognised as stale.
readonly MARKER=NNBENCH_SLURM_FIXTURE

die() {
	echo "cluster.sh: $*" >&2
	exit 1
}

skip() {
	echo "cluster.sh: skipped: $*" >&2
	exit 77
}

usage() {
	echo "usage: $0 start|stop DIR" >&2
	exit 2
}

# True when PID is alive and was started by us for this DIR.
ours() {
	local pid=$1
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	grep -qzxF "$MARKER=$dir" "/proc/$pid/environ" 2>/dev/null
}

pid_from() {
	local file=$1
	[[ -s $file ]] && head -n1 "$file" | tr -dc '0-9'
}

# All live processes carrying our marker (daemons and any slurmstepd).
marked_pids() {
	local p
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		[[ $p == "$$" || $p == "$BASHPID" ]] && continue
		if ours "$p"; then echo "$p"; fi
	done
}

# Every descendant of the given pids (by parent pid), not the pids themselves.
descendants() {
	ps -eo pid=,ppid= | awk -v roots="$*" '
		BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) seen[r[i]] = 1 }
		{ parent[$1] = $2 }
		END {
			do {
				grew = 0
				for (p in parent)
					if (!(p in seen) && (parent[p] in seen)) { seen[p] = 1; out[p] = 1; grew = 1 }
			} while (grew)
			for (p in out) print p
		}'
}

# Alive and not a zombie (an init that does not reap would leave those).
running() {
	local state
	state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
	[[ -n $state && $state != Z ]]
}

# Wait until none of the given pids is alive; false on timeout.
wait_gone() {
	local deadline=$((SECONDS + STOP_TIMEOUT)) p alive
	while :; do
		alive=0
		for p in "$@"; do
			if running "$p"; then alive=1; fi
		done
		((alive)) || return 0
		((SECONDS < deadline)) || return 1
		sleep 0.2
	done
}

# TERM, wait, then KILL: the given pids only.
terminate() {
	(($# > 0)) || return 0
	kill -TERM "$@" 2>/dev/null || true
	if ! wait_gone "$@"; then
		echo "cluster.sh: $* ignored SIGTERM for ${STOP_TIMEOUT}s, sending SIGKILL" >&2
		kill -KILL "$@" 2>/dev/null || true
		wait_gone "$@" || echo "cluster.sh: could not kill $*" >&2
	fi
}

do_stop() {
	local ctld_pid slurmd_pid munged_pid ids deadline p pids kids
	ctld_pid=$(pid_from "$dir/slurmctld.pid" || true)
	slurmd_pid=$(pid_from "$dir/slurmd.pid" || true)
	munged_pid=$(pid_from "$dir/munged.pid" || true)

	# Stopping slurmd leaves running jobs' slurmstepd behind (it is meant to
	# survive slurmd restarts), so cancel the jobs first while the controller
	# can still do it.
	if [[ -n $ctld_pid ]] && ours "$ctld_pid" && [[ -f $dir/slurm.conf ]]; then
		export SLURM_CONF=$dir/slurm.conf
		ids=$(timeout 10 squeue -h -o %F 2>/dev/null | sort -u || true)
		if [[ -n $ids ]]; then
			# shellcheck disable=SC2086 # one job id per word
			timeout 10 scancel $ids >&2 2>/dev/null || true
			deadline=$((SECONDS + STOP_TIMEOUT))
			while [[ -n $(timeout 10 squeue -h -o %i 2>/dev/null || true) ]] &&
				((SECONDS < deadline)); do
				sleep 0.5
			done
		fi
	fi

	# slurmd before slurmctld so the controller does not notice a dead node;
	# munged last because both daemons authenticate through it while exiting.
	if [[ -n $slurmd_pid ]] && ours "$slurmd_pid"; then terminate "$slurmd_pid"; fi
	if [[ -n $ctld_pid ]] && ours "$ctld_pid"; then terminate "$ctld_pid"; fi
	if [[ -n $munged_pid ]] && ours "$munged_pid"; then terminate "$munged_pid"; fi

	# Whatever still carries the marker: a slurmstepd whose job could not be
	# cancelled (slurmctld already dead), a daemon whose pid file was lost.
	# A job's own processes do not carry the marker (they get the submitter's
	# environment), so they are found as descendants of the slurmstepd, and
	# go first: slurmstepd ignores SIGTERM and, killed, would orphan them.
	mapfile -t pids < <(marked_pids)
	if ((${#pids[@]} > 0)); then
		mapfile -t kids < <(descendants "${pids[@]}")
		echo "cluster.sh: stopping leftover processes ${pids[*]} ${kids[*]}" >&2
		terminate "${kids[@]}"
		for p in "${pids[@]}"; do
			if [[ $(cat "/proc/$p/comm" 2>/dev/null) == slurmstepd ]]; then
				kill -KILL "$p" 2>/dev/null || true
			fi
		done
		terminate "${pids[@]}"
	fi
	rm -f "$dir/slurmctld.pid" "$dir/slurmd.pid" "$dir/munged.pid"
}

# On a failed start: say why, show the log that explains it, undo everything.
fail() {
	local log=$1
	shift
	echo "cluster.sh: start failed: $*" >&2
	if [[ -n $log && -s $log ]]; then
		echo "cluster.sh: --- last lines of $log ---" >&2
		tail -n 25 "$log" >&2
	fi
	do_stop || true
	exit 1
}

port_busy() {
	local hex
	hex=$(printf '%04X' "$1")
	# State 0A is LISTEN; any other state on the port (TIME_WAIT of a previous
	# run) is avoided too, to be safe.
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
		awk -v h=":$hex" '$2 ~ h"$" {found=1} END {exit !found}'
}

# Two consecutive free ports, so parallel clusters and a system Slurm on the
# default 6817/6818 do not collide.
pick_ports() {
	local i base
	for ((i = 0; i < 50; i++)); do
		base=$((20000 + RANDOM % 30000))
		if ! port_busy "$base" && ! port_busy $((base + 1)); then
			echo "$base"
			return 0
		fi
	done
	return 1
}

wait_for() {
	local what=$1 log=$2 deadline=$3
	shift 3
	until "$@" >/dev/null 2>&1; do
		((SECONDS < deadline)) || fail "$log" "timed out after ${START_TIMEOUT}s waiting for $what"
		sleep 0.2
	done
}

alive() { [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null; }

munge_works() {
	munge -n -S "$dir/munge.socket" | unmunge -S "$dir/munge.socket"
}

ctld_up() {
	alive "$(pid_from "$dir/slurmctld.pid")" && [[ $(scontrol ping) == *UP* ]]
}

node_idle() {
	[[ $(sinfo -h -N -n "$node" -o %T) == idle ]]
}

do_start() {
	local b cpus mem_kb mem_mb port deadline pid
	for b in munged munge unmunge slurmctld slurmd sinfo squeue scontrol sbatch scancel; do
		command -v "$b" >/dev/null 2>&1 || skip "$b not installed (apt install slurmctld slurmd slurm-client munge)"
	done
	((EUID == 0)) || skip "must run as root (the daemons run as SlurmUser=root)"

	# munged and slurmd create unix sockets under DIR (sun_path is 108 bytes;
	# slurmd's are spool/NODE_JOBID.STEPID); slurm.conf cannot quote spaces.
	((${#dir} <= 60)) || die "DIR path too long for unix sockets (${#dir} > 60 chars): $dir"
	[[ $dir != *[[:space:]]* ]] || die "DIR must not contain whitespace: $dir"
	for b in slurmctld slurmd munged; do
		pid=$(pid_from "$dir/$b.pid" || true)
		if [[ -n $pid ]] && ours "$pid"; then die "a cluster is already running in $dir (pid $pid); stop it first"; fi
	done

	node=$(hostname -s)
	cpus=$(nproc)
	mem_kb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
	mem_mb=$((mem_kb / 1024))
	port=$(pick_ports) || die "no two free TCP ports found for slurmctld/slurmd"

	# A reused DIR must not hand the new controller old jobs or node state.
	rm -rf "$dir/state" "$dir/spool"
	rm -f "$dir"/*.log "$dir/munge.socket" "$dir/munge.socket.lock" "$dir/munge.key"
	mkdir -p "$dir/state" "$dir/spool"
	chmod 0700 "$dir/state" "$dir/spool"

	# Own key: the system's /etc/munge/munge.key may be absent or not ours.
	if command -v mungekey >/dev/null 2>&1; then
		mungekey --create --keyfile="$dir/munge.key" >&2 2>/dev/null ||
			die "mungekey could not create $dir/munge.key"
	else
		dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
	fi
	chmod 0400 "$dir/munge.key"
	: >"$dir/plugstack.conf" # keep /etc/slurm/plugstack.conf (SPANK) out

	cat >"$dir/slurm.conf" <<EOF
# Generated by tests/slurm/cluster.sh; a throwaway one-node test cluster.
ClusterName=nnbenchtest
# Addresses pinned to loopback: the short host name need not resolve.
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
# Our munged, not the system's /run/munge socket (used by auth and cred).
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$dir/plugstack.conf
MailProg=/bin/true
# No cgroups: they are usually not delegated to a container.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
# Otherwise each array task (or queued job) waits up to 3 s after the previous
# one ends; with 0 the controller's 1 s background tick starts it.
SchedulerParameters=batch_sched_delay=0
# A node that was down comes back by itself when slurmd registers.
ReturnToService=2
# Trust the numbers below even if slurmd detects a different topology
# (a container's nproc, hyperthreads), instead of draining the node.
SlurmdParameters=config_overrides
# Short timeouts: fast start, fast scancel, fast failure.
SlurmctldTimeout=10
SlurmdTimeout=10
MessageTimeout=5
BatchStartTimeout=10
KillWait=2
InactiveLimit=0
Waittime=0
# Finished jobs stay visible to squeue -j / scontrol show job this long.
MinJobAge=300
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF

	export SLURM_CONF=$dir/slurm.conf
	deadline=$((SECONDS + START_TIMEOUT))

	# --force: munged refuses to run as root without it.
	env "$MARKER=$dir" munged --force \
		--socket="$dir/munge.socket" --key-file="$dir/munge.key" \
		--pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
		--seed-file="$dir/munged.seed" </dev/null >&2 2>&1 ||
		fail "$dir/munged.log" "munged did not start"
	wait_for "munged to answer on $dir/munge.socket" "$dir/munged.log" "$deadline" munge_works

	# Both daemons fork into the background and write their pid files;
	# a config error makes the launching command itself fail.
	env "$MARKER=$dir" slurmctld -f "$dir/slurm.conf" </dev/null >&2 2>&1 ||
		fail "$dir/slurmctld.log" "slurmctld did not start"
	wait_for "slurmctld to answer" "$dir/slurmctld.log" "$deadline" \
		ctld_up

	env "$MARKER=$dir" slurmd -f "$dir/slurm.conf" </dev/null >&2 2>&1 ||
		fail "$dir/slurmd.log" "slurmd did not start"
	until node_idle >/dev/null 2>&1; do
		pid=$(pid_from "$dir/slurmd.pid" || true)
		# slurmd writes its pid file early; if it died, say so now.
		if [[ -n $pid ]] && ! alive "$pid"; then fail "$dir/slurmd.log" "slurmd exited"; fi
		if ! alive "$(pid_from "$dir/slurmctld.pid" || true)"; then fail "$dir/slurmctld.log" "slurmctld exited"; fi
		if ((SECONDS >= deadline)); then
			echo "cluster.sh: node state: $(sinfo -h -N -n "$node" -o '%T %E' 2>&1 || true)" >&2
			tail -n 10 "$dir/slurmctld.log" >&2 || true
			fail "$dir/slurmd.log" "timed out after ${START_TIMEOUT}s waiting for node $node to be idle"
		fi
		sleep 0.2
	done

	echo "export SLURM_CONF=$dir/slurm.conf"
}

(($# == 2)) || usage
cmd=$1
if [[ -d $2 ]]; then
	dir=$(cd "$2" && pwd -P)
elif [[ $cmd == stop ]]; then
	# A cleanup trap may run after DIR was deleted; the daemons may still be
	# alive and are found by the marker, which holds DIR's path.
	dir=$2
	[[ $dir == /* ]] || dir=$PWD/$dir
else
	die "no such directory: $2"
fi
node=
case $cmd in
start) do_start ;;
stop) do_stop ;;
*) usage ;;
esac
