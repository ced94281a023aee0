"""What threads are doing, read from the kernel (``/proc``). Standard library only, and no ``xferd`` import, so that a
benchmark's child interpreter that runs another copy of the client (perf/python-wait.py) can use it too; tests reach
it through :mod:`support`."""

from __future__ import annotations

import os
import platform

SYS_FUTEX = {"x86_64": 202, "aarch64": 98}.get(platform.machine())


def asleep_on_futex(tid: int, address: int) -> bool:
    """True when thread ``tid`` of this process is blocked now in a shared ``FUTEX_WAIT`` (op 0: no private flag, no
    clock flag) on the word at ``address``, as ``/proc/self/task/TID/syscall`` shows it (the call's number, then its
    arguments in hex). Python's own locks and events wait with private futex operations, so they never count."""
    try:
        with open(f"/proc/self/task/{tid}/syscall") as f:
            fields = f.read().split()
    except OSError:
        return False  # the thread ended
    return len(fields) > 3 and fields[0] == str(SYS_FUTEX) and int(fields[1], 16) == address and \
        int(fields[2], 16) == 0


def all_threads_stopped(pid: int) -> bool:
    """True when every thread of process ``pid`` is in state T (stopped; kill(2) returns before a running thread
    stops)."""
    states = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/stat") as f:
                states.append(f.read().rsplit(")", 1)[1].split()[0])
        except OSError:
            pass  # the thread ended
    return all(state in ("T", "t") for state in states)
