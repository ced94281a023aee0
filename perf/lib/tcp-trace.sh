#!/usr/bin/env bash
# Samples one network namespace's TCP connections and one process's threads every INTERVAL seconds while WATCH
# runs, for bench-netns.sh --tcp-trace (run it inside the namespace: ip netns exec NS perf/lib/tcp-trace.sh ...).
#
#   tcp-trace.sh WATCH-PID DAEMON-PID INTERVAL PORT [SS-EVERY] > samples
#
# Per sample: "T <epoch seconds.us>"; "Q <ephemeral port> <send-q> <recv-q> <cwnd>" per connection from or to PORT
# (/proc/net/tcp and tcp6, read with builtins); every SS-EVERY-th sample (default 10) also `ss -tinmH` of those
# connections (unacked, retransmits, rtt, rcv_space, delivery rate, skmem); then "P tid comm state cpu_ns wait_ns
# slices" for each of the daemon's peer threads (xferd-peer-*: state R running/runnable, S asleep; CPU and
# run-queue wait from schedstat). No fork per sample but the ss one: an ss costs ~6 ms of CPU on the 2-vCPU VM,
# which at real-time priority every 10 ms would take a third of a vCPU from what it measures.
set -uo pipefail
watch="$1" daemon="$2" interval="$3" port="$4" ss_every="${5:-10}"
hex_port="$(printf '%04X' "$port")"
exec {sleeper}<> <(:) # read -t on it is a sleep without a fork
n=0
while kill -0 "$watch" 2>/dev/null; do
  echo "T $EPOCHREALTIME"
  for table in /proc/net/tcp /proc/net/tcp6; do
    while read -r _ local remote state queues _ _ _ _ _ _ _ _ _ _ cwnd _; do
      [[ $state == 01 ]] || continue # established
      if [[ ${local##*:} == "$hex_port" ]]; then other="${remote##*:}"
      elif [[ ${remote##*:} == "$hex_port" ]]; then other="${local##*:}"
      else continue; fi
      echo "Q $((16#$other)) $((16#${queues%%:*})) $((16#${queues##*:})) $cwnd"
    done < "$table"
  done
  if (( n++ % ss_every == 0 )); then
    ss -tinmH state established "( sport = :$port or dport = :$port )"
  fi
  for task in /proc/"$daemon"/task/*; do
    read -r comm < "$task/comm" 2>/dev/null || continue
    [[ $comm == xferd-peer-* ]] || continue
    read -r stat < "$task/stat" 2>/dev/null || continue
    read -r sched < "$task/schedstat" 2>/dev/null || continue
    stat="${stat##*) }"
    echo "P ${task##*/} $comm ${stat%% *} $sched"
  done
  read -rt "$interval" -u "$sleeper" || true
done
