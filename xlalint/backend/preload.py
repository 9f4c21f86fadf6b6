"""Make a server ready to fork: what every child would otherwise redo, done once.

Before it forks a child per file (or per ``xlalint run`` command), the server imports the optional
libraries the checked files or run scripts import (``xlalint.tracing.preload_plan``), the modules every
child imports, answers "is this a user
file?" for every module already loaded (each child asks it of all of them for the cache's
dependency list), lets AutoGraph convert one function (its converter's first use costs far more
than the next), and moves every object it holds to the garbage collector's permanent generation,
so that a child's collections neither walk nor copy the server's heap.

Nothing here may start a thread (a forked child inherits none of them, and a lock one held stays
held) or change state a user file can see: no Keras layer or model is built (names and uids
would move), no eager context is made (it starts TensorFlow's thread pools).
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
import threading

from xlalint.backend.frames import is_user_file

CHECK_MODULES = ("xlalint.backend.discover", "xlalint.backend.run.harness", "xlalint.backend.graph_export",
                 "xlalint.backend.keras_jit", "xlalint.backend.keras_step", "xlalint.backend.trace_errors",
                 "encodings.utf_8_sig")


def thread_ids() -> set[int]:
    """Threads of this process: every native one on Linux (/proc); elsewhere those Python started."""
    try:
        return {int(task) for task in os.listdir("/proc/self/task")}
    except OSError:
        return {thread.native_id for thread in threading.enumerate() if thread.native_id is not None}


def import_optional(names: list[str]) -> list[str]:
    """Import each named library; returns the ones that started a thread while being imported (one that
    was not there before, whatever other threads ended meanwhile; they stay imported: the caller asks for
    a server without them)."""
    threaded = []
    for name in names:
        before = thread_ids()
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a broken install: each file that imports it says so itself
            continue
        if thread_ids() - before:
            threaded.append(name)
    return threaded


def _converted_once(x):
    """A function for AutoGraph's first conversion (a loop and a branch, as user code has)."""
    total = x
    for _ in range(2):
        if total > 0:
            total = total - 1
    return total


def warm(modules: tuple[str, ...]) -> None:
    """Import the modules each child needs, fill the user-file cache, convert one function, freeze the heap
    (its garbage too: collecting it first costs a fifth of a second, and the server is short-lived)."""
    import tensorflow as tf

    for name in modules:
        importlib.import_module(name)
    try:
        tf.autograph.to_graph(_converted_once)
    except Exception:  # noqa: BLE001 - e.g. no source to read: each child then converts from scratch
        pass
    for module in list(sys.modules.values()):
        filename = getattr(module, "__file__", None)
        if isinstance(filename, str):
            is_user_file(filename)
    gc.freeze()
