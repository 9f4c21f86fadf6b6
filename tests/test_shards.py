"""``--shard K/N`` and ``xlalint merge`` without TensorFlow: the split of the files, and static runs merged."""

from __future__ import annotations

import json
import os
import random

import pytest

from helpers import REPO
from xlalint.cli.main import main
from xlalint.ci.shards import Shard, parse_shard

STATIC_PATHS = ["fixtures/autocluster/docker", "fixtures/autocluster/script", "fixtures/autocluster/tiny.py",
                "fixtures/notebooks", "fixtures/suppressed", "fixtures/broken/latin1.py",
                "fixtures/broken/syntax_error.py", "missing.py"]


def _paths(rng: random.Random, count: int) -> list[str]:
    folders = ["", "src/", "src/models/", "tests/", "notebooks/", "deep/er/still/"]
    return [f"{rng.choice(folders)}file_{rng.randrange(10**9)}{rng.choice(['.py', '.ipynb', '.sh'])}"
            for _ in range(count)]


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_every_file_is_in_exactly_one_shard(tmp_path, count):
    paths = [str(tmp_path / p) for p in _paths(random.Random(count), 300)]
    holders = [[k for k in range(1, count + 1) if Shard(k, count).holds(p, str(tmp_path))] for p in paths]
    assert all(len(h) == 1 for h in holders)
    sizes = [sum(h == [k] for h in holders) for k in range(1, count + 1)]
    assert min(sizes) > 300 / count / 2  # no shard is left nearly empty


def test_adding_files_moves_no_other_file_and_the_root_is_what_counts(tmp_path):
    rng = random.Random(7)
    before = _paths(rng, 200)
    after = before + _paths(rng, 100)
    rng.shuffle(after)
    elsewhere = tmp_path / "another" / "checkout"

    def shards(paths, root):
        return {p: next(k for k in range(1, 5) if Shard(k, 4).holds(str(root / p), str(root))) for p in paths}

    first = shards(before, tmp_path)
    assert {p: k for p, k in shards(after, tmp_path).items() if p in first} == first
    assert shards(before, elsewhere) == first  # another machine, another checkout path: the same split


@pytest.mark.parametrize("text, shard", [("1/1", Shard(1, 1)), ("3/4", Shard(3, 4)), (" 2 / 10 ", Shard(2, 10))])
def test_shard_specs(text, shard):
    assert parse_shard(text) == shard
    assert shard.name == f"shard-{shard.index}-of-{shard.count}"


def _run(capsys, *argv: str) -> tuple[str, int]:
    code = main(list(argv))
    return capsys.readouterr().out, code


@pytest.fixture
def in_repo(monkeypatch):
    monkeypatch.chdir(REPO)


def _half_baseline(report: dict, path) -> None:
    """A baseline recording every other finding of ``report`` and one that went away."""
    records = [{"fingerprint": f["fingerprint"], "code": f["code"], "path": f["path"], "line": f["line"]}
               for f in report["findings"][::2]]
    records.append({"fingerprint": "0" * 32 + ":1", "code": "XLA001", "path": "gone.py", "line": 1})
    path.write_text(json.dumps({"version": 1, "xlalint": "0", "findings": records}))


def test_static_shards_merged_equal_one_run(in_repo, capsys, tmp_path):
    plain, _ = _run(capsys, "--static", "--format", "json", *STATIC_PATHS)
    _half_baseline(json.loads(plain), tmp_path / "baseline.json")
    flags = ["--static", "--baseline", str(tmp_path / "baseline.json"), *STATIC_PATHS]
    whole, code = _run(capsys, "--format", "json", *flags)
    whole_text, _ = _run(capsys, *flags)
    reports, checked = [], []
    for k in (1, 2, 3):
        out, _ = _run(capsys, "--format", "json", "--shard", f"{k}/3", *flags)
        (tmp_path / f"shard{k}.json").write_text(out)
        reports.append(str(tmp_path / f"shard{k}.json"))
        checked.append({e["path"] for e in json.loads(out)["entries"]})
        assert json.loads(out)["shard"]["files"] > 10  # every file of the run, not only the shard's
    assert all(checked) and sum(map(len, checked)) == len(set().union(*checked))  # no file in two shards
    merged, merged_code = _run(capsys, "merge", "--format", "json", *reversed(reports))
    assert merged == whole and merged_code == code
    one_shot = json.loads(whole)
    assert one_shot["coverage"]["auto_clustering"] and one_shot["errors"] and one_shot["findings"]
    assert one_shot["baseline"]["unchanged"] and [r["path"] for r in one_shot["baseline"]["fixed"]] == ["gone.py"]
    text, _ = _run(capsys, "merge", *reports)
    assert text == whole_text


def test_sarif_shards_merge_into_one_run_with_every_result(in_repo, capsys, tmp_path):
    whole, code = _run(capsys, "--static", "--format", "sarif", *STATIC_PATHS)
    for k in (1, 2):
        out, _ = _run(capsys, "--static", "--format", "sarif", "--shard", f"{k}/2", *STATIC_PATHS)
        (tmp_path / f"shard{k}.sarif").write_text(out)
    merged, merged_code = _run(capsys, "merge", "--format", "sarif", str(tmp_path / "shard2.sarif"),
                               str(tmp_path / "shard1.sarif"))
    [one], [run] = json.loads(whole)["runs"], json.loads(merged)["runs"]
    assert set(run) == set(one) and run["tool"] == one["tool"] and merged_code == code
    assert sorted(map(json.dumps, run["results"])) == sorted(map(json.dumps, one["results"]))
    assert run["invocations"][0]["executionSuccessful"] is one["invocations"][0]["executionSuccessful"] is False
    notes = [one["invocations"][0]["toolExecutionNotifications"], run["invocations"][0]["toolExecutionNotifications"]]
    assert sorted(map(json.dumps, notes[0])) == sorted(map(json.dumps, notes[1]))  # `missing.py` once
    with pytest.raises(SystemExit):
        main(["merge", str(tmp_path / "shard1.sarif"), str(tmp_path / "shard2.sarif")])
    assert "SARIF reports merge into --format sarif only" in capsys.readouterr().err


def test_sarif_of_a_shard_has_its_own_category(in_repo, capsys):
    out, _ = _run(capsys, "--static", "--format", "sarif", "--shard", "2/3", *STATIC_PATHS)
    assert json.loads(out)["runs"][0]["automationDetails"] == {"id": "xlalint/shard-2-of-3/"}
    from test_sarif_schema import _validate  # skips here without the official schema (Python 3.10)

    _validate(json.loads(out))
    out, _ = _run(capsys, "--static", "--format", "sarif", *STATIC_PATHS)
    assert "automationDetails" not in json.loads(out)["runs"][0]


def _shard_report(index: int, count: int) -> dict:
    return {"xlalint": "0", "tensorflow": None, "device": "gpu", "entries": [], "findings": [], "errors": [],
            "interrupted": None, "baseline": None,
            "shard": {"index": index, "count": count, "files": 0, "unchanged": [], "auto_jit": [],
                      "order": {"entries": [], "findings": [], "errors": [], "unchanged": [], "auto_jit": []}}}


@pytest.mark.parametrize("reports, message", [
    ([(1, 3), (3, 3)], "shard(s) 2 of 3 missing: their files would be left out"),
    ([(1, 2), (1, 2)], "a.json and b.json are both shard 1"),
    ([(1, 2), (1, 3)], "the reports are shards of different splits (N = 2, 3)"),
    (["not json"], "a.json: not a JSON or SARIF report (Expecting value: line 1 column 1 (char 0))"),
    ([[1, 2]], "a.json: not an xlalint report (--format json or sarif)"),
    ([{"version": "2.1.0", "runs": [{}]}], "a.json: not a shard's report: run each shard with --shard K/N"),
    ([{"xlalint": "0"}], "a.json: not a shard's report: run each shard with --shard K/N"),
    ([(1, 2), {"version": "2.1.0", "runs": [{"automationDetails": {"id": "xlalint/shard-2-of-2/"}}]}],
     "the reports mix JSON and SARIF: give every shard's report in one format"),
    ([(1, 1, {"entries": [{"path": "a.py"}]})], "a report does not have the shape xlalint writes (ValueError: "
                                                "zip() argument 2 is shorter than argument 1)"),
])
def test_reports_that_cannot_be_merged_are_usage_errors(tmp_path, monkeypatch, capsys, reports, message):
    monkeypatch.chdir(tmp_path)
    for name, report in zip("abc", reports):
        if isinstance(report, tuple):
            report = {**_shard_report(*report[:2]), **(report[2] if len(report) > 2 else {})}
        (tmp_path / f"{name}.json").write_text(report if isinstance(report, str) else json.dumps(report))
    with pytest.raises(SystemExit) as stop:
        main(["merge", *(f"{name}.json" for name in "abc"[:len(reports)])])
    assert stop.value.code == 2
    assert capsys.readouterr().err == f"xlalint merge: error: {message}\n"


def test_merge_writes_the_report_to_a_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.json").write_text(json.dumps(_shard_report(1, 1)))
    with pytest.raises(SystemExit):
        main(["merge", "a.json", "--format", "sarif", "-o", "out/merged.sarif"])
    assert capsys.readouterr().err == ("xlalint merge: error: out/merged.sarif: cannot write it: "
                                       "No such file or directory\n")
    os.mkdir("out")
    assert main(["merge", "a.json", "--format", "sarif", "-o", "out/merged.sarif"]) == 0
    sarif = json.loads((tmp_path / "out/merged.sarif").read_text())
    assert sarif["runs"][0]["results"] == [] and "automationDetails" not in sarif["runs"][0]
