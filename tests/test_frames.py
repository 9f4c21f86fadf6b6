"""The user-file test's path resolution: each folder resolved once, the same answer as ``os.path.realpath``."""

from __future__ import annotations

import os

from xlalint.backend.frames import is_user_file, real_file


def test_real_file_matches_realpath_through_links_and_dots(tmp_path, monkeypatch):
    (tmp_path / "real" / "pkg").mkdir(parents=True)
    target = tmp_path / "real" / "pkg" / "model.py"
    target.write_text("x = 1\n")
    (tmp_path / "linked").symlink_to(tmp_path / "real")  # a linked folder
    (tmp_path / "real" / "alias.py").symlink_to(target)  # a linked file
    monkeypatch.chdir(tmp_path)
    for name in (f"{tmp_path}/linked/pkg/model.py", f"{tmp_path}/linked/alias.py", f"{tmp_path}/linked/pkg/../alias.py",
                 "linked/pkg/model.py", f"{tmp_path}/linked/pkg/missing.py", f"{tmp_path}/linked/pkg/..",
                 f"{tmp_path}/linked/.", f"{tmp_path}/linked/"):
        assert real_file(name) == os.path.realpath(name), name
    assert real_file(f"{tmp_path}/linked/alias.py") == str(target.resolve())


def test_a_user_file_behind_a_link_is_one_and_a_library_file_is_not(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text("x = 1\n")
    (tmp_path / "view").symlink_to(tmp_path / "src")
    assert is_user_file(str(tmp_path / "view" / "train.py"))
    assert not is_user_file(str(tmp_path / "view" / "gone.py"))  # not a file
    assert not is_user_file(os.__file__)  # the standard library
