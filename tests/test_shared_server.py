"""Which running ``xlalint server`` the command line traces on (``xlalint.tracing.shared``): one of the checked
file's folder or a folder above it, alive, of the same code; never a stale or dead one, nor any when turned off.
The answers themselves are checked against a cold run in tests/test_lsp_tf.py."""

from __future__ import annotations

import socket

import pytest

from xlalint.tracing.shared import OFF, SharedServer, find_shared, socket_path
from xlalint.tracing.warm import WarmServer


@pytest.fixture
def offered(tmp_path):
    shared = SharedServer(WarmServer(), str(tmp_path))
    assert shared.open()
    yield shared
    shared.close()
    shared.warm.close()


def test_a_live_server_of_the_same_code_above_the_file_is_used(offered, tmp_path, monkeypatch):
    monkeypatch.delenv(OFF, raising=False)
    (tmp_path / "pkg").mkdir()
    connection = find_shared([str(tmp_path / "pkg" / "model.py")])
    assert connection is not None
    connection.close()
    assert find_shared([str(tmp_path.parent / "elsewhere.py")]) is None  # not in its workspace


def test_a_stale_server_is_not_used(offered, tmp_path, monkeypatch):
    monkeypatch.delenv(OFF, raising=False)
    offered.fingerprint = "another version of xlalint"
    assert find_shared([str(tmp_path / "model.py")]) is None


def test_turned_off(offered, tmp_path, monkeypatch):
    monkeypatch.setenv(OFF, "1")
    assert find_shared([str(tmp_path / "model.py")]) is None


def test_a_dead_servers_socket_is_not_used_and_a_new_server_replaces_it(tmp_path, monkeypatch):
    monkeypatch.delenv(OFF, raising=False)
    path = socket_path(str(tmp_path))
    path.parent.mkdir(parents=True, exist_ok=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # the file stays, nobody listens
    assert find_shared([str(tmp_path / "model.py")]) is None
    shared = SharedServer(WarmServer(), str(tmp_path))
    try:
        assert shared.open()
        connection = find_shared([str(tmp_path / "model.py")])
        assert connection is not None
        connection.close()
    finally:
        shared.close()
        shared.warm.close()
    assert not path.exists()
