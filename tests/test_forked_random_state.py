"""Children forked from one server draw their own NumPy random numbers, as fresh interpreters do."""

from __future__ import annotations

import os

import numpy as np
import pytest

from xlalint.backend import fork_server

pytestmark = pytest.mark.skipif(not fork_server.FORK_SAFE, reason="servers fork only on Linux")


def _draw(request: dict) -> None:
    with open(request["out"], "w", encoding="utf-8") as out:
        out.write(repr(float(np.random.random())))


def test_each_forked_child_draws_its_own_numpy_numbers(tmp_path):
    saved = np.random.get_state()
    np.random.seed(1)  # the server's generator when it forks: every child would inherit it
    try:
        with open(os.devnull, "w", encoding="utf-8") as channel:
            drawn = []
            for number in range(2):
                out = tmp_path / f"{number}.txt"
                assert fork_server._fork(_draw, {"out": str(out)}, channel) == 0  # noqa: SLF001 - the server's fork
                drawn.append(float(out.read_text(encoding="utf-8")))
        assert drawn[0] != drawn[1]
    finally:
        np.random.set_state(saved)
