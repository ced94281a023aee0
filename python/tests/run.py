"""Run every Python test (``python3 python/tests/run.py [-k PATTERN]``) and end with ``N passed, N failed, N skipped``.

The same tests run with ``python3 -m unittest discover -s python/tests -v``; this runner adds the plain closing
line the build looks for, and exits non-zero when anything failed.
"""

from __future__ import annotations

import argparse
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-k", dest="patterns", action="append", help="only tests matching this substring")
    parser.add_argument("-q", dest="quiet", action="store_true", help="less output")
    options = parser.parse_args()
    sys.path.insert(0, HERE)
    loader = unittest.TestLoader()
    if options.patterns:
        loader.testNamePatterns = [f"*{pattern}*" for pattern in options.patterns]
    suite = loader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
    result = unittest.TextTestRunner(verbosity=1 if options.quiet else 2, stream=sys.stdout).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    print(f"{passed} passed, {failed} failed, {skipped} skipped", flush=True)
    return 0 if failed == 0 and result.testsRun > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
