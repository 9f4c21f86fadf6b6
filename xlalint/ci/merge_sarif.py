"""SARIF reports of a run's shards (``--shard K/N --format sarif``) joined into one SARIF run.

SARIF keeps too little to rebuild the results (no entries, no coverage), so this joins the runs
themselves: every shard's results (in shard order), the rules they use (indexed again), and the
notifications, once each; the run is successful only if every shard's was. For the report a single
run would print, byte for byte, merge the shards' JSON reports instead (xlalint.ci.merge).
"""

from __future__ import annotations

import json
import re

SHARD_ID = re.compile(r"xlalint/shard-(\d+)-of-(\d+)/")  # runAutomationDetails.id (xlalint.report.sarif)


def is_sarif(data: dict) -> bool:
    return isinstance(data.get("runs"), list) and "version" in data


def sarif_shard(data: dict) -> tuple[int, int] | None:
    """(K, N) from a SARIF report's ``automationDetails.id``; None for one of no shard."""
    runs = data["runs"]
    details = runs[0].get("automationDetails") if len(runs) == 1 and isinstance(runs[0], dict) else None
    match = SHARD_ID.fullmatch(details.get("id", "")) if isinstance(details, dict) else None
    return (int(match[1]), int(match[2])) if match else None


def merged_sarif(documents: list[dict]) -> str:
    """One SARIF document whose one run holds every shard's results (``documents`` in shard order)."""
    runs = [document["runs"][0] for document in documents]
    rules = {rule["id"]: rule for run in runs for rule in run["tool"]["driver"].get("rules", [])}
    index = {code: i for i, code in enumerate(sorted(rules))}
    notifications = [n for run in runs for invocation in run["invocations"]
                     for n in invocation["toolExecutionNotifications"]]
    run = {key: value for key, value in runs[0].items() if key != "automationDetails"}
    run["tool"] = {"driver": {**runs[0]["tool"]["driver"], "rules": [rules[code] for code in sorted(rules)]}}
    run["results"] = [{**result, "ruleIndex": index[result["ruleId"]]} for r in runs for result in r["results"]]
    run["invocations"] = [{
        "executionSuccessful": all(i["executionSuccessful"] for r in runs for i in r["invocations"]),
        "toolExecutionNotifications": [n for i, n in enumerate(notifications) if n not in notifications[:i]]}]
    return json.dumps({**documents[0], "runs": [run]}, indent=2)
