#!/usr/bin/env python3
"""Install xferd's Python packages (``xferd`` and the ``mooncake`` drop-in) with nothing but python3.

    python3 python/install.py            # for every user of this interpreter (site-packages; root)
    python3 python/install.py --user     # for this user only (~/.local/lib/pythonX.Y/site-packages)
    python3 python/install.py --copy     # copy the packages instead of linking to this checkout
    python3 python/install.py --uninstall [--user]

By default a ``xferd-python.pth`` file naming this checkout's ``python/`` folder is written into site-packages,
so edits here take effect at once; ``--copy`` copies ``xferd/`` and ``mooncake/`` there instead. When the real
``mooncake-transfer-engine`` is installed too, both provide a package ``mooncake``: ``--shadow-mooncake`` makes the
``.pth`` put this folder first on ``sys.path`` so ``mooncake.engine`` is xferd's (uninstall the real one, or run
without this option, to get it back). No pip, setuptools, compiler or network is needed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import site
import sys
import sysconfig

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGES = ("xferd", "mooncake")
PTH = "xferd-python.pth"


def target_directory(user: bool) -> str:
    if user:
        return site.getusersitepackages()
    return sysconfig.get_paths()["purelib"]


def uninstall(directory: str) -> list[str]:
    removed = []
    pth = os.path.join(directory, PTH)
    if os.path.exists(pth):
        os.unlink(pth)
        removed.append(pth)
    for package in PACKAGES:
        path = os.path.join(directory, package)
        marker = os.path.join(path, ".xferd-installed")
        if os.path.isdir(path) and os.path.exists(marker):  # never remove a real mooncake package
            shutil.rmtree(path)
            removed.append(path)
    return removed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--user", action="store_true", help="install for this user only")
    parser.add_argument("--copy", action="store_true", help="copy the packages instead of a .pth to this checkout")
    parser.add_argument("--shadow-mooncake", action="store_true",
                        help="put xferd's folder first on sys.path so its mooncake wins over an installed one")
    parser.add_argument("--uninstall", action="store_true", help="remove what this script installed")
    parser.add_argument("--target", help="install into this directory instead (for packaging)")
    options = parser.parse_args()
    if sys.version_info < (3, 10):
        print(f"xferd needs Python 3.10 or newer, this is {sys.version.split()[0]}", file=sys.stderr)
        return 2
    directory = options.target or target_directory(options.user)
    os.makedirs(directory, exist_ok=True)
    removed = uninstall(directory)
    if options.uninstall:
        print("removed: " + (", ".join(removed) if removed else "nothing (not installed there)"))
        return 0
    if options.copy:
        for package in PACKAGES:
            destination = os.path.join(directory, package)
            if os.path.exists(destination):
                print(f"{destination} exists and is not ours (the real mooncake?); uninstall it first",
                      file=sys.stderr)
                return 1
            shutil.copytree(os.path.join(HERE, package), destination,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            open(os.path.join(destination, ".xferd-installed"), "w").close()
        print(f"copied {', '.join(PACKAGES)} into {directory}")
        return 0
    line = f"import sys; sys.path.insert(0, {HERE!r})" if options.shadow_mooncake else HERE
    with open(os.path.join(directory, PTH), "w") as f:
        f.write(line + "\n")
    print(f"wrote {os.path.join(directory, PTH)} -> {HERE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
