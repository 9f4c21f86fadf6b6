"""`xlalint run` on training scripts with no annotations, against the same scripts run for real under XLA.

The truth: each scenario script runs for real, bounded, with XLA compiling its steps
(tests/run_truth.py). `xlalint run` must give the same verdict per compiled function, with a
finding at the compiler's line and op, leave the working tree byte for byte as it was, and stop
on its own within its budget.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from helpers import REPO, TESTS

sys.path.insert(0, str(REPO / "bench"))
from _autocluster_truth import LOWERING_AND_BOOKKEEPING, NOT_COMPARED, normalize  # noqa: E402

pytestmark = pytest.mark.tf  # each run imports TensorFlow in its own process

SCENARIOS = TESTS / "data" / "run"
# name: (arguments of the bounded real run, arguments given to `xlalint run`)
RUNS = {
    "string_step": (["--epochs", "1"], ["--epochs", "2"]),
    "clean_loop": (["--epochs", "1"], []),
    "fit_numpy_loss": (["1"], []),
    "endless_checkpoints": (["2"], []),  # without an argument it never ends
    "endless_next": (["2"], []),  # likewise, a loop of next() calls
    "downloads": ([], []),
    "writes_everywhere": ([], []),
    "prepares_forever": (None, []),  # no real run: it never reaches its step
    "gan_two_optimizers": (["--epochs", "1"], []),
    "fit_custom_loss_metric": ([], []),
    "subclassed_model": ([], []),
    "train_step_override": (["1"], []),
    "two_file_project": ([], []),  # its layer comes from two_file_layers.py
    "argparse_main": (["--steps", "3"], None),  # run by `xlalint run` only as one of the LISTED commands
    "mirrored_steps": (["--epochs", "1"], []),
    "autoclustered": (["--epochs", "1"], []),
    "fit_layer_without_xla": (None, []),  # its truth is Keras' own decision: see the test
}
SAME_CALL = {"StringFormat": "PrintV2"}  # tf.print's two ops, reported once as tf.print (XLA001)
BUDGET_S = {"prepares_forever": "4"}  # else the default
LISTED = ["downloads.py", "-m argparse_main --units 16 8 --batch-size 16"]  # [tool.xlalint] run, for `xlalint run`
CLUSTERED = {"autoclustered"}  # the truth also holds the clusters TensorFlow marks
ENV = {"autoclustered": {"TF_XLA_FLAGS": "--tf_xla_cpu_global_jit"}}  # auto-clustering on CPU, as for the truth


def _tree(folder) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _xlalint_run(cwd, *args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "xlalint", "run", "--format", "json", "--device", "cpu", *args],
                            cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """``(truth per scenario, (report, exit code) per scenario, tree before, tree after)``; all at once.
    The run of the LISTED commands (from a subfolder of the config file's) is the scenario ``"listed"``."""
    truth_dir, run_dir = tmp_path_factory.mktemp("truth"), tmp_path_factory.mktemp("run")
    for folder in (truth_dir, run_dir):
        for script in SCENARIOS.glob("*.py"):
            shutil.copy(script, folder)
        (folder / "notes.txt").write_text("kept as it is\n")
    (run_dir / "pyproject.toml").write_text(f"[tool.xlalint]\nrun = {json.dumps(LISTED)}\n")
    (run_dir / "sub").mkdir()
    truth_file = truth_dir / "truth.json"
    before = _tree(run_dir)
    started = [subprocess.Popen([sys.executable, str(TESTS / "run_truth.py"), str(truth_file), str(truth_dir),
                                 *(f"{'+' * (name in CLUSTERED)}{name}:{','.join(real)}"
                                   for name, (real, _) in RUNS.items() if real is not None)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        runs = {name: _xlalint_run(run_dir, *(["--run-timeout", BUDGET_S[name]] if name in BUDGET_S else []),
                                   f"{name}.py", *given, env=ENV.get(name))
                for name, (_, given) in RUNS.items() if given is not None}
        runs["listed"] = _xlalint_run(run_dir / "sub", "--jobs", "2")  # both at once, in clones of one server
        runs["commands"] = _xlalint_run(run_dir, "--command", LISTED[1], "--command", "string_step.py --epochs 2")
        started += runs.values()
        reports = {}
        for name, process in runs.items():
            out, err = process.communicate(timeout=600)
            assert out.strip(), err
            reports[name] = (json.loads(out), process.returncode)
        started[0].wait(timeout=600)
    finally:
        for process in started:
            process.kill()
    return json.loads(truth_file.read_text()), reports, before, _tree(run_dir)


@pytest.mark.parametrize("name", [n for n, (real, given) in RUNS.items()
                                  if real is not None and given is not None and n != "downloads" and n not in CLUSTERED])
def test_same_verdict_as_the_compiler_at_its_line(runs, name):
    truth, reports = runs[0][name], runs[1][name]
    report, code = reports
    compiled = [e for e in report["entries"] if e["jit_compile"]]
    assert compiled, report["entries"]
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    if truth["ok"]:
        assert {e["verdict"] for e in compiled} == {"compatible"}, report
        assert not errors and code == 0, report
    else:
        assert {e["verdict"] for e in compiled} == {"incompatible"}, report
        at_line = [f for f in errors if (f["path"], f["line"]) == (truth["compiler_file"], truth["compiler_line"])]
        assert any(f["op_name"] == truth["node"] or f["op_type"] in (truth["op"], SAME_CALL.get(truth["op"]))
                   for f in at_line), (truth, errors)
        assert code == 1


@pytest.mark.parametrize("name, reached", [
    ("clean_loop", [("test_step", None), ("train_step", True)]),
    ("fit_numpy_loss", [("Sequential.test_step", True), ("Sequential.train_step", True)]),  # validation data
    ("gan_two_optimizers", [("train_discriminator", True), ("train_generator", True)]),
    ("fit_custom_loss_metric", [("Sequential.predict_step", True), ("Sequential.test_step", True),
                                ("Sequential.train_step", True)]),  # fit, evaluate, predict
    ("subclassed_model", [("Regressor.predict_step", True), ("Regressor.test_step", True),
                          ("Regressor.train_step", True)]),  # train_on_batch, test_on_batch, predict_on_batch
])
def test_every_compiled_function_and_keras_step_is_reached(runs, name, reached):
    report, _ = runs[1][name]
    assert sorted((e["name"], e["jit_compile"]) for e in report["entries"]) == reached


def test_a_keras_step_sits_at_the_users_train_step_or_else_at_the_call(runs):
    [override] = runs[1]["train_step_override"][0]["entries"]
    assert (override["name"], override["path"], override["line"]) == ("LoggingModel.train_step",
                                                                       "train_step_override.py", 12)
    [fit] = runs[1]["two_file_project"][0]["entries"]
    assert (fit["name"], fit["path"], fit["line"]) == ("Functional.train_step", "two_file_project.py", 18)


def test_a_keras_step_follows_what_keras_itself_decides(runs):
    """Keras turns ``jit_compile=True`` off for a model with a layer that does not support XLA (the script, run
    for real, prints what Keras decided): the run's entry runs without XLA, says why at the line that builds
    the layer (XLA303), and is not offered ``jit_compile=True`` (XLA403)."""
    real = subprocess.run([sys.executable, str(SCENARIOS / "fit_layer_without_xla.py")], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    assert real.stdout.splitlines()[-1] == "jit_compile: False", real.stderr[-2000:]
    report, code = runs[1]["fit_layer_without_xla"]
    [entry] = report["entries"]
    assert (entry["name"], entry["jit_compile"], entry["verdict"]) == ("Sequential.train_step", False, "compatible")
    assert [(f["code"], f["line"]) for f in report["findings"]] == [("XLA303", 21)]
    assert "`host_kernel` (HostKernel)" in report["findings"][0]["message"] and code == 0


def test_a_blocker_in_an_imported_layer_is_found_in_its_own_file(runs):
    truth, (report, _) = runs[0]["two_file_project"], runs[1]["two_file_project"]
    [blocker] = [f for f in report["findings"] if f["severity"] == "error"]
    assert (blocker["path"], blocker["line"]) == ("two_file_layers.py", truth["compiler_line"])
    assert ("two_file_project.py", 18) in [(r["path"], r["line"]) for r in blocker["related"]]  # the fit call


def test_the_working_tree_is_unchanged(runs):
    _, reports, before, after = runs
    assert before == after
    assert reports["endless_checkpoints"][0]["run"]["written_to_scratch"] == ["checkpoints", "train.log"]


def test_writes_into_the_tree_are_refused_and_said(runs):
    run = runs[1]["writes_everywhere"][0]["run"]
    assert run["written_to_scratch"] == ["new_log.txt", "notes.txt"]
    assert [(os.path.basename(r["path"]), r["call"], r["where"]) for r in run["refused_writes"]] == [
        ("beside.txt", "open", "writes_everywhere.py:13 in `<lambda>()`"),
        ("exports", "RecursivelyCreateDir", "writes_everywhere.py:14 in `<lambda>()`")]


def test_every_run_stops_on_its_own(runs):
    for name, (report, _) in runs[1].items():
        for run in [report["run"]] if "run" in report else report["runs"]:
            if name not in BUDGET_S:
                assert run["stopped"] in ("ended", "captured", "network"), (name, run)


def test_a_run_that_never_reaches_a_step_stops_at_its_budget_and_says_where(runs):
    report, code = runs[1]["prepares_forever"]
    assert report["run"]["stopped"] == "budget" and report["run"]["where"] == "prepares_forever.py:15 in `prepare()`"
    assert [(e["name"], e["verdict"]) for e in report["entries"]] == [("train_step", "unknown")] and code == 0


def test_a_function_without_jit_compile_is_offered_it_with_the_specs_seen(runs):
    report, _ = runs[1]["clean_loop"]
    [offer] = [f for f in report["findings"] if f["code"] == "XLA403"]
    assert offer["entry"] == "test_step" and offer["line"] == 35
    assert "with (float32[64,16], int32[64])" in offer["related"][0]["message"]


def test_a_download_stops_the_run_at_its_call(runs):
    truth, (report, code) = runs[0]["downloads"], runs[1]["downloads"]
    assert not truth["ok"] and report["run"]["stopped"] == "network"
    [error] = report["errors"]
    assert f"downloads.py:{truth['raised_line']}" in error["message"] and "get_file" in error["message"]
    assert [(e["name"], e["line"], e["verdict"]) for e in report["entries"]] == [("train_step", 9, "unknown")]
    assert code == 1


def test_findings_point_at_the_call_with_the_specs_seen(runs):
    report, _ = runs[1]["string_step"]
    [blocker] = [f for f in report["findings"] if f["code"] == "XLA001"]
    assert blocker["related"] == [{"path": "string_step.py", "line": 48,
                                   "message": "`train_step` called here, in `main()`, with (float32[32,8,8], string[32])"}]


def test_the_listed_run_commands_are_run_from_the_config_files_folder_and_reported_together(runs):
    """Each with its own arguments (an argparse `main()` taking `--units 16 8`), the verdict the compiler's,
    reported in the listed order though both ran at once."""
    report, code = runs[1]["listed"]
    assert runs[0]["argparse_main"]["ok"] and not [f for f in report["findings"] if f["severity"] == "error"]
    assert [(r["command"], r["script"], r["stopped"]) for r in report["runs"]] == [
        ("downloads.py", "downloads.py", "network"), (LISTED[1], "argparse_main.py", "ended")]
    assert [(e["path"], e["name"], e["verdict"]) for e in report["entries"]] == [
        ("downloads.py", "train_step", "unknown"), ("argparse_main.py", "train_step", "compatible")]
    [error] = report["errors"]
    assert error["path"] == "downloads.py" and "get_file" in error["message"]
    assert code == 1 == runs[1]["downloads"][1]  # the worst of the two: the argparse script alone exits 0


def test_commands_given_with_command_replace_the_listed_ones_each_answered_as_if_run_alone(runs):
    """From the working directory, in the given order, on one server; each run says how long TensorFlow traced."""
    report, code = runs[1]["commands"]
    assert [(r["command"], r["script"], r["stopped"]) for r in report["runs"]] == [
        (LISTED[1], "argparse_main.py", "ended"), ("string_step.py --epochs 2", "string_step.py", "ended")]
    assert all(r["trace_s"] > 0 for r in report["runs"])
    alone, alone_code = runs[1]["string_step"]
    assert report["findings"] == alone["findings"] and code == alone_code == 1


def test_a_compiled_step_under_a_distribution_strategy_is_captured_inside_strategy_run(runs):
    report, _ = runs[1]["mirrored_steps"]
    assert sorted((e["name"], e["jit_compile"], e["verdict"]) for e in report["entries"]) == [
        ("distributed_test_step", None, "compatible"), ("distributed_train_step", None, "compatible"),
        ("gradients_of", True, "compatible")]
    # each epoch's two loops over distributed datasets ended after one step (the first epoch's after two: a
    # first trace is followed by one more batch, to see whether it traces again), the fake losses reduced
    assert report["run"]["stopped"] == "ended" and report["run"]["calls"] == 3 * 2 + 2
    # the strategy's variables sit on both CPUs: one XLA cluster could not reach them, so no offer
    assert not [f for f in report["findings"] if f["code"] == "XLA403"]


def _line_of(name: str, text: str) -> int:
    return next(n for n, line in enumerate((SCENARIOS / f"{name}.py").read_text().splitlines(), 1) if text in line)


def _clusters(names, cluster_of) -> set:
    """The clustered ones among ``names``, grouped by cluster."""
    groups: dict = {}
    for name in names:
        if cluster_of(name) is not None:
            groups.setdefault(cluster_of(name), set()).add(name)
    return {frozenset(group) for group in groups.values()}


def test_an_auto_clustered_run_predicts_the_clusters_tensorflow_marks(runs):
    truth, (report, code) = runs[0]["autoclustered"], runs[1]["autoclustered"]
    [entry] = report["entries"]
    assert truth["ok"] and code == 0 and entry["verdict"] == "runs"
    assert (entry["xla_mode"], entry["xla_mode_source"]) == (
        "auto-clustering", f"set_jit called at autoclustered.py:{_line_of('autoclustered', 'set_jit(')} in the run")
    predicted = entry["autocluster"]
    cluster_of = {n: i for i, members in enumerate(predicted["clusters"]) for n in members}
    named = set(cluster_of) | {s["op_name"] for s in predicted["splitters"]}
    dumps = [{normalize(n): c for n, op, c in graph if op not in NOT_COMPARED | LOWERING_AND_BOOKKEEPING}
             for graph in truth["graphs"]]
    marked = max(dumps, key=lambda dump: len(named & set(dump)))  # the step's own graph
    assert set(marked) <= named and len(marked) > 10  # every op TensorFlow kept, xlalint names
    assert _clusters(marked, cluster_of.get) == _clusters(marked, marked.get) and len(predicted["clusters"]) == 2
    [host_call] = [f for f in report["findings"] if f["code"] == "XLA001"]
    assert (host_call["severity"], host_call["line"], host_call["op_type"]) == (
        "info", _line_of("autoclustered", "tf.numpy_function"), "PyFunc")
