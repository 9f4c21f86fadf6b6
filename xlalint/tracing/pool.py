"""The servers of one run, one per job: TensorFlow imported once, every other server a clone of the first.

With several jobs where servers fork, the first server (the origin) serves no request: each job's
server is a clone the origin forks, and so is any that must be replaced; where clones cannot be made
here, each job starts a fresh server instead. Used by the check command's tracing (``workers.py``) and
by ``xlalint run``'s listed commands (``run/client.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from xlalint.backend.fork_server import forking
from xlalint.tracing.server import CloneFailed, Server, start_server


class ServerPool:
    """Servers of ``module`` (``xlalint.tracing.server.start_server``) for ``jobs`` threads at once."""

    def __init__(self, module: str, preload: list[str], env: dict, workdir: str, name: str, jobs: int,
                 max_memory_mb: int = 0, stopped: Callable[[], BaseException | None] = lambda: None):
        """``stopped()``: why the run stopped, if it did: a server started then is killed, and that raised."""
        self.module, self.preload, self.env, self.workdir, self.name = module, preload, env, workdir, name
        self.max_memory_mb, self.stopped = max_memory_mb, stopped
        self.cloning = jobs > 1 and forking()  # each job's server a clone of the origin
        self.origin: Server | None = None
        self.origin_lock = threading.Lock()  # one thread at a time starts the origin or asks it for a clone
        self.lock = threading.Lock()
        self.servers: list[Server] = []
        self.tensorflow: str | None = None

    def start_origin(self) -> None:
        """Start the origin in the calling thread when cloning: a server dies with the thread that started it
        (``PR_SET_PDEATHSIG``), and a thread that outlives every job's keeps the clones alive."""
        if self.cloning:
            with self.origin_lock:
                if self.origin is None:
                    self.origin = self._fresh()

    def server(self) -> Server:
        """A server for one thread: when cloning, a clone of the origin, else a fresh one."""
        with self.origin_lock:
            server = self._clone() if self.cloning else None
        if server is None:
            return self._fresh()
        self._keep(server)
        return server

    def _clone(self) -> Server | None:
        """A clone of the origin (started first, or again once it is dead; ``start_server`` never returns a
        forking server whose preloads started threads); None, and no more cloning in this run, when this
        process cannot make one."""
        if self.origin is None or not self.origin.alive:
            if self.origin is not None:
                self.origin.kill()
            self.origin = self._fresh()
        try:
            return self.origin.clone(self.workdir)
        except CloneFailed:  # a reason of this process's (no FIFOs here): fresh servers still work
            self.cloning = False
            return None

    def _fresh(self) -> Server:
        server = start_server(self.module, self.preload, self.env, self.workdir, self._keep, self.name,
                              self.max_memory_mb)
        with self.lock:
            self.tensorflow = server.tensorflow
        return server

    def _keep(self, server: Server) -> None:
        """Known to ``kill_all`` while it imports TensorFlow: an interrupt then kills it too."""
        with self.lock:
            self.servers.append(server)
        stopped = self.stopped()
        if stopped is not None:
            server.kill()
            raise stopped

    def stop_origin(self) -> None:
        """End the origin in order: it reaps its clones first, so that their time counts as its children's."""
        if self.origin is not None:
            self.origin.stop()

    def kill_all(self) -> None:
        """Kill every server of the run with everything it started."""
        with self.lock:
            for server in self.servers:
                server.kill()
