"""Test support: puts ``python/`` on the path, starts real xferd daemons, makes network namespaces.

Daemons are started as the README does (``bin/xferd daemon``, or ``java -cp`` with the jar and lib folder named by
``XFERD_DAEMON_JAR``/``XFERD_DAEMON_LIB`` when set, as the Maven module does), each in its own directory under
``/dev/shm`` with ``--rpc-address 127.0.0.1:0`` (or a namespace's address), and killed and removed afterwards.
When no daemon can be started here (no JDK 25, daemon not built) the tests that need one are skipped with the
reason, except when ``CI`` is set, where they fail.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(PYTHON_DIR)
if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)

import xferd  # noqa: E402  (after the path is set)

def java_flags() -> list[str]:
    """The JVM flags every xferd JVM runs with, from the repository's ``jvm.flags`` (as bin/xferd reads it)."""
    flags = []
    with open(os.path.join(REPO, "jvm.flags")) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith(("#", "!")):
                continue
            line = line.removeprefix("xferd.jvm.flags=").rstrip("\\").strip()
            flags += line.split()
    return flags


START_TIMEOUT_S = 90


def in_ci() -> bool:
    return bool(os.environ.get("CI"))


def skip_or_fail(test: unittest.TestCase | None, reason: str) -> None:
    """Skip with the reason, or fail when CI is set (CI must run everything)."""
    if in_ci():
        raise AssertionError(f"CI must be able to run this test: {reason}")
    raise unittest.SkipTest(reason)


def _java() -> str | None:
    for home in (os.environ.get("JAVA_HOME"), "/usr/lib/jvm/temurin-25-jdk-amd64", "/usr/lib/jvm/temurin-25-jdk",
                 "/usr/lib/jvm/java-25-openjdk-amd64"):
        if home and os.access(os.path.join(home, "bin", "java"), os.X_OK):
            return os.path.join(home, "bin", "java")
    return None


def daemon_command() -> list[str]:
    """The command line that runs the daemon CLI, or SkipTest/AssertionError naming what is missing."""
    jar = os.environ.get("XFERD_DAEMON_JAR") or os.path.join(REPO, "daemon", "target", "daemon-0.1.0-SNAPSHOT.jar")
    lib = os.environ.get("XFERD_DAEMON_LIB") or os.path.join(REPO, "daemon", "target", "lib")
    java = _java()
    if java is None:
        skip_or_fail(None, "no JDK 25 (JAVA_HOME or /usr/lib/jvm/temurin-25-jdk-amd64)")
    if not os.path.isfile(jar) or not os.path.isdir(lib):
        skip_or_fail(None, f"daemon not built ({jar}); run ./mvnw -DskipTests package -pl daemon -am")
    if not os.environ.get("XFERD_DAEMON_JAR"):
        return [os.path.join(REPO, "bin", "xferd")]  # the README's launcher (it finds the JDK itself)
    return [java, *java_flags(), "-cp", f"{jar}:{lib}/*", "io.xferd.daemon.tools.cli.XferdMain"]


class Daemon:
    """A real xferd daemon in a private directory; :meth:`stop` (or :meth:`kill`) ends it and removes the directory."""

    def __init__(self, *extra: str, rpc_host: str = "127.0.0.1", namespace: str | None = None) -> None:
        self.directory = tempfile.mkdtemp(prefix="xfpy-", dir="/dev/shm")
        self.log_path = os.path.join(tempfile.gettempdir(), os.path.basename(self.directory) + ".log")
        command = daemon_command() + ["daemon", "--dir", self.directory, "--rpc-address", f"{rpc_host}:0",
                                      "--no-journal", "--metrics-address", "off", *extra]
        if namespace is not None:
            command = ["ip", "netns", "exec", namespace] + command
        self._log = open(self.log_path, "wb")
        self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
        self.rpc_host = rpc_host
        self.rpc_port = 0
        try:
            self._await_ready()
        except BaseException:
            self.stop()
            raise

    def log(self) -> str:
        """Everything the daemon printed so far."""
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", errors="replace")

    def _await_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"daemon exited with {self.process.returncode}:\n{self.log()}")
            text = self.log()
            listener = re.search(r"peer listener on [^\s:]+:(\d+)", text)
            if "xferd daemon serving" in text and listener:
                self.rpc_port = int(listener.group(1))
                return
            time.sleep(0.1)
        raise AssertionError(f"daemon not ready within {START_TIMEOUT_S} s:\n{self.log()}")

    def connect(self, name: str | None = None, **kwargs) -> xferd.Client:
        """A client of this daemon."""
        return xferd.Client(self.directory, name, **kwargs)

    def kill(self) -> None:
        """SIGKILL, as a crash: no drain, no cleanup by the daemon."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(30)

    def stop(self) -> None:
        """SIGTERM (drain), SIGKILL after 20 s; then remove the directory and the log."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(30)
            except ProcessLookupError:
                pass
        self._log.close()
        shutil.rmtree(self.directory, ignore_errors=True)
        if os.path.exists(self.log_path):
            os.unlink(self.log_path)


class DaemonTestCase(unittest.TestCase):
    """One daemon for all tests of a class; its log is printed when a test of the class failed."""

    daemon: Daemon
    daemon_args: tuple[str, ...] = ()

    @classmethod
    def setUpClass(cls) -> None:
        cls.daemon = Daemon(*cls.daemon_args)
        cls._failed = False

    @classmethod
    def tearDownClass(cls) -> None:
        if cls._failed:
            sys.stderr.write(f"--- daemon log of {cls.__name__} ---\n{cls.daemon.log()[-8000:]}\n")
        cls.daemon.stop()

    def run(self, result=None):
        before = len(result.failures) + len(result.errors) if result is not None else 0
        outcome = super().run(result)
        if result is not None and len(result.failures) + len(result.errors) > before:
            type(self)._failed = True
        return outcome


# ---------------------------------------------------------------- what a thread is doing, from the kernel

from procfs import SYS_FUTEX, all_threads_stopped, asleep_on_futex  # noqa: E402,F401  (re-exported for the tests)


def cluster_token_file() -> str:
    """A fresh shared secret for daemons that must trust each other (peers authenticate by default)."""
    import secrets
    fd, path = tempfile.mkstemp(prefix="xfpy-token-")
    os.write(fd, secrets.token_hex(32).encode())
    os.close(fd)
    return path


# ---------------------------------------------------------------- processes with a timeout

def run_python(code: str, *args: str, env: dict | None = None, timeout: float = 120,
               namespace: str | None = None) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter with ``python/`` on the path (optionally inside a network namespace)."""
    command = [sys.executable, "-c", code, *args]
    if namespace is not None:
        command = ["ip", "netns", "exec", namespace] + command
    environment = dict(os.environ, PYTHONPATH=PYTHON_DIR, **(env or {}))
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=environment)


# ---------------------------------------------------------------- network namespaces (two "hosts")

_namespace_reason: str | None = None
_namespace_probed = False


def namespaces_unavailable() -> str | None:
    """None when this process may create network namespaces, else why not."""
    global _namespace_probed, _namespace_reason
    if not _namespace_probed:
        _namespace_probed = True
        if os.geteuid() != 0:
            _namespace_reason = f"not root (uid {os.geteuid()})"
        elif shutil.which("ip") is None:
            _namespace_reason = "iproute2's 'ip' not found"
        else:
            probe = f"xfpy-probe-{os.getpid()}"
            added = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
            if added.returncode != 0:
                _namespace_reason = f"'ip netns add' failed: {added.stderr.strip()}"
            else:
                subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return _namespace_reason


class NetworkNamespaces:
    """Namespaces A and B joined by a veth pair (10.214.k.1 in A, 10.214.k.2 in B); :meth:`close` deletes both."""

    _instances = 0

    def __init__(self) -> None:
        NetworkNamespaces._instances += 1
        pid, n = os.getpid(), NetworkNamespaces._instances
        self.a, self.b = f"xfpy-{pid}-{n}a", f"xfpy-{pid}-{n}b"
        veth_a, veth_b = f"xp{pid % 100000}-{n}a", f"xp{pid % 100000}-{n}b"
        k = (pid * 7 + n) % 250 + 1
        self.address_a, self.address_b = f"10.215.{k}.1", f"10.215.{k}.2"
        try:
            self._run("ip", "netns", "add", self.a)
            self._run("ip", "netns", "add", self.b)
            self._run("ip", "link", "add", veth_a, "netns", self.a, "type", "veth", "peer", "name", veth_b,
                      "netns", self.b)
            self._run("ip", "-n", self.a, "addr", "add", self.address_a + "/24", "dev", veth_a)
            self._run("ip", "-n", self.b, "addr", "add", self.address_b + "/24", "dev", veth_b)
            for namespace, link in ((self.a, "lo"), (self.b, "lo"), (self.a, veth_a), (self.b, veth_b)):
                self._run("ip", "-n", namespace, "link", "set", link, "up")
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _run(*command: str) -> None:
        result = subprocess.run(command, capture_output=True, text=True, timeout=20)
        if result.returncode != 0:
            raise AssertionError(f"{' '.join(command)} failed: {result.stderr.strip()}")

    def close(self) -> None:
        """Delete both namespaces (the veth pair goes with them)."""
        for namespace in (self.a, self.b):
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True, timeout=20)
