"""The result cache: unchanged files skip TensorFlow entirely; any edit is seen."""

from __future__ import annotations

import json
import os
import time

import pytest

from helpers import run_json, run_without_tf
from xlalint.tracing.cache import ResultCache

BLOCK_TF = "import sys\nsys.modules['tensorflow'] = None\n"  # any TensorFlow import now fails

MODEL = """import tensorflow as tf
from helpers import squash


@tf.function(input_signature=[tf.TensorSpec([4], tf.float32)])
def step(x):
    return squash(x) * 2.0
"""
HOST_HELPER = "import tensorflow as tf\n\n\ndef squash(x):\n    return tf.numpy_function(lambda a: a, [x], tf.float32)\n"
PLAIN_HELPER = "import tensorflow as tf\n\n\ndef squash(x):\n    return tf.tanh(x)\n"


def _project(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "helpers.py").write_text(HOST_HELPER)
    blocker = tmp_path / "no_tf"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(BLOCK_TF)
    return {"PYTHONPATH": str(blocker)}


def _codes(report):
    return sorted((f["code"], f["path"].rsplit("/", 1)[-1], f["line"]) for f in report["findings"])


@pytest.mark.tf
def test_unchanged_file_is_answered_without_tensorflow(tmp_path):
    no_tf = _project(tmp_path)
    cache = ["--cache-dir", str(tmp_path / "cache"), "--device", "cpu"]
    first, _ = run_json(str(tmp_path / "model.py"), *cache)
    assert _codes(first) == [("XLA001", "helpers.py", 5)]
    again, code = run_json(str(tmp_path / "model.py"), *cache, env=no_tf)  # TensorFlow cannot load now
    assert again["findings"] == first["findings"] and again["entries"] == first["entries"] and code == 1
    blocked, _ = run_json(str(tmp_path / "model.py"), "--no-cache", "--device", "cpu", env=no_tf)
    assert "TensorFlow is not installed" in blocked["errors"][0]["message"]


@pytest.mark.tf
def test_an_edit_to_the_file_or_an_imported_module_is_never_served_stale(tmp_path):
    _project(tmp_path)
    cache = ["--cache-dir", str(tmp_path / "cache"), "--device", "cpu"]
    run_json(str(tmp_path / "model.py"), *cache)
    (tmp_path / "helpers.py").write_text(PLAIN_HELPER)
    report, _ = run_json(str(tmp_path / "model.py"), *cache)
    assert [c for c in _codes(report) if c[0] == "XLA001"] == []
    (tmp_path / "model.py").write_text(MODEL.replace("    return squash", "    tf.print(x)\n    return squash"))
    report, _ = run_json(str(tmp_path / "model.py"), *cache)
    assert ("XLA001", "model.py", 7) in _codes(report)


@pytest.mark.tf
def test_a_damaged_entry_is_traced_again(tmp_path):
    _project(tmp_path)
    cache = ["--cache-dir", str(tmp_path / "cache"), "--device", "cpu"]
    first, _ = run_json(str(tmp_path / "model.py"), *cache)
    for entry in (tmp_path / "cache").glob("*.json"):
        entry.write_text(json.dumps({"deps": {}, "result": {"path": str(tmp_path / "model.py")}}))
    again, code = run_json(str(tmp_path / "model.py"), *cache)
    assert again["findings"] == first["findings"] and again["entries"] == first["entries"] and code == 1


@pytest.mark.tf
def test_options_are_part_of_the_key(tmp_path):
    _project(tmp_path)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    gpu, _ = run_json(str(tmp_path / "model.py"), *cache, "--device", "gpu")
    cpu, _ = run_json(str(tmp_path / "model.py"), *cache, "--device", "cpu")
    assert gpu["device"] == "gpu" and cpu["device"] == "cpu"
    assert "on gpu" in gpu["findings"][0]["message"] and "on cpu" in cpu["findings"][0]["message"]


# The cache on its own (no TensorFlow): a stored result is served only while it is intact and current.

def _stored(tmp_path, max_mb=512, pad=0, name="m.py"):
    """A cache, a request and the result a worker would send for a module reading cfg.json."""
    module, data = tmp_path / name, tmp_path / "cfg.json"
    module.write_text(f"# {name}\nimport json\nCFG = json.load(open('cfg.json'))\n")
    data.write_text('{"width": 4}')
    request = {"path": str(module), "targets": [], "discover": True, "verify": False}
    result = {"type": "file", "path": str(module), "error": None, "deps": [str(module), str(data)],
              "entries": [{"name": "step", "line": 3, "kind": "tf.function", "signature": [], "graph": None,
                           "error": "no input_signature", "pad": "x" * pad}]}
    return ResultCache(tmp_path / "cache", "2.21.0", max_mb), request, result


def _entry_files(cache):
    return sorted(cache.directory.glob("*.json"))


def test_a_stored_result_is_served_until_a_dep_changes_disappears_or_appears(tmp_path):
    cache, request, result = _stored(tmp_path)
    assert cache.get(request) is None
    cache.put(request, result)
    assert cache.get(request) == result
    (tmp_path / "cfg.json").write_text('{"width": 8}')  # a data file read at import
    assert cache.get(request) is None
    cache.put(request, result)
    (tmp_path / "cfg.json").unlink()
    assert cache.get(request) is None
    result["deps"].append(str(tmp_path / "local.json"))  # tried at import, absent then
    cache.put(request, result)
    assert cache.get(request) == result
    (tmp_path / "local.json").write_text("{}")
    assert cache.get(request) is None


def test_an_entry_is_written_as_json_dumps_writes_it(tmp_path):
    """The stored text is ``json.dumps`` of the entry, key order included: caches written before and after
    the result was encoded once for its checksum and its text are the same bytes."""
    cache, request, result = _stored(tmp_path)
    result["entries"][0]["signature"] = [{"dtype": "float32", "shape": [None, 3]}]
    result["deps"].append(str(tmp_path / "caf\u00e9.json"))  # absent: digest None; not ASCII
    cache.put(request, result)
    [path] = _entry_files(cache)
    text = path.read_text(encoding="utf-8")
    stored = json.loads(text)
    assert list(stored) == ["deps", "checksum", "result"] and stored["result"] == result
    assert text == json.dumps(stored)


def test_a_result_whose_files_changed_during_the_trace_is_not_stored(tmp_path):
    cache, request, result = _stored(tmp_path)
    cache.get(request)  # the lookup before the trace
    later = os.stat(tmp_path / "cfg.json").st_mtime + 5
    os.utime(tmp_path / "cfg.json", (later, later))  # saved while the worker was tracing
    cache.put(request, result)
    assert _entry_files(cache) == []


@pytest.mark.parametrize("corrupt", [
    lambda entry: "{not json",
    lambda entry: "[]",
    lambda entry: "null",
    lambda entry: json.dumps({"result": entry["result"], "checksum": entry["checksum"]}),  # no deps
    lambda entry: json.dumps({**entry, "deps": ["m.py"]}),
    lambda entry: json.dumps({**entry, "deps": {"m.py": 5}}),
    lambda entry: json.dumps({**entry, "result": "ok"}),
    lambda entry: json.dumps({**entry, "result": {**entry["result"], "entries": None}}),
    lambda entry: json.dumps({**entry, "result": {**entry["result"], "entries": [{"name": "step"}]}}),
    lambda entry: json.dumps({**entry, "result": {**entry["result"], "path": "/elsewhere/m.py"}}),
    lambda entry: json.dumps({**entry, "checksum": None}),
    lambda entry: json.dumps(entry).replace('"line": 3', '"line": 4'),  # edited: the checksum differs
    lambda entry: json.dumps(entry)[:-40],  # cut short
    lambda entry: json.dumps(entry, indent=1),  # the same values in other text: the checksum is of the text
    lambda entry: json.dumps({"checksum": entry["checksum"], "deps": entry["deps"], "result": entry["result"]}),
    lambda entry: json.dumps({**entry, "checksum": entry["checksum"].upper()}),
    lambda entry: json.dumps(entry) + "\n",
], ids=["not-json", "list", "null", "no-deps", "deps-list", "deps-int", "result-str", "entries-none",
        "entry-keys", "other-path", "no-checksum", "edited", "truncated", "indented", "reordered",
        "checksum-case", "trailing-text"])
def test_a_damaged_entry_is_a_miss_never_a_crash(tmp_path, corrupt):
    cache, request, result = _stored(tmp_path)
    cache.put(request, result)
    [path] = _entry_files(cache)
    path.write_text(corrupt(json.loads(path.read_text())))
    assert cache.get(request) is None
    cache.put(request, result)  # the next run repairs it
    assert cache.get(request) == result


def test_the_least_recently_used_entries_go_when_the_cap_is_passed(tmp_path):
    files = [_stored(tmp_path, max_mb=1, pad=400_000, name=f"m{i}.py")[1:] for i in range(3)]
    cache = _stored(tmp_path, max_mb=1)[0]
    for age, (request, result) in zip((30, 20), files):
        cache.put(request, result)
        [entry] = [p for p in _entry_files(cache) if os.stat(p).st_mtime > time.time() - 10]
        os.utime(entry, (time.time() - age, time.time() - age))
    assert cache.get(files[0][0]) == files[0][1]  # a hit: m0 is now the most recently used
    cache.put(*files[2])  # 1.2 MB: over the cap, the least recently used (m1) goes
    assert [cache.get(request) == result for request, result in files] == [True, False, True]
    assert len(_entry_files(cache)) == 2


def test_clear_cache_removes_entries_only(tmp_path):
    cache, request, result = _stored(tmp_path)
    cache.put(request, result)
    (cache.directory / "notes.txt").write_text("mine")
    done = run_without_tf("--clear-cache", "--cache-dir", str(cache.directory))
    assert done.returncode == 0 and "removed 1 cached file(s)" in done.stderr
    assert sorted(p.name for p in cache.directory.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize("machine", [
    {"build_tag": lambda: "darwin-arm64-tensorflow-macos"},
    {"build_tag": lambda: "linux-x86_64-tensorflow"},  # the CUDA build, not tensorflow-cpu
    {"VERSION": "0.0.1"},
    {"installed_version": lambda dist: "9.9.9"},  # another Keras
])
def test_a_cache_from_another_machine_is_read_only_by_an_identical_one(tmp_path, monkeypatch, machine):
    """CI restores the cache directory on other runners: only a machine that traces alike may use it."""
    import xlalint.tracing.cache

    written, request, result = _stored(tmp_path)
    written.put(request, result)
    assert ResultCache(written.directory, "2.21.0").get(request) == result  # the same machine, a later run
    assert ResultCache(written.directory, "2.20.0").get(request) is None  # another TensorFlow
    for name, value in machine.items():
        monkeypatch.setattr(xlalint.tracing.cache, name, value)
    assert ResultCache(written.directory, "2.21.0").get(request) is None
