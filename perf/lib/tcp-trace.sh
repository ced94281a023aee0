#!/usr/bin/env bash
# Samples one network namespace's TCP connections and one process's threads every INTERVAL seconds while WATCH
# runs, for bench-netns.sh --tcp-trace (run it inside the namespace: ip netns exec NS perf/lib/tcp-trace.sh ...).
#
#   tcp-trace.sh WATCH-PID DAEMON-PID INTERVAL PORT > samples
#
# Per sample: "T <epoch seconds.us>", then `ss -tinmH` of the established connections from or to PORT (cwnd, rtt,
# unacked, retrans, rcv_space, delivery rate, skmem), then "P tid comm state cpu_ns wait_ns slices" for each of the
# daemon's peer threads (xferd-peer-*: state R running/runnable, S asleep; cpu and run-queue wait from schedstat).
# Reads /proc with builtins (no fork per thread): a sample costs one ss.
set -uo pipefail
watch="$1" daemon="$2" interval="$3" port="$4"
while kill -0 "$watch" 2>/dev/null; do
  echo "T $EPOCHREALTIME"
  ss -tinmH state established "( sport = :$port or dport = :$port )"
  for task in /proc/"$daemon"/task/*; do
    read -r comm < "$task/comm" 2>/dev/null || continue
    [[ $comm == xferd-peer-* ]] || continue
    read -r stat < "$task/stat" 2>/dev/null || continue
    read -r sched < "$task/schedstat" 2>/dev/null || continue
    stat="${stat##*) }"
    echo "P ${task##*/} $comm ${stat%% *} $sched"
  done
  sleep "$interval"
done
