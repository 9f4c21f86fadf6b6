"""Jupyter notebooks in every mode: cells joined into one module, findings at cell and line, fixes that
change only the edited source strings, and a per-file error for each kind of bad notebook."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import nbformat
import pytest

from helpers import REPO, repo_env, run_json, run_without_tf, run_xlalint
from xlalint.autocluster.program import sites_in
from xlalint.ci.github_action import changed_python_files
from xlalint.settings.config import load_config
from xlalint.engine.analysis import static_report
from xlalint.inputs.files import display_path
from xlalint.fixes import Guard, fix_files
from xlalint.fixes.notebook import rewrite
from xlalint.inputs.notebooks import MAGIC, NotebookError, parse_notebook
from xlalint.report import EMITTERS
from xlalint.settings.table import Options

NOTEBOOKS = REPO / "fixtures/notebooks"
BLOCKER = NOTEBOOKS / "blocker_in_cell3.ipynb"
BLOCKER_LINE = '    noisy = tf.numpy_function(lambda a: a + np.float32(0.1), [batch], tf.float32)'
BAD = {
    "not_json.ipynb": "not a notebook: the file is not valid JSON",
    "nbformat3.ipynb": "nbformat 3 is not supported",
    "syntax_error.ipynb": "syntax error in cell 3 at line 2: '(' was never closed",
    "empty.ipynb": "empty notebook: no code cell has Python code",
}


def _file_line(path, text: str) -> int:
    """The line of the .ipynb file whose JSON string holds ``text``."""
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if json.dumps(text)[1:-1] in line)


def _blocker(findings: list[dict]) -> dict:
    return next(f for f in findings if f["code"] == "XLA001" and f["path"].endswith(BLOCKER.name))


# --- the module a notebook becomes ---------------------------------------------------------------------

def test_code_cells_become_one_module_and_lines_map_back():
    module = parse_notebook(BLOCKER.read_text())
    lines = module.source.splitlines()
    assert [c.number for c in module.cells] == [2, 3, 5, 6]  # markdown cells count, as in ruff
    line = lines.index(BLOCKER_LINE) + 1
    assert module.place(line) == {"cell": 3, "line": 3, "file_line": _file_line(BLOCKER, BLOCKER_LINE + "\n")}
    original = [line for cell in nbformat.read(BLOCKER, 4).cells if cell.cell_type == "code"
                for line in cell.source.splitlines()]
    assert len(lines) == len(original)  # every line kept, so every position maps back


def test_reading_a_notebook_imports_neither_nbformat_nor_jsonschema():
    """Their import costs seconds where Jupyter installed jsonschema's format checkers: paid by every run."""
    probe = ("import sys; from xlalint.inputs.notebooks import read_notebook; "
             f"read_notebook({str(BLOCKER)!r}); print(sorted({{'nbformat', 'jsonschema'}} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=repo_env(), timeout=120)
    assert done.stdout.strip() == "[]", done.stderr


def test_magics_and_shell_lines_keep_their_lines_out_of_the_python():
    module = parse_notebook(BLOCKER.read_text())
    code = {c.number: c.code for c in module.cells}
    assert code[2][:2] == (MAGIC, MAGIC)  # %matplotlib inline, !pip install
    assert code[5] == (MAGIC,) * 3  # a %%bash cell is not Python
    assert code[6] == (MAGIC, "batch = tf.ones([8, 4])", MAGIC, "print(batch.shape)")  # x = !ls, obj?
    timed = _notebook(["%%time\nx = 1\n!echo a \\\n  b\nif x:\n    %pwd"])
    assert parse_notebook(timed).cells[0].code == (MAGIC, "x = 1", MAGIC, MAGIC, "if x:", "    " + MAGIC)


def test_env_magics_set_the_variable_as_ipython_does_and_its_xla_mode_is_read(tmp_path):
    """``%env NAME=VALUE`` and ``%set_env NAME VALUE`` set the variable (IPython's own meaning); other
    forms (list, print) stay magic lines. The auto-clustering it turns on is read from the notebook."""
    text = _notebook(["%env TF_XLA_FLAGS=--tf_xla_auto_jit=2\n%env\n%env HOME\nif True:\n    %set_env DATA ./data"])
    assert parse_notebook(text).cells[0].code == (
        "__import__('os').environ['TF_XLA_FLAGS'] = '--tf_xla_auto_jit=2'  # magic", MAGIC, MAGIC, "if True:",
        "    __import__('os').environ['DATA'] = './data'  # magic")
    (tmp_path / "env.ipynb").write_text(text)
    assert [site.line for site in sites_in(str(tmp_path / "env.ipynb"))] == [1]


PROGRAM_MAGICS = [  # cells whose magics change the program: IPython's meaning is the truth
    "%env GREETING=hello\n%set_env TARGET world\n%cd sub\n%run helper.py one two",
    "%run -i counter.py\n%time doubled = counted * 2\n%timeit -n 1 -r 1 tripled = counted * 3\n"
    "%timeit -n1 -r1 calls.append(counted)",
    "%load_ext extension_here\nif True:\n    %cd ..\nplace = __import__('os').path.basename(__import__('os').getcwd())",
    "%run sub/alone.py\nafter = list(__import__('sys').argv)",
    "cd sub", "ls -a", "bare_place = __import__('os').path.basename(__import__('os').getcwd())", "\ncd ..",
    "history = [bare_place]",
    "%%writefile written.py\nWRITTEN = 'first'\n", "%%writefile -a written.py\nMORE = 2",
    "written_text = open('written.py').read()",
]
PROGRAM_FILES = {"sub/helper.py": "import sys\nseen_argv = sys.argv[1:]\n_private = 1\nname = __name__\n",
                 "sub/counter.py": "counted = len(seen_argv)\ncalls = []\n",
                 "sub/extension_here.py": "import os\nos.environ['LOADED'] = 'yes'\n",
                 "sub/alone.py": "import sys\nalone_argv = list(sys.argv)\n"}
SEEN = ("seen_argv", "name", "counted", "doubled", "tripled", "place", "calls", "alone_argv", "after", "written_text",
        "bare_place", "history")


def _program_folder(tmp_path, name: str):
    folder = tmp_path / name / "project"
    for path, text in PROGRAM_FILES.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    return folder


def test_program_magics_do_what_ipython_does(tmp_path, monkeypatch):
    """%env, %set_env, %cd, %run (with arguments, and -i), %load_ext, %time, %timeit, %%writefile and magics
    without their % in a one-line cell (automagic: `cd sub`, `ls -a`), run from the module xlalint makes of the
    notebook, leave the same names, variables, files and working directory as IPython's shell."""
    from IPython.core.interactiveshell import InteractiveShell

    results = []
    for how in ("ipython", "xlalint"):
        monkeypatch.setattr(sys, "argv", ["notebook", "--its-own"])  # %run sets it, and puts it back
        folder = _program_folder(tmp_path, how)
        monkeypatch.chdir(folder)
        monkeypatch.syspath_prepend(str(folder / "sub"))
        for variable in ("GREETING", "TARGET", "LOADED"):  # unset, and unset again after the test
            monkeypatch.setenv(variable, "")
            monkeypatch.delenv(variable)
        if how == "ipython":
            shell = InteractiveShell.instance()
            for cell in PROGRAM_MAGICS:
                assert shell.run_cell(cell).success, cell
            names = shell.user_ns
        else:
            names = {"__name__": "__main__"}
            exec(compile(parse_notebook(_notebook(PROGRAM_MAGICS)).source, "nb.ipynb", "exec"), names)
        results.append(({n: names.get(n) for n in SEEN}, [__import__("os").environ.get(v) for v in
                                                           ("GREETING", "TARGET", "LOADED")],
                        __import__("os").getcwd() == str(folder), "_private" in names))
        __import__("sys").modules.pop("extension_here", None)
    assert results[0] == results[1]
    assert results[1][0]["seen_argv"] == ["one", "two"] and results[1][0]["tripled"] is None  # timeit's own names
    assert results[1][0]["calls"] and results[1][0]["place"] == "project"  # the statement ran
    assert results[1][0]["alone_argv"] == ["sub/alone.py"] and results[1][0]["after"] == ["notebook", "--its-own"]
    assert results[1][0]["bare_place"] == "sub" and results[1][0]["history"] == ["sub"]
    assert results[1][0]["written_text"] == "WRITTEN = 'first'\nMORE = 2\n"  # IPython ends the cell's text


def test_lines_that_continue_a_statement_are_python_as_in_ipython():
    """IPython finds magics per logical line: a continuation line opening with `%` (a modulo, as a TensorFlow
    tutorial's print writes it) and `!` or `%` inside a string are Python, and the notebook parses."""
    from IPython.core.inputtransformer2 import TransformerManager
    source = ("epoch = 3\nprint('epoch %d, loss %f'\n      % (epoch, 0.5))\nnote = '''\n!not a shell line\n"
              "%not a magic\n'''\nleft = 7 \\\n    % 4\n!echo after")
    module = parse_notebook(_notebook([source]))
    assert module.cells[0].code == tuple(source.splitlines()[:-1]) + (MAGIC,)
    assert TransformerManager().transform_cell(source).splitlines()[:-1] == source.splitlines()[:-1]


def test_a_cell_indented_as_a_whole_loses_that_indentation_as_in_ipython():
    from IPython.core.inputtransformer2 import TransformerManager
    source = "\n  for x in range(3):\n    print(x)\n  %time y = 2"
    module = parse_notebook(_notebook(["import tensorflow as tf", source]))
    assert module.cells[1].code == ("", "for x in range(3):", "  print(x)", "y = 2")
    ipython = TransformerManager().transform_cell(source).splitlines()
    assert ipython[:2] == list(module.cells[1].code[1:3]) and "y = 2" in ipython[2]


def test_magics_that_do_not_change_the_program_run_as_pass_and_are_listed():
    text = _notebook(["%matplotlib inline\n!pip install -q keras\n!echo a \\\n  b\n%load_ext autoreload\n"
                      "%run -m package\n%cd -\nx = 1", "%%bash\necho shell"])
    module = parse_notebook(text)
    assert module.cells[0].code == (MAGIC,) * 7 + ("x = 1",)
    assert [(s["cell"], s["line"], s["text"]) for s in module.skipped()] == [
        (1, 1, "%matplotlib inline"), (1, 2, "!pip install -q keras"), (1, 3, "!echo a \\"),
        (1, 5, "%load_ext autoreload"), (1, 6, "%run -m package"), (1, 7, "%cd -"),
        (2, 1, "%%bash (the whole cell)")]


def _notebook(sources: list[str], indent=1) -> str:
    cells = [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
              "source": s.splitlines(True)} for i, s in enumerate(sources)]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=indent) + "\n"


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_notebooks_are_errors_of_their_own_file(name):
    with pytest.raises(NotebookError, match=BAD[name].replace("(", r"\(")):
        parse_notebook((NOTEBOOKS / "broken" / name).read_text())


def _static(*paths, **settings) -> dict:
    """``--static`` on ``paths``, as its JSON output."""
    return json.loads(EMITTERS["json"](_static_report(*paths, **settings)))


def _static_report(*paths, **settings):
    return static_report([str(p) for p in paths], Options(**settings))


def test_static_mode_reports_each_bad_notebook_and_goes_on():
    report = _static(NOTEBOOKS / "broken", BLOCKER)
    errors = {e["path"].rsplit("/", 1)[1]: e["message"] for e in report["errors"]}
    assert set(errors) == set(BAD) and all(errors[name].startswith(BAD[name]) for name in BAD)
    assert _blocker(report["findings"])["cell"]["cell"] == 3


# --- positions in every output format ------------------------------------------------------------------

def test_static_mode_finds_the_blocker_at_its_cell_and_line():
    found = _blocker(_static(BLOCKER)["findings"])
    module = parse_notebook(BLOCKER.read_text()).source.splitlines()
    assert found["line"] == module.index(BLOCKER_LINE) + 1  # the line of the joined module
    assert found["cell"] == {"cell": 3, "line": 3, "file_line": _file_line(BLOCKER, BLOCKER_LINE + "\n")}
    assert found["col"] == BLOCKER_LINE.index("tf.numpy_function") + 1
    for format in ("text", "concise"):
        assert f"{display_path(str(BLOCKER))}:cell 3:3:13: XLA001" in EMITTERS[format](_static_report(BLOCKER))


def test_the_command_line_shows_cell_positions():
    done = run_without_tf("--static", str(BLOCKER.relative_to(REPO)))
    assert "fixtures/notebooks/blocker_in_cell3.ipynb:cell 3:3:13: XLA001" in done.stdout and done.returncode == 1


def test_github_and_sarif_point_at_the_line_of_the_notebook_file():
    file_line = _file_line(BLOCKER, BLOCKER_LINE + "\n")
    github = EMITTERS["github"](_static_report(BLOCKER))
    assert f"file={display_path(str(BLOCKER))},line={file_line},title=XLA001" in github
    assert "::cell 3, line 3: `tf.numpy_function`" in github
    result = json.loads(EMITTERS["sarif"](_static_report(BLOCKER)))["runs"][0]["results"][0]
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": file_line}
    assert result["message"]["text"].startswith("cell 3, line 3: ")


# --- suppressions --------------------------------------------------------------------------------------

def test_suppression_comments_in_cells_work_as_in_files(tmp_path):
    suppressed = NOTEBOOKS / "suppressed.ipynb"
    assert _static(suppressed)["findings"] == []
    bare = tmp_path / "bare.ipynb"
    bare.write_text(suppressed.read_text().replace("  # xlalint: ignore[XLA001]", ""))
    found = _static(bare)["findings"]
    assert [(f["code"], f["cell"]["cell"], f["cell"]["line"]) for f in found] == [("XLA001", 3, 3)]


# --- fixes ---------------------------------------------------------------------------------------------

def _changed_lines(old: bytes, new: bytes) -> list[tuple[str, str]]:
    a, b = old.decode().split("\n"), new.decode().split("\n")
    assert len(a) == len(b)
    return [(x, y) for x, y in zip(a, b) if x != y]


@pytest.mark.parametrize("indent", [1, 2])
def test_fix_changes_only_the_source_strings_it_edits(tmp_path, indent):
    original = NOTEBOOKS / "old_keyword.ipynb"
    notebook = tmp_path / original.name
    text = original.read_text()
    if indent == 2:  # as Colab and the TensorFlow docs formatter write: indent 2, no final newline
        text = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    notebook.write_text(text)
    before = notebook.read_bytes()
    report = _static_report(notebook)
    shown, = fix_files(report.findings, unsafe=False, write=False, guard=Guard(sources=report.sources))
    assert notebook.read_bytes() == before and b'"@tf.function(jit_compile=True)\\n",' in shown.diff
    written, = fix_files(report.findings, unsafe=False, write=True, guard=Guard(sources=report.sources))
    after = notebook.read_bytes()
    assert written.diff == shown.diff and len(written.fixed) == 2
    pad = " " * 4 * indent
    assert _changed_lines(before, after) == [
        (pad + '"@tf.function(experimental_compile=True)\\n",', pad + '"@tf.function(jit_compile=True)\\n",'),
        (pad + '"    experimental_compile=True,\\n",', pad + '"    jit_compile=True,\\n",')]
    assert after.endswith(b"}\n") == (indent == 1)  # the final newline, or none, stays
    old, new = nbformat.reads(before.decode(), 4), nbformat.reads(after.decode(), 4)
    for a, b in zip(old.cells, new.cells):
        assert {k: v for k, v in a.items() if k != "source"} == {k: v for k, v in b.items() if k != "source"}
        assert b.source == (a.source.replace("experimental_compile", "jit_compile") if a.cell_type == "code"
                            else a.source)  # the markdown cell names it too, and stays
    assert _static(notebook)["findings"] == []


def test_a_notebook_changed_since_its_analysis_is_left_alone(tmp_path):
    notebook = tmp_path / "old_keyword.ipynb"
    shutil.copy(NOTEBOOKS / notebook.name, notebook)
    report = _static_report(notebook)
    notebook.write_text(notebook.read_text().replace('"metadata": {}', '"metadata": {"edited": true}', 1))
    changed = notebook.read_bytes()
    outcome, = fix_files(report.findings, unsafe=False, write=True, guard=Guard(sources=report.sources))
    assert outcome.error and "changed since it was analysed" in outcome.error and notebook.read_bytes() == changed


def test_rewrite_inserts_lines_in_the_cell_and_refuses_edits_of_magics():
    text = _notebook(["import tensorflow as tf\n%matplotlib inline", "x = 1\ny = 2"], indent=2)
    source = parse_notebook(text).source
    edited = rewrite(text, source.replace("x = 1\n", "with scope():\n    x = 1\n"))
    # as if written so: the new line is a string of its own, in the file's own layout
    assert edited == _notebook(["import tensorflow as tf\n%matplotlib inline", "with scope():\n    x = 1\ny = 2"], indent=2)
    with pytest.raises(NotebookError, match="magic"):
        rewrite(text, source.replace(MAGIC, "pass"))
    text = _notebook(["a = 1\nb = 2", "c = 3\nd = 4"])  # edits of the last line of a cell and the first of the next
    edited = rewrite(text, parse_notebook(text).source.replace("b = 2\nc = 3", "b = 20\nc = 30"))
    assert edited == _notebook(["a = 1\nb = 20", "c = 30\nd = 4"])


# --- discovery and configuration -----------------------------------------------------------------------

def test_directory_runs_pick_up_notebooks_that_use_tensorflow_and_config_can_exclude_them(tmp_path):
    shutil.copy(BLOCKER, tmp_path / "tutorial.ipynb")
    (tmp_path / "prose.ipynb").write_text(_notebook(["print('no TensorFlow here')"]))
    report = _static(tmp_path)
    assert {f["path"].rsplit("/", 1)[1] for f in report["findings"]} == {"tutorial.ipynb"}
    assert report["errors"] == []
    (tmp_path / "pyproject.toml").write_text('[tool.xlalint]\nexclude = ["*.ipynb"]\n')
    config = load_config(tmp_path / "pyproject.toml")
    report = _static(tmp_path, exclude=config.values["exclude"], root=str(config.root))
    assert report["findings"] == [] and report["entries"] == []


def test_the_github_action_checks_the_notebooks_a_pull_request_changes(tmp_path, monkeypatch):
    def git(*args):
        return subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", *args], cwd=tmp_path,
                              check=True, capture_output=True, text=True).stdout.strip()

    git("init", "-q")
    git("commit", "-q", "--allow-empty", "-m", "base")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"base": {"sha": git("rev-parse", "HEAD")}}}))
    for name in ("train.py", "tutorial.ipynb", "notes.md"):
        (tmp_path / name).write_text("{}")
    git("add", "train.py", "tutorial.ipynb", "notes.md")
    git("commit", "-q", "-m", "pull request")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    assert sorted(changed_python_files()) == ["train.py", "tutorial.ipynb"]


def test_pre_commit_hooks_take_notebooks():
    import yaml

    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert all(h["types_or"] == ["python", "jupyter"] for h in hooks)


# --- full mode: one traced run shared by the tests below -----------------------------------------------

@pytest.fixture(scope="module")
def traced():
    return run_json("--no-cache", "--device", "cpu", str(BLOCKER), str(NOTEBOOKS / "clean.ipynb"),
                    str(NOTEBOOKS / "suppressed.ipynb"), str(NOTEBOOKS / "broken/syntax_error.ipynb"),
                    str(NOTEBOOKS / "broken/raises_in_cell.ipynb"))


def _of(report: dict, name: str, key: str) -> list[dict]:
    return [item for item in report[key] if item["path"].endswith(name)]


@pytest.mark.tf
def test_full_mode_finds_the_blocker_at_its_cell_and_line(traced):
    report, code = traced
    found = _blocker(report["findings"])
    assert found["cell"]["cell"] == 3 and found["cell"]["line"] == 3 and code == 1
    assert found["col"] == BLOCKER_LINE.index("tf.numpy_function") + 1
    assert "run line 3 without XLA, then keep line 4 compiled" in found["hint"]  # lines of the cell
    assert [e["verdict"] for e in _of(report, BLOCKER.name, "entries")] == ["incompatible"]


@pytest.mark.tf
def test_full_mode_passes_a_clean_notebook_and_honours_suppressions(traced):
    report, _ = traced
    assert [e["verdict"] for e in _of(report, "clean.ipynb", "entries")] == ["compatible"]
    assert _of(report, "clean.ipynb", "findings") == []
    assert {e["name"] for e in _of(report, "suppressed.ipynb", "entries")} == {"logged", "doubled"}
    assert _of(report, "suppressed.ipynb", "findings") == []  # XLA001 and XLA403 hidden, neither stale


@pytest.mark.tf
def test_full_mode_names_the_cell_of_a_syntax_error_and_of_an_import_failure(traced):
    report, _ = traced
    assert [e["message"] for e in _of(report, "syntax_error.ipynb", "errors")] == [BAD["syntax_error.ipynb"]]
    assert [e["message"] for e in _of(report, "raises_in_cell.ipynb", "errors")] == [
        "importing the module raised FileNotFoundError: missing/train.tfrecord (cell 3, line 2)"]


@pytest.mark.tf
def test_a_notebook_runs_in_its_own_folder_as_in_jupyter_from_a_parent_folder_too(tmp_path):
    """Jupyter's kernel works in the notebook's folder: a file read beside it by a relative path is found by the
    check command and by `xlalint run` started from the project's root, and what it writes stays out of the tree."""
    folder = tmp_path / "notebooks"
    folder.mkdir()
    (folder / "scale.txt").write_text("3\n")
    (folder / "beside.ipynb").write_text(_notebook([
        "import tensorflow as tf\nscale = float(open('scale.txt').read())\nopen('seen.txt', 'w').write('yes')",
        "@tf.function(jit_compile=True)\ndef scaled(x):\n    return x * scale\n\n\nprint(scaled(tf.constant([1.0])))"]))
    before = sorted(p.name for p in tmp_path.rglob("*"))
    for command in (["--no-cache"], ["run"]):
        done = run_xlalint(*command, "--format", "json", "--device", "cpu", "notebooks/beside.ipynb", cwd=tmp_path)
        report = json.loads(done.stdout)
        assert not report["errors"], (command, report["errors"])
        assert [(e["name"], e["verdict"]) for e in report["entries"]] == [("scaled", "compatible")], command
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


# --- xlalint run: the cells executed in order, as a kernel would ----------------------------------------

@pytest.mark.tf
def test_run_executes_the_cells_and_finds_the_blocker_at_its_cell_and_line():
    done = run_xlalint("run", "--format", "json", "--device", "cpu", str(NOTEBOOKS / "train_loop.ipynb"))
    report, code = json.loads(done.stdout), done.returncode
    found, = report["findings"]
    assert (found["code"], found["cell"]["cell"], found["cell"]["line"], found["col"]) == ("XLA001", 3, 7, 5)
    call, = found["related"]
    assert (call["cell"]["cell"], call["cell"]["line"]) == (5, 4) and "float32[8,4], float32[8,1]" in call["message"]
    assert report["run"]["stopped"] == "ended" and code == 1


def test_run_refuses_a_bad_notebook_before_running_anything():
    done = run_without_tf("run", str(NOTEBOOKS / "broken/syntax_error.ipynb"))
    assert done.returncode == 2 and BAD["syntax_error.ipynb"] in done.stderr
