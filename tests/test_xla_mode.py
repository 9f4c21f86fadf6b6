"""Which XLA mode runs an entry (xlalint.autocluster.program), and its findings under auto-clustering
(xlalint.autocluster.judge), on files and hand-built graphs: no TensorFlow. The same questions asked of
TensorFlow itself are in test_autocluster.py."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from graph_builder import SUPPORT, GraphBuilder
from helpers import json_without_tf, run_json
from xlalint.autocluster.judge import judge_entry
from xlalint.autocluster.program import AS_IF_JIT, AUTO_CLUSTERING, JIT_COMPILE, Mode, entry_mode, sites_in
from xlalint.core.results import Finding
from xlalint.inputs.files import collect_files
from xlalint.source.sourcemap import Location


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project root (pyproject.toml) with src/model.py in it; no TF_XLA_FLAGS in the environment."""
    monkeypatch.delenv("TF_XLA_FLAGS", raising=False)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "src").mkdir()
    model = tmp_path / "src" / "model.py"
    model.write_text("import tensorflow as tf\n")
    return model


def test_python_settings_are_read_from_code_not_from_comments_or_docstrings(tmp_path):
    path = tmp_path / "train.py"
    path.write_text('"""Call tf.config.optimizer.set_jit(True) to cluster."""\n'
                    "import os\n"
                    "# tf.config.optimizer.set_jit(True)\n"
                    'os.environ["TF_XLA_FLAGS"] = "--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit"\n'
                    'note = "set_jit(True)"\n'
                    "tf.config.optimizer.set_jit(False)\n"
                    "tf.config.optimizer.set_jit(\n    True)\n")
    sites = sites_in(str(path))
    assert [s.line for s in sites] == [4, 7] and all(s.cpu_global_jit for s in sites)


def test_the_file_itself_a_script_that_runs_it_and_the_environment_turn_it_on(project, monkeypatch):
    assert entry_mode(str(project), None, "auto", "gpu") == Mode(AS_IF_JIT)
    script = project.parent.parent / "run.sh"
    script.write_text('export TF_XLA_FLAGS="--tf_xla_auto_jit=2"\npython src/model.py\n')
    mode = entry_mode(str(project), None, "auto", "gpu")
    assert (mode.name, mode.source, mode.note) == (AUTO_CLUSTERING, f"{script}:1", None)
    assert "--tf_xla_cpu_global_jit" in entry_mode(str(project), None, "auto", "cpu").note
    script.write_text('export TF_XLA_FLAGS="--tf_xla_auto_jit=2"\npython evaluate.py\n')  # another file
    mode = entry_mode(str(project), None, "auto", "gpu")
    assert mode.name == AS_IF_JIT and "cannot tell" in mode.note and "runs evaluate" in mode.note
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_auto_jit=1 --tf_xla_cpu_global_jit")
    mode = entry_mode(str(project), None, "auto", "cpu")
    assert (mode.name, mode.source, mode.note) == (AUTO_CLUSTERING, "TF_XLA_FLAGS in the environment", None)


def test_a_dockerfile_above_counts_up_to_the_project_root(project):
    (project.parent.parent / "Dockerfile").write_text("FROM python\nENV TF_XLA_FLAGS=--tf_xla_auto_jit=2\n")
    assert entry_mode(str(project), None, "auto", "gpu").name == AUTO_CLUSTERING
    (project.parent.parent / "pyproject.toml").unlink()
    (project.parent / "setup.py").write_text("")  # src/ is now the root: the Dockerfile is outside it
    assert entry_mode(str(project), None, "auto", "gpu").name == AS_IF_JIT


@pytest.mark.parametrize("name", ["run.bash", "prod.env", ".env", "Dockerfile.gpu", "gpu.dockerfile"])
def test_the_environment_files_a_run_checks_are_those_read_beside_a_program(project, name):
    (project.parent / name).write_text("TF_XLA_FLAGS=--tf_xla_auto_jit=2\n")
    assert entry_mode(str(project), None, "auto", "gpu").name == AUTO_CLUSTERING
    assert str(project.parent / name) in collect_files([str(project.parent)])[0]


def test_a_program_beside_it_that_imports_it(project):
    main = project.parent / "main.py"
    main.write_text("import tensorflow as tf\nfrom model import build\ntf.config.optimizer.set_jit(True)\n")
    assert entry_mode(str(project), None, "auto", "gpu").source == f"{main}:3"
    main.write_text("import tensorflow as tf\ntf.config.optimizer.set_jit(True)\n")  # imports something else
    assert entry_mode(str(project), None, "auto", "gpu").name == AS_IF_JIT


def test_jit_compile_wins_and_mode_forces(project):
    project.write_text("import tensorflow as tf\ntf.config.optimizer.set_jit(True)\n")
    assert entry_mode(str(project), True, "autocluster", "gpu").name == JIT_COMPILE
    assert entry_mode(str(project), None, "jit", "gpu") == Mode(AS_IF_JIT, "--mode jit")
    project.write_text("import tensorflow as tf\n")
    assert entry_mode(str(project), None, "autocluster", "gpu").source == "--mode autocluster"


def _finding(node_id: str, op_type: str, severity: str = "error", code: str = "XLA001") -> Finding:
    return Finding(code, "unsupported-op", severity, "m", "h", "model.py", 1, 1, "f", op_type, node_id.split(":")[1])


def _chain(b, start, types, function=None):
    for op_type in types:
        start = b.op(f"{op_type.lower()}_{len(b.nodes)}", op_type, [start], function=function)
    return start


def _judge(graph, findings):
    return judge_entry(Mode(AUTO_CLUSTERING, "run.sh:1"), graph, findings, SUPPORT, "gpu", Location("model.py", 1))


def test_under_auto_clustering_a_left_out_op_is_no_error_and_a_scoped_one_no_finding():
    b = GraphBuilder()
    before = _chain(b, b.arg("x"), ["Exp", "Mul", "AddV2", "Tanh"])
    host = b.op("host", "PyFunc", [before])
    scoped = b.op("scoped", "PyFunc", [host])
    b.nodes[-1]["xla_attrs"] = {"_XlaCompile": False, "_XlaScope": "jit_scope_0"}
    after = _chain(b, scoped, ["Exp", "Mul", "AddV2", "Sub"])
    b.function("f", [b.op("Identity", "Identity", [after])])
    graph = b.build()
    clustered = _finding(after, "Sub", code="XLA101")  # an error inside a kept cluster stays one
    findings, verdict, record = _judge(graph, [_finding(host, "PyFunc"), _finding(scoped, "PyFunc")])
    assert verdict == "runs" and [(f.op_name, f.severity) for f in findings] == [("host", "info")]
    assert (len(record["clusters"]), record["chosen_ops"], record["unneeded_scopes"]) == (2, 1, [])
    assert record["percent"] == round(100 * record["compiled_ops"] / (record["total_ops"] - 1), 1)
    assert _judge(graph, [clustered])[1] == "incompatible"
    assert _judge(graph, [])[1] == "compatible"


def test_a_split_in_a_loop_body_is_a_warning_and_a_scope_of_compilable_ops_is_unneeded():
    b = GraphBuilder()
    loop = b.op("while", "StatelessWhile", [b.arg("x")], calls={"body": ["body"], "cond": ["cond"]})
    b.function("f", [b.op("Identity", "Identity", [loop])])
    v = b.arg("v", function="body")
    host = b.op("host", "PyFunc", [_chain(b, v, ["Tanh", "Mul", "AddV2", "Sin"], "body")], function="body")
    kept_out = b.op("kept_out", "Cos", [host], function="body")
    b.nodes[-1]["xla_attrs"] = {"_XlaCompile": False, "_XlaScope": "jit_scope_1"}
    b.function("body", [b.op("out", "Identity", [kept_out], function="body")])
    w = b.arg("w", function="cond")
    b.function("cond", [b.op("less", "Less", [w], function="cond", dtype="bool")])
    findings, verdict, record = _judge(b.build(), [_finding(host, "PyFunc")])
    assert verdict == "runs" and findings[0].severity == "warning" and "loop" in findings[0].message
    (scope,) = record["unneeded_scopes"]
    assert (scope["scope"], scope["ops"]) == ("jit_scope_1", ["Cos"])


def test_every_line_format_names_the_mode_of_an_auto_clustered_entry():
    from xlalint.report import EMITTERS
    from xlalint.core.results import Entry, Report

    record = {"clusters": [["a", "b"], ["c"]], "compiled_ops": 9, "total_ops": 11, "chosen_ops": 1,
              "percent": 90.0, "splitters": [], "unneeded_scopes": []}
    report = Report(device="cpu", entries=[
        Entry("m.py", "step", 5, "runs", autocluster=record, ops=11, xla_mode=AUTO_CLUSTERING,
              xla_mode_source="run.sh:2"),
        Entry("m.py", "other", 9, "compatible", ops=2, xla_mode=AS_IF_JIT, xla_mode_note="cannot tell why")])
    phrase = "`step` runs under auto-clustering (run.sh:2): 90% of its ops under XLA in 2 cluster(s)"
    assert f"m.py:5: {phrase}" in EMITTERS["concise"](report).splitlines()
    assert "m.py:9: `other`: cannot tell why" in EMITTERS["concise"](report).splitlines()
    assert "::notice file=m.py,line=5,title=xlalint XLA mode::" + phrase.replace("%", "%25") in \
        EMITTERS["github"](report).splitlines()
    text = EMITTERS["text"](report)
    assert "  m.py::step: auto-clustering (run.sh:2): runs; 90% under XLA in 2 cluster(s) (9 of 10 ops)" in text
    assert "1 compatible, 1 running under auto-clustering with ops left out of XLA, 0 incompatible" in text


UNTRACED_UNDER_AUTO_CLUSTERING = """import tensorflow as tf

tf.config.optimizer.set_jit(True)


@tf.function
def step(x):
    tf.print("sum", tf.reduce_sum(x))  # line 8
    return x * 2


if __name__ == "__main__":
    for batch in tf.data.Dataset.range(4).map(lambda i: tf.cast(i, tf.float32)).batch(2):
        step(batch)
    print("ran")
"""


@pytest.mark.tf
def test_a_by_name_error_in_an_untraced_function_under_auto_clustering_is_info_in_both_modes(tmp_path):
    """The function has no signature, so only the source pass sees its tf.print; the program runs it under
    auto-clustering, where TensorFlow leaves the op out of XLA: run for real, with clustering on the CPU, it
    works, while the same function with jit_compile=True fails on that op. Info in the full and the static
    mode alike (never less than --static), an error without set_jit."""
    script = tmp_path / "clustered.py"
    script.write_text(UNTRACED_UNDER_AUTO_CLUSTERING)
    jitted = tmp_path / "jitted.py"
    jitted.write_text(UNTRACED_UNDER_AUTO_CLUSTERING.replace("@tf.function\n", "@tf.function(jit_compile=True)\n"))
    real = {path.name: subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300,
                                      env={**os.environ, "TF_XLA_FLAGS": "--tf_xla_cpu_global_jit",
                                           "CUDA_VISIBLE_DEVICES": ""}) for path in (script, jitted)}
    ran = real["clustered.py"]
    assert ran.returncode == 0 and ran.stdout.strip().endswith("ran"), ran.stderr[-2000:]
    failed = real["jitted.py"]
    assert failed.returncode != 0 and "unsupported operations" in failed.stderr, failed.stderr[-2000:]
    assert "StringFormat" in failed.stderr  # tf.print's formatting op, which xlalint names with PrintV2
    plain = tmp_path / "plain.py"
    plain.write_text(UNTRACED_UNDER_AUTO_CLUSTERING.replace("tf.config.optimizer.set_jit(True)", ""))
    for run in (lambda *args: run_json(*args, "--no-cache"), lambda *args: json_without_tf("--static", *args)):
        report, code = run(str(script), str(plain), "--device", "cpu")
        found = {(f["path"].rsplit("/", 1)[-1], f["code"]): f for f in report["findings"] if f["line"] == 8}
        clustered, plain_error = found[("clustered.py", "XLA001")], found[("plain.py", "XLA001")]
        assert clustered["severity"] == "info" and "auto-clustering leaves it out" in clustered["message"]
        assert plain_error["severity"] == "error" and code == 1
