"""``xlalint merge REPORT...``: the report of a whole run, from the JSON reports of its shards.

(SARIF reports of shards merge too, into SARIF only: xlalint.ci.merge_sarif.)

Each shard's report (``--shard K/N --format json``) records where its entries, findings and errors
sit in the order a single run reports them (xlalint.ci.shards); merging rebuilds the results, puts them
back in that order, joins the findings that several shards found at one place, and hands the
``Report`` to the same emitters as a run, which recompute coverage and the summary. Paths are as the
shards wrote them: merge from the directory they ran in (for SARIF's repository-relative URIs).
"""

from __future__ import annotations

import json
from typing import Any, Callable

from xlalint.ci.baseline import BaselineOutcome
from xlalint.checks import RULES
from xlalint.core.results import Entry, FileError, Finding, Report, one_per_place
from xlalint.ci.merge_sarif import is_sarif, merged_sarif, sarif_shard
from xlalint.ci.shards import PATHS


class MergeError(ValueError):
    """Reports that cannot be merged; the message names the file and what is wrong."""


def read_report(path: str) -> dict:
    """A shard's report, JSON or SARIF; anything else is a ``MergeError``."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as error:
        raise MergeError(f"{path}: cannot read it: {error.strerror or error}") from error
    except (ValueError, UnicodeDecodeError) as error:
        raise MergeError(f"{path}: not a JSON or SARIF report ({error})") from error
    if not isinstance(data, dict) or not ("xlalint" in data or is_sarif(data)):
        raise MergeError(f"{path}: not an xlalint report (--format json or sarif)")
    if shard_of(data) is None:
        raise MergeError(f"{path}: not a shard's report: run each shard with --shard K/N")
    return data


def _check_complete(reports: dict[str, dict]) -> None:
    """One report per shard of one run, all in one format: the same N, each K once, none missing, the
    same device."""
    if len({is_sarif(data) for data in reports.values()}) > 1:
        raise MergeError("the reports mix JSON and SARIF: give every shard's report in one format")
    shards = {path: shard_of(data) or (0, 0) for path, data in reports.items()}
    counts = {count for _, count in shards.values()}
    if len(counts) > 1:
        raise MergeError(f"the reports are shards of different splits (N = {', '.join(map(str, sorted(counts)))})")
    seen: dict[int, str] = {}
    for path, (index, _) in shards.items():
        if index in seen:
            raise MergeError(f"{seen[index]} and {path} are both shard {index}")
        seen[index] = path
    [count] = counts
    missing = sorted(set(range(1, count + 1)) - set(seen))
    if missing:
        raise MergeError(f"shard(s) {', '.join(map(str, missing))} of {count} missing: their files would be "
                         "left out")
    devices = {data.get("device") for data in reports.values()}
    if len(devices) > 1:
        raise MergeError(f"the reports target different devices ({', '.join(sorted(map(str, devices)))})")


def _in_order(reports: list[dict], field: str, key: str, build: Callable[[Any], Any],
              shared: int | None = None) -> list:
    """The items of ``field`` of every report, in the order of their recorded keys; items whose key's
    phase is ``shared`` (the same in every shard) come from the first report only."""
    keyed = []
    for n, data in enumerate(reports):
        for item, place in zip(data[field], data["shard"]["order"][key], strict=True):
            if place[0] != shared or n == 0:
                keyed.append((place, build(item)))
    keyed.sort(key=lambda pair: pair[0])  # stable: items of one file keep their shard's order
    return [item for _, item in keyed]


def _used_elsewhere_dropped(findings: list[Finding], reports: list[dict]) -> list[Finding]:
    """The findings less the selection rules' (about suppression comments: XLA801) on comments that a finding
    of another shard met."""
    used = {tuple(place) for data in reports for place in data["shard"].get("used_comments", [])}
    return [f for f in findings if not (RULES[f.code].stage == "selected" and (f.path, f.line) in used)]


def _baseline(reports: list[dict]) -> BaselineOutcome | None:
    """What the baseline hid in any shard, and the recorded findings that no shard found."""
    outcomes = [data["baseline"] for data in reports if data.get("baseline")]
    if not outcomes:
        return None
    fixed = [r for r in outcomes[0]["fixed"] if all(r in other["fixed"] for other in outcomes[1:])]
    return BaselineOutcome(outcomes[0]["path"], _in_order(reports, "unchanged", "unchanged", Finding.from_json),
                           fixed)


def merge(paths: list[str]) -> Report | str:
    """The whole run's ``Report`` from its shards' JSON reports at ``paths``; from SARIF reports, the
    merged SARIF text."""
    reports = {path: read_report(path) for path in paths}
    try:
        _check_complete(reports)
        ordered = sorted(reports.values(), key=lambda data: (shard_of(data) or (0, 0))[0])
        return merged_sarif(ordered) if is_sarif(ordered[0]) else _merged(ordered)
    except MergeError:
        raise
    except (KeyError, TypeError, ValueError) as error:
        raise MergeError(f"a report does not have the shape xlalint writes ({type(error).__name__}: {error})") \
            from error


def shard_of(data: dict) -> tuple[int, int] | None:
    """(K, N) of a shard's report, JSON or SARIF; None for another report."""
    if is_sarif(data):
        return sarif_shard(data)
    shard = data.get("shard")
    return (shard["index"], shard["count"]) if isinstance(shard, dict) else None


def _merged(ordered: list[dict]) -> Report:
    shards = [{**data, "unchanged": data["shard"]["unchanged"], "auto_jit": data["shard"]["auto_jit"]}
              for data in ordered]
    return Report(
        device=ordered[0]["device"],
        tensorflow=next((data["tensorflow"] for data in ordered if data["tensorflow"]), None),
        tables=next((data["tables"] for data in ordered if data.get("tables")), None),
        entries=_in_order(shards, "entries", "entries", lambda e: Entry(**e)),
        findings=_used_elsewhere_dropped(one_per_place(_in_order(shards, "findings", "findings", Finding.from_json)),
                                         shards),
        errors=_in_order(shards, "errors", "errors", lambda e: FileError(**e), shared=PATHS),
        interrupted=next((data["interrupted"] for data in ordered if data["interrupted"]), None),
        auto_jit=_in_order(shards, "auto_jit", "auto_jit", str),
        baseline=_baseline(shards))
