"""The parent's side of a TensorFlow server (``backend/fork_server.py``): start it, hand it requests, kill it.

The check command's tracing server and ``xlalint run``'s are started, asked and ended the same
way. Each server runs in its own session, and so does each child it forks: a child that ends,
times out or grows past the memory limit is killed with its whole process group, and a server
that is closed goes with everything it started.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import tempfile
import time
from typing import IO, Callable, cast

from xlalint.child_end import death, kill_group
from xlalint.python_child import module_command

IMPORT_TIMEOUT_S = 300.0  # importing TensorFlow on a cold, busy machine
EXIT_WAIT_S = 30.0  # for the server to report a child it was told to kill
MEMORY_POLL_S = 0.1  # how often a process's resident memory is read while waiting for it
PAGE = os.sysconf("SC_PAGE_SIZE")
# A server never starts with the working directory first on sys.path (module_command): a
# ./json.py must not shadow the standard library. The user's directory comes first only in the
# child that runs the user's code, as in a plain `python file.py`.


class WorkerError(RuntimeError):
    """The server could not start at all (e.g. TensorFlow is not installed)."""


def _resident_bytes(pid: int) -> int:
    """Resident memory of a process (Linux /proc; 0 where it cannot be read)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


class Channel:
    """Line reader over the server's message pipe with a deadline and a memory limit on one process."""

    def __init__(self, fd: int, max_memory_mb: int):
        self.fd = fd
        self.max_bytes = max_memory_mb << 20  # 0: no limit
        self.buffer = bytearray()
        self.closed = False  # the server closed its end: it has exited or is exiting
        self.over_memory = False  # the watched process went over the limit

    def read(self, timeout: float, watch: int) -> dict | None:
        """The next message; a line that is not one (printed before the server took stdout over, e.g. by a
        sitecustomize) is skipped."""
        deadline = time.monotonic() + timeout
        while True:
            line = self._line(deadline, watch)
            if line is None:
                return None
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and "type" in message:
                return message

    def _line(self, deadline: float, watch: int) -> bytes | None:
        end = self.buffer.find(b"\n")
        while end < 0:
            left = deadline - time.monotonic()
            if left <= 0 or self.closed:
                return None
            ready = select.select([self.fd], [], [], min(left, MEMORY_POLL_S) if self.max_bytes else left)[0]
            if self.max_bytes and _resident_bytes(watch) > self.max_bytes:
                self.over_memory = True
                return None
            if not ready:
                continue
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                self.closed = True
                return None
            self.buffer += chunk
            end = self.buffer.find(b"\n")
        line = bytes(self.buffer[:end])
        del self.buffer[: end + 1]
        return line


class Server:
    """One server: TensorFlow imported, ready to serve requests one at a time, each in a child."""

    def __init__(self, module: str, args: list[str], env: dict, workdir: str, max_memory_mb: int = 0):
        self.max_memory_mb = max_memory_mb
        self.child: int | None = None  # the process serving a request right now
        self.log = tempfile.NamedTemporaryFile(dir=workdir, prefix="server-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(module_command(module, *args), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log, env=env, cwd=os.getcwd(),
                                     start_new_session=True)
        self.log.close()  # the server has its own descriptor for it
        self.requests, self.answers = cast(IO[bytes], self.proc.stdin), cast(IO[bytes], self.proc.stdout)  # both piped
        self.channel = Channel(self.answers.fileno(), max_memory_mb)

    def wait_ready(self) -> None:
        """Wait for the server's TensorFlow import; WorkerError when it fails."""
        ready = self.channel.read(IMPORT_TIMEOUT_S, self.proc.pid)
        if ready is None or ready["type"] == "fatal":
            self.kill()
            reason = ready["message"] if ready else (
                f"it exceeded the memory limit of {self.max_memory_mb} MB (see --max-memory)"
                if self.channel.over_memory else death(self.proc.wait(), self.log.name))
            raise WorkerError(f"could not start the TensorFlow worker: {reason}")
        self.tensorflow = ready["tensorflow"]
        self.forks = ready.get("fork", False)
        self.threaded = ready.get("threaded", [])  # preloaded libraries that started threads: replace it

    @property
    def alive(self) -> bool:
        return not self.channel.closed and self.proc.poll() is None

    def kill(self) -> None:
        """Kill the child's process group and the server's, now, and close the pipes to it."""
        kill_group(self.child)
        kill_group(self.proc.pid)
        self.proc.wait()
        self.requests.close()
        self.answers.close()

    def start(self, request: dict) -> int | None:
        """Hand the server a request; the pid of the child serving it, or None when the server did not start
        one (it died since it was last asked, or stopped answering)."""
        try:
            self.requests.write((json.dumps(request) + "\n").encode())
            self.requests.flush()
            start = self.channel.read(IMPORT_TIMEOUT_S, self.proc.pid)
        except OSError:
            start = None
        self.child = start["pid"] if start is not None and start["type"] == "start" else None
        return self.child

    def finish(self, timeout: float) -> tuple[dict | None, str | None]:
        """Wait for the child to end: ``(its exit message or None, why it was killed: "memory", "timeout" or
        None)``. A child past ``timeout`` or the memory limit is killed with its group, then its end heard."""
        assert self.child is not None
        end = self.channel.read(timeout, self.child)
        killed = None
        if end is None and not self.channel.closed:
            killed = "memory" if self.channel.over_memory else "timeout"
            self.channel.over_memory = False
            kill_group(self.child)
            if self.forks:
                end = self.channel.read(EXIT_WAIT_S, self.proc.pid)
        return end, killed

    def done(self, end: dict | None) -> None:
        """After a child's end: a server that does not fork has served its one request, and one that said
        nothing of the child's end is replaced; both are killed (with the child, if it still runs)."""
        if not self.forks or end is None:
            self.kill()
        self.child = None

    def stopped(self) -> str | None:
        """Why a server that did not start a request's child is no use (None: it exited)."""
        if self.proc.poll() is not None:
            return None
        return (f"the tracing server exceeded the memory limit of {self.max_memory_mb} MB (see --max-memory)"
                if self.channel.over_memory else "the tracing server stopped answering")


def start_server(module: str, preload: list[str], env: dict, workdir: str, keep: Callable[[Server], None],
                 max_memory_mb: int = 0) -> Server:
    """A new server, ready; handed to ``keep`` as soon as it is started, before it imports TensorFlow (so an
    interrupt can kill it; ``keep`` may raise to stop there). One whose preloads started threads is
    replaced by one without them (``preload`` loses them, for the next servers too)."""
    while True:
        server = Server(module, preload, env, workdir, max_memory_mb)
        keep(server)
        server.wait_ready()
        if not (server.threaded and server.forks):
            return server
        server.kill()
        preload[:] = [name for name in preload if name not in server.threaded]
