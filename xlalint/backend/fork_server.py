"""What both TensorFlow servers share: import TensorFlow once, then serve each request in a forked child.

The check command's tracing server (``worker``) and ``xlalint run``'s (``run_server``) are this
loop with their own request handler. A server reads one JSON request per line on stdin and writes
one JSON message per line to the descriptor that was stdout when it started: ``ready`` (versions;
``fork``; ``threaded``: the preloaded libraries that started threads, after which it must not
fork) or ``fatal`` (no TensorFlow), then ``start`` (the child's pid) and ``exit`` (its exit code)
for each request. Each child starts its own session, so the parent can kill it with everything it
started. Where fork is unavailable (or ``XLALINT_NO_FORK=1``) the server handles one request in
its own process and ends: the parent starts a fresh interpreter for the next.

A forking server also answers ``clone`` requests between requests: it forks a copy of itself (TensorFlow
and the preloads already imported) that serves two FIFOs the request names, logs to its own file and
dies with this server; the answer is ``clone`` with the copy's pid. The copy leads its own session, and
the server reaps the copies that ended at its next clone request, and all of them once its requests end.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import traceback
from typing import Any, Callable, NoReturn

from xlalint.process.child_end import kill_group

MIN_TENSORFLOW = (2, 16)  # the first release with Keras 3
# Forking a process that has imported TensorFlow but run nothing is sound on Linux (no runtime
# threads or eager context exist yet); elsewhere each request gets a fresh interpreter.
FORK_SAFE = sys.platform.startswith("linux") and hasattr(os, "fork")
FAILED = 70  # a child's exit code when xlalint itself failed in it (its traceback is in its log)

Handler = Callable[[Any], None]  # called with the request


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".")[:2] if part.isdigit())


def send(channel, message: dict) -> None:
    # Messages are plain trees, many MB for a large graph: skip the cycle check and the spaces.
    channel.write(json.dumps(message, check_circular=False, separators=(",", ":")) + "\n")
    channel.flush()


def die_with_parent() -> None:
    """Ask Linux to kill this process when the one that started it dies (no orphans running user code)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the parent's process-group kill still applies


def open_channel():
    """The message channel (this process's stdout); whatever else is printed here goes to stderr."""
    channel = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    die_with_parent()
    return channel


def import_tensorflow(channel, modules: tuple[str, ...]) -> tuple[str, str] | None:
    """Import TensorFlow, Keras and ``modules``; ``(tensorflow, keras)`` versions, or None once ``fatal`` is sent."""
    import importlib

    try:
        import keras
        import tensorflow as tf

        if _version_tuple(tf.__version__) < MIN_TENSORFLOW:  # before xlalint's modules, which need a newer one
            send(channel, {"type": "fatal", "message": f"TensorFlow {tf.__version__} is not supported: xlalint "
                           f"needs {'.'.join(map(str, MIN_TENSORFLOW))} or newer (Keras 3)"})
            return None
        for name in modules:
            importlib.import_module(name)
    except ImportError as error:
        send(channel, {"type": "fatal", "message": f"TensorFlow cannot be imported: {error}"})
        return None
    return tf.__version__, keras.__version__


def forking() -> bool:
    return FORK_SAFE and os.environ.get("XLALINT_NO_FORK") != "1"


def ready(channel, versions: tuple[str, str], started: float, libraries: list[str], warmed: tuple[str, ...]) -> bool:
    """Preload ``libraries`` and warm (only when forking: a process that serves one request has nothing
    to share), then say ``ready``; returns whether this server forks."""
    fork = forking()
    threaded: list[str] = []
    if fork:
        from xlalint.backend.preload import import_optional, warm

        threaded = import_optional(libraries)
        warm(warmed)
    send(channel, {"type": "ready", "tensorflow": versions[0], "keras": versions[1],
                   "import_s": time.perf_counter() - started, "fork": fork, "threaded": threaded})
    return fork


def redirect_output(log_path: str) -> None:
    """This process's stdin from /dev/null (user code must not read the server's requests), its output to a log."""
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)


def fresh_random_state() -> None:
    """Seed NumPy's global generator from the OS, as a fresh interpreter does: a forked child would
    otherwise draw the server's sequence, the same in every child. (Python's ``random`` reseeds itself.)"""
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()


def _handle_and_exit(handle: Handler, request: dict) -> None:
    """Handle one request, then end this process at once: user threads and TensorFlow's teardown must
    not keep it alive."""
    code = 0
    try:
        handle(request)
    except BaseException:  # noqa: BLE001 - xlalint's own failure: its traceback goes to the log
        traceback.print_exc()
        code = FAILED
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _fork(handle: Handler, request: dict, channel) -> int:
    """Handle one request in a forked child with its own session; returns its exit code once it ends."""
    pid = os.fork()
    if pid == 0:
        def detached(request: dict) -> None:
            os.close(channel.fileno())
            os.setsid()
            die_with_parent()
            fresh_random_state()
            handle(request)

        _handle_and_exit(detached, request)
    send(channel, {"type": "start", "pid": pid})
    status = os.waitpid(pid, 0)[1]
    kill_group(pid)  # whatever the child started goes with it
    return os.waitstatus_to_exitcode(status)


CLONES: set[int] = set()  # this server's copies not reaped yet


def _reap_clones(wait: bool = False) -> None:
    """Reap the copies that ended; with ``wait``, all of them, waiting for those still running (the time they
    used then counts as this server's children's). Only copies: a process a preloaded library started is
    not waited for."""
    for pid in list(CLONES):
        try:
            if os.waitpid(pid, 0 if wait else os.WNOHANG)[0]:
                CLONES.discard(pid)
        except ChildProcessError:
            CLONES.discard(pid)


def _clone(paths: dict, channel, serve_copy: Callable[[Any], None]) -> None:
    """Fork a copy of this server that reads its requests from ``paths["requests"]`` and writes its messages
    to ``paths["messages"]`` (FIFOs whose other ends the parent holds open: no open here waits), its output
    to ``paths["log"]``; say its pid."""
    requests = os.open(paths["requests"], os.O_RDONLY)
    messages = os.open(paths["messages"], os.O_WRONLY)
    server = os.getpid()
    pid = os.fork()
    if pid == 0:
        def copy(paths: dict) -> None:
            os.setsid()
            die_with_parent()
            if os.getppid() != server:  # the server died before the line above: its copy goes too
                return
            os.close(channel.fileno())  # the parent must see the server's channel close when the server dies
            redirect_output(paths["log"])
            os.dup2(requests, 0)  # as stdin: a child it forks replaces fd 0, so no user code reads requests
            os.close(requests)
            sys.stdin = open(0, encoding="utf-8", closefd=False)
            serve_copy(os.fdopen(messages, "w"))

        _handle_and_exit(copy, paths)
    os.close(requests)
    os.close(messages)
    CLONES.add(pid)
    _reap_clones()
    send(channel, {"type": "clone", "pid": pid})


def serve(channel, handle: Handler, fork: bool) -> NoReturn:
    """Answer each request on stdin: in a forked child, or (not forking) here, once, ending this process;
    a ``clone`` request (forking servers only) with a copy of this server. At the end of stdin, reap the
    clones and end."""
    for line in sys.stdin:
        request = json.loads(line)
        if "clone" in request:
            _clone(request["clone"], channel, lambda copy: serve(copy, handle, fork))
            continue
        if not fork:
            send(channel, {"type": "start", "pid": os.getpid()})
            _handle_and_exit(handle, request)
        send(channel, {"type": "exit", "code": _fork(handle, request, channel)})
    _reap_clones(wait=True)
    sys.stderr.flush()
    os._exit(0)  # at once: a server's teardown (TensorFlow's included) saves nothing
