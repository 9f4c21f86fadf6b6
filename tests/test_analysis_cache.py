"""The analysis cache: a file's stored analysis gives the very report a cold run gives, in every format; any change
to what the analysis reads is a fresh answer, and a damaged entry a miss."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from xlalint.ci.shards import parse_shard
from xlalint.core.results import Entry, FileError, Finding
from xlalint.engine import analysis_cache
from xlalint.engine.analysis import analyze
from xlalint.engine.analysis_cache import AnalysisCache, Answer
from xlalint.engine.plan import plan_run
from xlalint.report import EMITTERS
from xlalint.settings.table import Options
from xlalint.tracing.cache import ResultCache
from xlalint.tracing.workers import start_worker

FORMATS = ("json", "sarif", "text", "github")
MODEL = '''import numpy as np
import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([4, 8], tf.float32)])
def scale_on_host(x):
    y = tf.numpy_function(lambda a: (a * 2).astype(np.float32), [x], tf.float32)
    return tf.reduce_sum(y) + tf.reduce_sum(x)


@tf.function(experimental_compile=True,
             input_signature=[tf.TensorSpec([16, 32], tf.float32), tf.TensorSpec([32, 8], tf.float32)])
def dense_relu(x, w):
    return tf.nn.relu(tf.matmul(x, w))  # xlalint: ignore[XLA002]
'''
CELLS = ["import tensorflow as tf",
         "@tf.function(jit_compile=True, input_signature=[tf.TensorSpec([None], tf.float32)])\n"
         "def describe(x):\n    return tf.strings.as_string(x)"]


def _notebook(sources: list[str]) -> str:
    cells = [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
              "source": s.splitlines(True)} for i, s in enumerate(sources)]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


def _untraced(*args, **kwargs):
    raise AssertionError("a file was traced")


def _check(project: Path, cache: Path | None, tracer=_untraced, **settings) -> tuple[dict[str, str], int]:
    """The run's report in every format, and how many files the analysis cache answered."""
    options = Options(**{"device": "cpu", "jobs": 1, "cache_dir": str(cache) if cache else None, **settings})
    with plan_run([str(project)], options, tracer) as plan:
        answered = len(plan.analysed)
        report = analyze(plan, options)
    return {fmt: EMITTERS[fmt](report) for fmt in FORMATS}, answered


def _analyses(cache: Path) -> list[Path]:
    """The analysis entries among the cache's (traces hold no ``"produced"``)."""
    return [p for p in cache.glob("*.json") if '"produced": ' in p.read_text()]


@pytest.fixture(scope="module")
def cold(tmp_path_factory):
    """A project of two files checked once with an empty cache: (project, cache, the reports)."""
    base = tmp_path_factory.mktemp("analysis-cache")
    project = base / "project"
    project.mkdir()
    (project / "model.py").write_text(MODEL)
    (project / "describe.ipynb").write_text(_notebook(CELLS))
    cache = base / "cache"
    reports, answered = _check(project, cache, start_worker)
    assert answered == 0 and len(_analyses(cache)) == 2
    return project, cache, reports


def _copy(cache: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(cache, tmp_path / "cache"))


@pytest.mark.tf
def test_a_stored_analysis_gives_the_cold_runs_report_byte_for_byte(cold, tmp_path):
    project, cache, first = cold
    codes = json.loads(first["json"])["findings"]
    assert {f["code"] for f in codes} >= {"XLA001", "XLA401", "XLA801"}  # a trace's, a source rule's, a selection's
    cache = _copy(cache, tmp_path)
    answered, answered_again = _check(project, cache), _check(project, cache)
    assert answered == (first, 2) and answered_again == (first, 2)
    for entry in _analyses(cache):
        entry.unlink()
    assert _check(project, cache) == (first, 0)  # from the stored traces alone, which stores the analyses again
    assert _check(project, cache) == (first, 2)


@pytest.mark.tf
def test_a_stored_analysis_keeps_its_trace_recently_used(cold, tmp_path):
    """The size cap drops the least recently used entries: a trace answered through its analysis stays, so that a
    changed setting later needs only the analysis again."""
    project, cache, _ = cold
    cache = _copy(cache, tmp_path)
    analyses = set(_analyses(cache))
    traces = [p for p in cache.glob("*.json") if p not in analyses]
    assert len(traces) == 2
    for entry in cache.glob("*.json"):
        os.utime(entry, (1_000_000, 1_000_000))
    assert _check(project, cache)[1] == 2
    assert all(entry.stat().st_mtime > 1_000_000 for entry in [*traces, *analyses])


@pytest.mark.tf
def test_a_shards_report_is_the_same_from_a_stored_analysis(cold, tmp_path):
    project, cache, _ = cold
    cache = _copy(cache, tmp_path)
    for entry in _analyses(cache):
        entry.unlink()
    shard = parse_shard("1/1")  # every file, with each result's place in the whole run
    computed, answered = _check(project, cache, shard=shard)
    assert answered == 0 and '"order"' in computed["json"]
    assert _check(project, cache, shard=shard) == (computed, 2)


@pytest.mark.tf
def test_a_changed_setting_or_auto_clustering_beside_the_file_is_a_fresh_answer(cold, tmp_path):
    project, cache, first = cold
    cache = _copy(cache, tmp_path)
    gpu, answered = _check(project, cache, device="gpu")
    assert answered == 0 and gpu != first and "on gpu" in gpu["text"]
    assert _check(project, cache, device="gpu") == (gpu, 2) and _check(project, cache) == (first, 2)
    selected, answered = _check(project, cache, select=("XLA001",))
    assert answered == 0 and {f["code"] for f in json.loads(selected["json"])["findings"]} == {"XLA001"}
    forced, answered = _check(project, cache, mode="autocluster")
    assert answered == 0 and "auto-clustering" in forced["text"] and "auto-clustering" not in first["text"]
    script = project / "train.sh"
    script.write_text("TF_XLA_FLAGS=--tf_xla_auto_jit=2 python model.py\n")
    try:
        beside, answered = _check(project, cache)  # a script beside a file is read for its mode: every file's miss
    finally:
        script.unlink()
    assert answered == 0
    assert "train.sh:1" in beside["text"] and _check(project, cache) == (first, 2)


@pytest.mark.tf
def test_an_edited_file_is_traced_and_analysed_again(cold, tmp_path):
    project, cache, first = cold
    cache = _copy(cache, tmp_path)
    model = project / "model.py"
    model.write_text(MODEL.replace("    return tf.nn.relu", "    tf.print(x)\n    return tf.nn.relu"))
    try:
        edited, answered = _check(project, cache, start_worker)
    finally:
        model.write_text(MODEL)
    assert answered == 1 and edited != first
    assert "PrintV2" in edited["json"] and "PrintV2" not in first["json"]
    assert _check(project, cache) == (first, 2)


@pytest.mark.tf
def test_a_damaged_analysis_is_a_miss(cold, tmp_path):
    project, cache, first = cold
    cache = _copy(cache, tmp_path)
    damaged = _analyses(cache)
    damaged[0].write_text(damaged[0].read_text().replace('"checked": ', '"checked": 1 or '))  # the checksum fails
    ResultCache(cache, None).write(damaged[1].stem, str(project / "model.py"), [], '{"entries": []}',
                                   time.time() + 1)  # intact, but not an answer
    assert _check(project, cache) == (first, 0)


# The cache on its own (no TensorFlow).

def _answer(path: str) -> Answer:
    finding = Finding("XLA001", "unsupported-op", "error", "no kernel", "move it", path, 3, 4, "step")
    return Answer([Entry(path, "step", 3, "pending", ops=5)], [FileError(path, "a notice", notice=True)],
                  [(finding, (0,), (path, 3)), (finding, (), None)], checked=True)


def test_an_answer_is_stored_for_its_key_only_and_read_back_whole(tmp_path, monkeypatch):
    module = tmp_path / "m.py"
    module.write_text("import tensorflow as tf\n")
    request = {"path": str(module), "targets": [], "discover": True, "verify": None}
    results = ResultCache(tmp_path / "cache", "2.21.0")
    cache = AnalysisCache(results, Options(device="cpu"), set())
    assert cache.get(request) is None
    cache.put(request, [], _answer(str(module)), cache.tensorflow)
    assert cache.get(request) == _answer(str(module))
    (tmp_path / "elsewhere").mkdir()
    with monkeypatch.context() as patch:
        patch.chdir(tmp_path / "elsewhere")  # its paths would be shown from another folder
        assert cache.get(request) is None
    assert AnalysisCache(results, Options(device="cpu", jobs=7, strict=True), set()).get(request) is not None
    assert AnalysisCache(results, Options(device="gpu"), set()).get(request) is None
    assert AnalysisCache(results, Options(device="cpu"), {str(module)}).get(request) is None
    assert AnalysisCache(results, Options(device="cpu", save_graphs=str(tmp_path)), set()).get(request) is None
    installed = analysis_cache.installed_version
    for library in ("libcst", "networkx", "numpy"):  # another version of a library the analysis runs
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(analysis_cache, "installed_version",
                          lambda name: "0.0" if name == library else installed(name))
            assert AnalysisCache(results, Options(device="cpu"), set()).get(request) is None, library
    other = AnalysisCache(results, Options(device="cpu"), set())
    moved = {**request, "targets": [{"name": "step", "specs": None}]}
    other.get(moved)
    other.put(moved, [], _answer(str(module)), "2.0.0")  # made with another TensorFlow's table: not stored
    crossing = _answer(str(module))
    crossing.produced[0] = (crossing.produced[0][0], (-1,), None)  # counts for another file's entry: not stored
    other.get(moved)
    other.put(moved, [], crossing, cache.tensorflow)
    assert len(list(results.directory.glob("*.json"))) == 1
    module.write_text("import tensorflow as tf  # edited\n")
    assert cache.get(request) is None
    (tmp_path / "run.sh").write_text("TF_XLA_FLAGS=--tf_xla_auto_jit=2 python m.py\n")  # while it is analysed
    cache.put(request, [], _answer(str(module)), cache.tensorflow)
    assert cache.get(request) is None and len(list(results.directory.glob("*.json"))) == 1
