"""``--format sarif``: SARIF 2.1.0 for code-scanning upload (GitHub, GitLab, Azure DevOps)."""

from __future__ import annotations

import json

from xlalint import __version__
from xlalint.checks import RULES
from xlalint.results import Report

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"error": "error", "warning": "warning", "info": "note"}
HELP_ROOT = "https://github.com/xlalint/xlalint/blob/main/rules"


def _rule(code: str) -> dict:
    rule = RULES[code]
    return {
        "id": code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.summary},
        "help": {"text": f"See rules/{code}/README.md: what it does, why it matters, what to use instead."},
        "helpUri": f"{HELP_ROOT}/{code}/README.md",
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
    }


def emit(report: Report) -> str:
    used = sorted({f.code for f in report.findings})
    index = {code: i for i, code in enumerate(used)}
    results = [
        {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": LEVEL[f.severity],
            "message": {"text": f"{f.message}. {f.hint}"},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": f.path.replace("\\", "/")},
                    "region": {"startLine": f.line, "startColumn": f.col},
                },
                "logicalLocations": [{"name": f.entry, "kind": "function"}],
            }],
        }
        for f in report.findings
    ]
    notifications = [
        {"level": "error", "message": {"text": e.message},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": e.path}}}]}
        for e in report.errors
    ]
    if report.interrupted:
        notifications.append({"level": "error", "message": {
            "text": f"the run was cut short by {report.interrupted}: the results are incomplete"}})
    run = {
        "tool": {"driver": {"name": "xlalint", "version": __version__, "informationUri": HELP_ROOT.rsplit("/", 2)[0],
                            "rules": [_rule(code) for code in used]}},
        "results": results,
        # A file that could not be checked (TensorFlow missing, a crash) or a cancelled run is no success:
        # its missing results do not mean the code is clean.
        "invocations": [{"executionSuccessful": not notifications, "toolExecutionNotifications": notifications}],
    }
    return json.dumps({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2)
