"""SIGINT/SIGTERM become Interrupted, except inside a held block (an import), which they end instead."""

from __future__ import annotations

import os
import signal
import sys

import pytest

from xlalint.cli.common import Interrupted, interrupts_held, signals_interrupt


def test_a_signal_raises_interrupted_at_once():
    reached = False
    with pytest.raises(Interrupted) as stop, signals_interrupt():
        os.kill(os.getpid(), signal.SIGTERM)
        reached = True
    assert stop.value.signal == signal.SIGTERM and not reached


def test_an_import_is_not_cut_short_by_a_signal(tmp_path, monkeypatch):
    """The module imported inside the held block is whole: the interrupt comes after it, once."""
    (tmp_path / "slow_module.py").write_text(
        "import os, signal\nos.kill(os.getpid(), signal.SIGINT)\nos.kill(os.getpid(), signal.SIGTERM)\n"
        "LAST = 'the end of the module ran'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(Interrupted) as stop, signals_interrupt():
        with interrupts_held():
            import slow_module  # noqa: F401
        pytest.fail("the held interrupt was not raised")
    assert stop.value.signal == signal.SIGINT and sys.modules["slow_module"].LAST
    with pytest.raises(Interrupted), signals_interrupt():  # nothing is held any more
        os.kill(os.getpid(), signal.SIGTERM)
    sys.modules.pop("slow_module")
