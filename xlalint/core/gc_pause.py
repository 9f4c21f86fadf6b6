"""Pause Python's cyclic garbage collector while large acyclic data is built."""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def gc_paused():
    """No collection inside the block. Each one scans every live object (all of TensorFlow in
    the worker, every decoded graph in the parent) while op records, built by the thousand and
    free of cycles, give it nothing to collect: it doubles the time of an export or a decode."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
