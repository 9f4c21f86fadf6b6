"""Which running ``xlalint server`` the command line traces on (``xlalint.tracing.shared``): one of the checked
file's folder or a folder above it, alive, of the same code; never a stale or dead one, nor any when turned off.
The answers themselves are checked against a cold run in tests/test_lsp_tf.py."""

from __future__ import annotations

import contextlib
import os
import socket
import tempfile
from typing import Iterator

import pytest

from xlalint.tracing.shared import (MAX_SOCKET_PATH, OFF, SharedServer, _private_folder, find_shared, socket_path,
                                    worth_sharing)
from xlalint.tracing.warm import WarmServer


@contextlib.contextmanager
def offering(folder) -> Iterator[SharedServer]:
    """A warm server offered for ``folder`` (its server never started: a lookup only asks it its code)."""
    shared = SharedServer(WarmServer(), str(folder))
    try:
        assert shared.open()
        yield shared
    finally:
        shared.close()
        shared.warm.close()


def found(file) -> bool:
    """Whether the command line finds a server for ``file``."""
    connection = find_shared([str(file)])
    if connection is not None:
        connection.close()
    return connection is not None


@pytest.fixture
def offered(tmp_path):
    with offering(tmp_path) as shared:
        yield shared


def test_a_live_server_of_the_same_code_above_the_file_is_used(offered, tmp_path, monkeypatch):
    monkeypatch.delenv(OFF, raising=False)
    (tmp_path / "pkg").mkdir()
    assert found(tmp_path / "pkg" / "model.py")
    assert not found(tmp_path.parent / "elsewhere.py")  # not in its workspace


def test_a_stale_server_is_not_used(offered, tmp_path, monkeypatch):
    monkeypatch.delenv(OFF, raising=False)
    offered.fingerprint = "another version of xlalint"
    assert not found(tmp_path / "model.py")


def test_turned_off(offered, tmp_path, monkeypatch):
    monkeypatch.setenv(OFF, "1")
    assert not found(tmp_path / "model.py")


def test_a_dead_servers_socket_is_not_used_and_a_new_server_replaces_it(tmp_path, monkeypatch):
    monkeypatch.delenv(OFF, raising=False)
    path = socket_path(str(tmp_path), make=True)
    assert path is not None
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # the file stays, nobody listens
    assert not found(tmp_path / "model.py")
    with offering(tmp_path):
        assert found(tmp_path / "model.py")
    assert not path.exists()


def test_a_deep_cache_and_workspace_still_get_a_short_socket_of_their_own(tmp_path, monkeypatch):
    """A socket's path has about 104 bytes (macOS); a temporary folder there alone takes half of them."""
    monkeypatch.delenv(OFF, raising=False)
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    workspace = deep / "workspace"
    workspace.mkdir(parents=True)
    monkeypatch.setenv("XDG_CACHE_HOME", str(deep / "cache"))
    path = socket_path(str(workspace), make=True)
    assert path is not None and len(str(path)) < MAX_SOCKET_PATH
    assert path == socket_path(str(workspace)) != socket_path(str(deep))  # stable, one per folder, found as made
    with offering(workspace):
        assert found(workspace / "model.py")
        monkeypatch.setenv("XDG_CACHE_HOME", str(deep / "another cache"))
        assert socket_path(str(workspace)) != path and not found(workspace / "model.py")  # another cache's


def test_a_socket_folder_others_can_enter_is_not_used(tmp_path):
    """Whoever can reach the socket has the server trace files: ``/tmp``'s folder must be this user's alone."""
    folder = tmp_path / "servers"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    assert not _private_folder(folder, make=True)
    folder.chmod(0o700)
    assert _private_folder(folder, make=True)


def test_a_lookup_makes_no_folder(tmp_path, monkeypatch):
    """The command line looks for a server on every run: where none was ever offered, it leaves nothing behind (a
    cache short enough for the socket to go there)."""
    monkeypatch.delenv(OFF, raising=False)
    with tempfile.TemporaryDirectory(prefix="x") as short:
        monkeypatch.setenv("XDG_CACHE_HOME", short)
        assert not found(tmp_path / "model.py")
        assert not os.listdir(short)


def test_a_warm_server_takes_a_run_while_its_import_saves_more_than_the_other_jobs_would():
    assert all(worth_sharing(files, 1) for files in (1, 50, 1000))  # one job: nothing to lose
    assert worth_sharing(20, 2) and not worth_sharing(21, 2)
    assert worth_sharing(11, 8) and not worth_sharing(12, 8)
    assert worth_sharing(0, 8)


def test_the_check_command_asks_for_a_server_only_once_it_has_files_to_trace(offered, tmp_path, monkeypatch):
    """A run whose files the cache answers, or whose tracer is never called, connects to no server (the lookup is
    the real one, counted)."""
    from xlalint.cli.main import _tracer
    from xlalint.settings.table import Options
    from xlalint.tracing import shared

    monkeypatch.delenv(OFF, raising=False)
    asked: list[list[str]] = []
    monkeypatch.setattr(shared, "find_shared", lambda paths: asked.append(paths) or find_shared(paths))
    paths = [str(tmp_path / "model.py")]
    assert found(tmp_path / "model.py")  # a server is there to be found
    _tracer(paths, Options(jobs=2))
    assert asked == []
