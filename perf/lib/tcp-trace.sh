#!/usr/bin/env bash
# Samples one network namespace's TCP connections and one process's threads every INTERVAL seconds while WATCH
# runs, for bench-netns.sh --tcp-trace (run it inside the namespace: ip netns exec NS perf/lib/tcp-trace.sh ...).
#
#   tcp-trace.sh WATCH-PID DAEMON-PID INTERVAL PORT > samples
#
# Per sample: "T <epoch seconds.us>", then `ss -tinmH` of the established connections from or to PORT (Send-Q,
# Recv-Q, cwnd, unacked, retransmits, rtt, rcv_space, delivery rate, skmem), then "P tid comm state cpu_ns wait_ns
# slices" for each of the daemon's peer threads (xferd-peer-*: state R running/runnable, S asleep; CPU and
# run-queue wait from schedstat, read with builtins). The ss is the cost: ~6 ms of CPU a sample on the 2-vCPU VM,
# nearly all of it the kernel walking its connection table (/proc/net/tcp costs the same); one every 20 ms is
# about a third of a vCPU. The stamp is taken after ss, next to the thread reads it dates (ss takes 6-12 ms).
# Exits 1 with a message when ss fails, so that bench-netns.sh reports the sampler as failed.
set -uo pipefail
watch="$1" daemon="$2" interval="$3" port="$4"
exec {sleeper}<> <(:) # read -t on it is a sleep without a fork
while kill -0 "$watch" 2>/dev/null; do
  connections="$(ss -tinmH state established "( sport = :$port or dport = :$port )")" ||
    { echo "tcp-trace.sh: ss failed (exit $?)" >&2; exit 1; }
  echo "T $EPOCHREALTIME"
  [[ -z $connections ]] || printf '%s\n' "$connections"
  for task in /proc/"$daemon"/task/*; do
    # stderr first: a thread that exits mid-sample is skipped without an error line in the samples
    read -r comm 2>/dev/null < "$task/comm" || continue
    [[ $comm == xferd-peer-* ]] || continue
    read -r stat 2>/dev/null < "$task/stat" || continue
    read -r sched 2>/dev/null < "$task/schedstat" || continue
    stat="${stat##*) }"
    echo "P ${task##*/} $comm ${stat%% *} $sched"
  done
  read -rt "$interval" -u "$sleeper" || true
done
