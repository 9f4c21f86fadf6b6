"""Which optional libraries the tracing server imports before forking: read from the files' imports."""

from __future__ import annotations

import ast
import importlib
import itertools
import os

import nbformat
import pytest

from xlalint.tracing import preload_plan
from xlalint.backend import preload
from xlalint.tracing.preload_plan import imported_roots, preloads, run_preloads, sets_environment


def test_imports_at_any_depth_are_read_relative_ones_are_not():
    source = ("import os.path, tf_keras as k\nfrom transformers.models import bert\nfrom . import sibling\n"
              "def f():\n    import tensorflow_probability as tfp\n    return tfp\n")
    assert imported_roots(source) == {"os", "tf_keras", "transformers", "tensorflow_probability"}


def test_a_file_python_cannot_parse_asks_for_nothing():
    assert imported_roots("import tf_keras\ndef broken(:\n") == set()


def test_only_installed_libraries_that_a_file_imports_are_preloaded(tmp_path):
    (tmp_path / "a.py").write_text("import json\nimport not_installed_anywhere\n")
    (tmp_path / "b.py").write_text("from email import message\n")
    (tmp_path / "c.py").write_bytes(b"\xff\xfe not utf-8")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import csv")])
    nbformat.write(notebook, str(tmp_path / "n.ipynb"))
    paths = [str(tmp_path / name) for name in ("a.py", "b.py", "c.py", "n.ipynb")]
    libraries = ("csv", "email", "json", "not_installed_anywhere", "sqlite3")
    assert preloads(paths, libraries) == ["csv", "email", "json"]  # in the given order, imported and installed
    assert preloads(paths[1:2], libraries) == ["email"]
    assert preloads([str(tmp_path / "saved_model_dir")], libraries) == []


@pytest.mark.parametrize("source, sets", [
    ('import os\nos.environ["HF_HUB_OFFLINE"] = "1"\n', True),
    ("from os import environ\nenviron['X'] = '1'\n", True),
    ("import os\ndel os.environ['X']\n", True),
    ("import os\nos.environ.update(X='1')\n", True),
    ("import os\ndef main():\n    os.environ.setdefault('X', '1')\n", True),
    ("import os\nos.putenv('X', '1')\n", True),
    ("import os\ndata = os.environ.get('DATA', '.')\nhome = os.environ['HOME']\n", False),  # reads only
    ("import os\nos.environ |= {'X': '1'}\n", True),
    ("from os import environ\nenviron |= {'X': '1'}\n", True),
    ("from dotenv import load_dotenv\nload_dotenv()\n", True),  # a .env file's variables
    ("import dotenv\ndotenv.load_dotenv('.env')\n", True),
    ("from dotenv import load_dotenv as load\n", True),  # called under another name
    ("from dotenv import dotenv_values\nvalues = dotenv_values()\n", False),  # reads the file only
    ("environ = {}\nx = 1\ncount = 0\ncount |= 1\n", False),
])
def test_a_script_that_sets_environment_variables_is_told_from_one_that_reads_them(source, sets):
    assert sets_environment(ast.parse(source)) is sets


def test_a_run_server_preloads_no_library_a_script_setting_environment_variables_imports(tmp_path):
    """Such a script may set them for that library's import: it must import the library after them."""
    (tmp_path / "sets.py").write_text("import os\nos.environ['JSON_OPTION'] = '1'\nimport json\nimport csv\n")
    (tmp_path / "plain.py").write_text("import json\nimport email\n")
    paths = [str(tmp_path / "sets.py"), str(tmp_path / "plain.py")]
    libraries = ("csv", "email", "json")
    assert preloads(paths, libraries) == ["csv", "email", "json"]
    assert run_preloads([(path, None) for path in paths], libraries) == ["email"]
    assert run_preloads([(paths[1], None)], libraries) == ["email", "json"]


LOCAL_MODULES = {  # a project whose scripts reach a module that sets environment variables through their imports
    "settings.py": "import os\nos.environ.setdefault('JSON_OPTION', '1')\n",
    "conf/__init__.py": "from . import env\n",  # a package that sets them in a submodule, imported relatively
    "conf/env.py": "from settings import *\n",
    "helpers.py": "import csv\n",  # a local module that only imports a library
}


@pytest.mark.parametrize("script, preloaded", [
    ("import settings\nimport json\n", []),  # the local module sets them before the script imports json
    ("from conf import loader\nimport json\n", []),  # through a package's __init__, then `from . import`
    ("import conf.missing\nimport json\n", []),  # the package's __init__ runs even if the submodule is missing
    ("import helpers\nimport json\n", ["csv", "json"]),  # nothing sets them: the local module's library too
    ("import json\nimport email.settings\n", ["email", "json"]),  # email.settings is no local settings.py
])
def test_a_run_script_is_read_with_the_local_modules_it_imports(tmp_path, monkeypatch, script, preloaded):
    for name, source in LOCAL_MODULES.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(source)
    (tmp_path / "train.py").write_text(script)
    monkeypatch.chdir(tmp_path)
    assert run_preloads([(str(tmp_path / "train.py"), None)], ("csv", "email", "json")) == preloaded


def test_the_packages_around_a_module_run_with_dash_m_are_read_too(tmp_path, monkeypatch):
    """``run -m proj.train`` runs ``proj/__init__.py`` first: a variable it sets holds off the preload.
    ``python proj/train.py`` does not run it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "train.py").write_text("import json\n")
    (tmp_path / "proj" / "__init__.py").write_text("import csv\n")
    train = str(tmp_path / "proj" / "train.py")
    assert run_preloads([(train, "proj.train")], ("csv", "json")) == ["csv", "json"]
    (tmp_path / "proj" / "__init__.py").write_text("import os\nos.environ['JSON_OPTION'] = '1'\n")
    assert run_preloads([(train, "proj.train")], ("csv", "json")) == []
    assert run_preloads([(train, None)], ("csv", "json")) == ["json"]


@pytest.mark.parametrize("file, module, inits", [
    ("/train.py", "train", []),  # a module at the filesystem's root: no package
    ("/proj/train.py", "proj.train", ["/proj/__init__.py"]),
    ("/proj/__main__.py", "proj", ["/proj/__init__.py"]),  # a package runs its __main__ after its __init__
    ("/proj/__main__.py", "proj.__main__", ["/proj/__init__.py"]),
    ("/a/b/c.py", "a.b.c", ["/a/b/__init__.py", "/a/__init__.py"]),
])
def test_the_packages_run_first_are_those_the_module_name_goes_through(monkeypatch, file, module, inits):
    """Only the name's packages, even where every folder up to the filesystem's root holds an ``__init__.py``."""
    monkeypatch.setattr(preload_plan.os.path, "isfile", lambda path: os.path.basename(path) == "__init__.py")
    assert list(itertools.islice(preload_plan._package_inits(file, module), 5)) == inits


@pytest.mark.parametrize("module, preloaded", [
    (None, ["json"]),  # `python pkg/train.py`: pkg/config.py, next to the script; the working directory is not searched
    ("pkg.train", []),  # `python -m pkg.train`: the working directory's config.py, which sets variables
])
def test_a_run_scan_searches_the_folders_python_searches_for_the_run(tmp_path, monkeypatch, module, preloaded):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text("import config\nimport json\n")
    (tmp_path / "pkg" / "config.py").write_text("BATCH = 32\n")
    (tmp_path / "config.py").write_text("import os\nos.environ['JSON_OPTION'] = '1'\n")
    assert run_preloads([(str(tmp_path / "pkg" / "train.py"), module)], ("json",)) == preloaded


@pytest.mark.parametrize("module", [None, "train"])
def test_a_run_scan_follows_imports_into_pythonpath(tmp_path, monkeypatch, module):
    """A package under a ``PYTHONPATH`` folder (``src/``, given relative to the working directory) is local too."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", "src")
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("")
    (tmp_path / "src" / "pkg" / "settings.py").write_text("import os\nos.environ['JSON_OPTION'] = '1'\n")
    (tmp_path / "train.py").write_text("from pkg import settings\nimport json\n")
    assert run_preloads([(str(tmp_path / "train.py"), module)], ("json",)) == []
    monkeypatch.delenv("PYTHONPATH")
    assert run_preloads([(str(tmp_path / "train.py"), module)], ("json",)) == ["json"]


def test_a_run_scan_reads_each_file_once_and_gives_up_past_its_bound(tmp_path, monkeypatch):
    """Past the bound the local modules not read could set anything: nothing is preloaded for the script."""
    monkeypatch.chdir(tmp_path)
    for index in range(3):
        (tmp_path / f"part{index}.py").write_text(f"import part{index + 1}\nimport part0\nimport csv\n")
    (tmp_path / "train.py").write_text("import part0\nimport json\n")
    reads = []
    real = preload_plan.read_source
    monkeypatch.setattr(preload_plan, "read_source", lambda path: reads.append(path) or real(path))
    assert run_preloads([(str(tmp_path / "train.py"), None)], ("csv", "json")) == ["csv", "json"]
    assert sorted(map(os.path.basename, reads)) == ["part0.py", "part1.py", "part2.py", "train.py"]
    monkeypatch.setattr(preload_plan, "MAX_LOCAL_MODULES", 3)
    assert run_preloads([(str(tmp_path / "train.py"), None)], ("csv", "json")) == []


@pytest.mark.parametrize("proc", [True, False], ids=["linux-proc", "no-proc"])
def test_a_library_that_starts_a_thread_at_import_is_named_for_a_server_without_it(tmp_path, monkeypatch, proc):
    """Forking after a thread started is unsafe: the server reports such a library (the client then
    starts one without it); a missing or broken one is left to the files that import it. Threads are
    read from /proc where there is one, else from Python's own list; a library whose import starts one
    while another ends (the count stays) is named too."""
    if proc and not os.path.isdir("/proc/self/task"):
        pytest.skip("no /proc on this system")
    if not proc:
        def no_proc(path):
            raise FileNotFoundError(path)
        monkeypatch.setattr(preload.os, "listdir", no_proc)
    suffix = "_proc" if proc else "_noproc"  # fresh module names: an imported module is not imported again
    (tmp_path / f"quiet_lib{suffix}.py").write_text("VALUE = 1\n")
    (tmp_path / f"threaded_lib{suffix}.py").write_text(
        "import threading\nimport time\n\nthreading.Thread(target=time.sleep, args=(2,), daemon=True).start()\n")
    (tmp_path / f"broken_lib{suffix}.py").write_text("raise RuntimeError('broken install')\n")
    (tmp_path / f"waiting{suffix}.py").write_text(
        "import threading\n\nstop = threading.Event()\nthread = threading.Thread(target=stop.wait, daemon=True)\n")
    (tmp_path / f"swapping_lib{suffix}.py").write_text(
        f"import threading\nimport time\n\nfrom waiting{suffix} import stop, thread\n\nstop.set()\nthread.join()\n"
        "threading.Thread(target=time.sleep, args=(2,), daemon=True).start()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module(f"waiting{suffix}").thread.start()  # a thread of the process that ends meanwhile
    names = [f"{name}{suffix}" for name in ("quiet_lib", "threaded_lib", "broken_lib", "missing_lib", "swapping_lib")]
    assert preload.import_optional(names) == [f"threaded_lib{suffix}", f"swapping_lib{suffix}"]
