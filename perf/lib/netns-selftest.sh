#!/usr/bin/env bash
# Checks of lib/netns.sh's process handling that need neither root nor namespaces: a tracked background process
# (SIGINT ignored, as every background command of a script) is ended when the script is interrupted, and
# netns_sleep_while stops waiting as soon as the process it watches has ended. Prints "ok" lines; exits 1 on a failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d /tmp/xferd-netns-selftest.XXXXXX)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $1" >&2; exit 1; }

# 1. interrupted while it waits for a tracked background process: the process is ended on exit
cat > "$work/interrupted.sh" <<SCRIPT
source "$here/netns.sh"
netns_trap
sleep 60 &
netns_track \$!
echo \$! > "$work/child.pid"
wait
SCRIPT
# as from a terminal's Ctrl-C: the script takes SIGINT (a background command here would ignore it), its own
# background child ignores it
env --default-signal=INT bash "$work/interrupted.sh" &
script_pid=$!
for _ in $(seq 1 100); do [[ -s "$work/child.pid" ]] && break; sleep 0.1; done
[[ -s "$work/child.pid" ]] || fail "the script did not start its child"
child_pid="$(cat "$work/child.pid")"
kill -INT "$script_pid"
wait "$script_pid" && rc=0 || rc=$?
[[ $rc == 130 ]] || fail "the interrupted script exited $rc, not 130"
if kill -0 "$child_pid" 2>/dev/null; then
  kill "$child_pid"
  fail "the tracked background process outlived the interrupted script"
fi
echo "ok: an interrupted script ends its tracked background process"

# 2. netns_sleep_while: the whole time while the process runs, not a moment more once it has ended
source "$here/netns.sh"
sleep 0.3 &
short_pid=$!
start=$SECONDS
netns_sleep_while "$short_pid" 30 && fail "netns_sleep_while returned 0 for a process that ended"
(( SECONDS - start < 10 )) || fail "netns_sleep_while waited $((SECONDS - start)) s for a process that ended"
sleep 30 &
long_pid=$!
netns_sleep_while "$long_pid" 0.3 || { kill "$long_pid"; fail "netns_sleep_while returned 1 for a running process"; }
kill "$long_pid"
echo "ok: netns_sleep_while stops waiting once its process has ended"

# 3. netns_untrack: an ended process is no longer ended on exit (its pid may be another's by then)
NETNS_PIDS=(11 22 33)
netns_untrack 22
[[ "${NETNS_PIDS[*]}" == "11 33" ]] || fail "netns_untrack left ${NETNS_PIDS[*]}"
echo "ok: netns_untrack"
