"""A real signal handler that raises, at whatever bytecode the interval timer lands on, while one thread submits and
waits in a loop against the played daemon (``test_client_protocol``): every transfer still ends with a definite
status, nothing stays in flight, the rings keep flowing and nothing hangs.

Where the handler lands varies from run to run; what is asserted does not. The sequence of requests and the timer's
intervals come from two seeded generators (one each, so the sequence of requests does not depend on how many times
the timer fired), the loop and every wait are bounded.
"""

from __future__ import annotations

import support  # puts python/ on the path

import faulthandler
import os
import random
import signal
import sys
import threading
import unittest

import xferd
from test_client_protocol import KEPT, PlayedDaemon
from xferd import errors
from xferd import protocol as p

SEED = 20261202
ROUNDS = 400
CLIENT_CODE = os.path.dirname(os.path.abspath(xferd.__file__)) + os.sep
HANG_LIMIT_S = 120  # the whole loop; a hang dumps every thread's stack and ends the process


class Interrupted(Exception):
    """What the signal handler raises."""


@unittest.skipUnless(hasattr(signal, "setitimer"), "no interval timer here")
class RealSignalTest(unittest.TestCase):
    def test_a_handler_raising_anywhere_in_submits_and_waits_leaves_every_transfer_with_a_definite_status(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            self.skipTest("signal handlers run on the main thread only")
        daemon = PlayedDaemon()
        self.addCleanup(daemon.close)
        client = xferd.Client(daemon.directory, "signalled", control_timeout_s=5)
        self.addCleanup(client.close)
        memory = bytearray(os.urandom(1 << 14))
        KEPT.append(memory)  # the played daemon may copy after an interrupted test ended
        base = xferd.memory.address_of(memory)
        requests, intervals = random.Random(SEED), random.Random(SEED + 1)
        armed = False
        interruptions = 0

        def handler(_signum, frame) -> None:
            """Raises where it lands in a call into the client (elsewhere, in this loop's bytecode between two
            calls, it would escape the loop's ``try``)."""
            nonlocal interruptions
            if armed:
                signal.setitimer(signal.ITIMER_REAL, intervals.uniform(50e-6, 2e-3))
                while frame is not None:  # in the client, or in what it called (threading's Python frames too)
                    if frame.f_code.co_filename.startswith(CLIENT_CODE):
                        interruptions += 1
                        raise Interrupted()
                    frame = frame.f_back

        previous = signal.signal(signal.SIGALRM, handler)
        self.addCleanup(signal.signal, signal.SIGALRM, previous)
        faulthandler.dump_traceback_later(HANG_LIMIT_S, exit=True)
        self.addCleanup(faulthandler.cancel_dump_traceback_later)
        returned: list[xferd.Transfer] = []
        try:
            armed = True
            signal.setitimer(signal.ITIMER_REAL, intervals.uniform(50e-6, 2e-3))
            for round_ in range(ROUNDS):
                at = base + 128 * (round_ % 64)
                try:
                    if requests.random() < 0.5:
                        transfer = client.submit_one(p.WRITE, 1, at, at + 8192, 64)
                    else:
                        transfer = client.submit(p.WRITE, 1, [at, at + 64], [at + 8192, at + 8256], [64, 64])
                    returned.append(transfer)
                    client.wait(transfer, 5)
                except Interrupted:
                    pass
        finally:
            while True:  # disarmed before the timer stops: a last signal then raises nothing
                try:
                    armed = False
                    signal.setitimer(signal.ITIMER_REAL, 0)
                    break
                except Interrupted:
                    continue
        self.assertGreater(interruptions, 0, "the timer never interrupted the loop")
        # first: a claim a second signal left open inside the last round's void is voided by the next submission
        # (as designed), which answers the request it registered
        self.assertEqual(64, client.transfer_sync(p.WRITE, 1, base, base + 8192, 64, timeout_s=5),
                         "the rings stopped flowing")
        # every request registered, those of interrupted submissions included, ends; each returned one ends OK
        for entry in list(client._pending.values()):
            transfer = entry if isinstance(entry, xferd.Transfer) else entry[0]
            try:
                client.wait(transfer, 5)
            except errors.TransferFailedError as failure:
                self.assertNotIsInstance(failure, errors.TransferTimeoutError, "a request never completed")
        for transfer in returned:
            self.assertEqual(128 if transfer.entries == 2 else 64, client.wait(transfer, 5))
        self.assertEqual(0, client._in_flight, "a request stayed in flight")
        self.assertEqual(-1, client._writer.open_claim)
        print(f"\n{interruptions} interruptions in {ROUNDS} rounds", file=sys.stderr)


if __name__ == "__main__":
    unittest.main()
