# shellcheck shell=bash
# Two "hosts" on one machine for the perf scripts: two network namespaces joined by veth pairs, made here and
# removed on exit together with the processes the script started. Source it, then:
#
#   netns_trap                        # on EXIT netns_cleanup; INT and TERM exit 130 (so the EXIT trap runs)
#   netns_pair xfb 10.213             # namespaces xfb-$$-a and xfb-$$-b, lo up, one veth pair xfb$$a <-> xfb$$b
#                                     # with 10.213.K.1/24 and 10.213.K.2/24 (K = $$ % 250 + 1), both ends up;
#                                     # sets NS_A NS_B VETH_A VETH_B ADDR_A ADDR_B NETNS_K
#   netns_create xfm                  # the namespaces only (NS_A, NS_B, NETNS_K), for scripts with several pairs:
#   netns_veth xfm$$a1 xfm$$b1 10.213 #   one veth pair between them, 10.213.K.1/24 on A's end, .2 on B's, up
#   netns_track "$!"                  # a process to end on exit: TERM, up to 5 s, then KILL
#   netns_untrack "$pid"              # ... no more: it ended and was waited for (its pid may be reused)
#   netns_sleep_while "$pid" 3.5      # sleep up to 3.5 s while pid runs: returns 1 at once when it has ended
#   netns_on_exit 'rm -rf "$dir"'     # more to do on exit: after the processes ended, before the namespaces go
#
# A script that manages some processes itself (restarts them) may define netns_before_cleanup: it runs first.
# The names carry the script's pid, so scripts running at once do not collide; `ip netns list` shows nothing of a
# script once it has ended (unless it was killed with SIGKILL: then `ip netns del` its xf*-PID-a/b by hand).

NETNS_NAMES=()
NETNS_PIDS=()
NETNS_EXIT_COMMANDS=()
NETNS_K=$(( $$ % 250 + 1 ))

netns_trap() {
  trap netns_cleanup EXIT
  trap 'exit 130' INT TERM
}

netns_create() { # prefix: namespaces PREFIX-$$-a and PREFIX-$$-b with lo up
  NS_A="$1-$$-a"
  NS_B="$1-$$-b"
  local ns
  for ns in "$NS_A" "$NS_B"; do
    ip netns add "$ns" || return 1
    NETNS_NAMES+=("$ns")
    ip -n "$ns" link set lo up || return 1
  done
}

netns_veth() { # device-in-A device-in-B net (first two octets): a veth pair between NS_A and NS_B, addressed, up
  ip link add "$1" netns "$NS_A" type veth peer name "$2" netns "$NS_B" || return 1
  ip -n "$NS_A" addr add "$3.$NETNS_K.1/24" dev "$1" || return 1
  ip -n "$NS_B" addr add "$3.$NETNS_K.2/24" dev "$2" || return 1
  ip -n "$NS_A" link set "$1" up || return 1
  ip -n "$NS_B" link set "$2" up || return 1
}

netns_pair() { # prefix net: two namespaces and one veth pair
  netns_create "$1" || return 1
  VETH_A="$1$$a"
  VETH_B="$1$$b"
  ADDR_A="$2.$NETNS_K.1"
  ADDR_B="$2.$NETNS_K.2"
  netns_veth "$VETH_A" "$VETH_B" "$2"
}

netns_track() { # pid...
  NETNS_PIDS+=("$@")
}

netns_untrack() { # pid
  local kept=() pid
  for pid in "${NETNS_PIDS[@]}"; do [[ $pid == "$1" ]] || kept+=("$pid"); done
  NETNS_PIDS=("${kept[@]}")
}

netns_sleep_while() { # pid seconds: 0 after the seconds with pid still running, 1 as soon as it is not
  # against the clock, not a count of short sleeps (each costs a fork: on a loaded machine 5 s of them took 7)
  local end left
  end=$(( ${EPOCHREALTIME/./} + $(awk -v s="$2" 'BEGIN { printf "%d", s * 1e6 }') ))
  while kill -0 "$1" 2>/dev/null; do
    left=$(( end - ${EPOCHREALTIME/./} ))
    (( left > 0 )) || return 0
    if (( left >= 100000 )); then sleep 0.1; else sleep "0.$(printf '%06d' "$left")"; fi
  done
  return 1
}

netns_on_exit() { # command (eval'd on exit)
  NETNS_EXIT_COMMANDS+=("$1")
}

netns_cleanup() {
  local pid ns command _
  if declare -F netns_before_cleanup > /dev/null; then
    netns_before_cleanup || true
  fi
  for pid in "${NETNS_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${NETNS_PIDS[@]}"; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null || true
  done
  for command in "${NETNS_EXIT_COMMANDS[@]}"; do eval "$command" || true; done
  for ns in "${NETNS_NAMES[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  NETNS_PIDS=()
  NETNS_NAMES=()
  NETNS_EXIT_COMMANDS=()
}
