"""Children forked from one server draw their own NumPy random numbers, as fresh interpreters do."""

from __future__ import annotations

import os

import numpy as np
import pytest

from xlalint.backend.fork_server import fresh_random_state

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="servers fork only where os.fork exists")


def _draw_in_child(reseed: bool) -> float:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        if reseed:
            fresh_random_state()
        os.write(write, repr(float(np.random.random())).encode())
        os._exit(0)
    os.close(write)
    try:
        return float(os.read(read, 64))
    finally:
        os.close(read)
        os.waitpid(pid, 0)


def test_children_draw_their_own_numpy_numbers():
    np.random.seed(1)  # the server's state when it forks
    assert _draw_in_child(reseed=False) == _draw_in_child(reseed=False)  # what a child inherits
    assert _draw_in_child(reseed=True) != _draw_in_child(reseed=True)
