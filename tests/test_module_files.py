"""Which file a run's ``-m MODULE`` or script is (``xlalint.inputs.module_files.module_file``), found as ``python -m``
finds it from the run's working directory, without importing the user's packages; and the editor's use of it:
the ``[tool.xlalint] run`` commands whose run reaches a saved file (``xlalint.lsp.listed.reaching``)."""

from __future__ import annotations

import sys

import pytest

from xlalint.inputs.module_files import module_file
from xlalint.lsp.listed import reaching

NEVER_IMPORTED = "raise RuntimeError('imported by xlalint itself')\n"


@pytest.fixture
def project(tmp_path):
    """``pkg`` (a package with ``__main__``, a subpackage ``jobs`` with ``train``) and ``model.py``, which the
    package's ``__main__`` and ``train.py`` import; the packages' ``__init__`` must never run here."""
    (tmp_path / "pkg" / "jobs").mkdir(parents=True)
    for init in ("pkg/__init__.py", "pkg/jobs/__init__.py"):
        (tmp_path / init).write_text(NEVER_IMPORTED)
    (tmp_path / "pkg" / "__main__.py").write_text("import model\n")
    (tmp_path / "pkg" / "jobs" / "train.py").write_text("import tensorflow\n")
    (tmp_path / "train.py").write_text("import model\n")
    (tmp_path / "model.py").write_text("import tensorflow\n")
    return tmp_path


def test_a_package_runs_its_main_and_a_dotted_module_its_own_file(project):
    assert module_file("pkg", str(project)) == str(project / "pkg" / "__main__.py")
    assert module_file("pkg.jobs.train", str(project)) == str(project / "pkg" / "jobs" / "train.py")
    assert "pkg" not in sys.modules


@pytest.mark.parametrize("module", ["pkg.missing", "absent", "pkg..train", "", "pkg.jobs"])  # jobs: no __main__
def test_a_module_python_would_not_find_has_no_file(project, module):
    assert module_file(module, str(project)) is None


def test_a_finders_own_import_error_means_not_found(project, monkeypatch):
    class Refusing:
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name == "refused":
                raise ImportError("this finder refuses it")
            return None

    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Refusing])
    assert module_file("refused", str(project)) is None


def test_the_runs_folder_comes_first_then_sys_path(project, tmp_path_factory, monkeypatch):
    """As ``python -m``: the working directory first, then the interpreter's path (a module installed or on
    ``PYTHONPATH``)."""
    elsewhere = tmp_path_factory.mktemp("site")
    (elsewhere / "tool.py").write_text("")
    (elsewhere / "model.py").write_text("")
    monkeypatch.setattr(sys, "path", [*sys.path, str(elsewhere)])
    assert module_file("tool", str(project)) == str(elsewhere / "tool.py")
    assert module_file("model", str(project)) == str(project / "model.py")


def test_the_listed_commands_that_reach_a_file_from_the_configs_folder(project, tmp_path_factory, monkeypatch):
    """A script path and a module are both from the config's folder, wherever the editor's server runs; a
    package's run is its ``__main__``'s; a module not found reaches nothing."""
    (project / "pyproject.toml").write_text(
        '[tool.xlalint]\nrun = ["train.py --epochs 1", "-m pkg", "-m pkg.jobs.train", "-m absent"]\n')
    monkeypatch.chdir(tmp_path_factory.mktemp("editor"))
    root, commands = reaching(str(project / "model.py"))
    assert root == str(project)
    assert commands == ["train.py --epochs 1", "-m pkg"]
    assert "pkg" not in sys.modules
