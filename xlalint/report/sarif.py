"""``--format sarif``: SARIF 2.1.0 for code-scanning upload (GitHub, GitLab, Azure DevOps).

File locations are percent-encoded URIs relative to the repository root (``%SRCROOT%``), whose
absolute URI is given in ``originalUriBaseIds``; each result carries its baseline fingerprint in
``partialFingerprints`` (stable when lines move) and, with ``--baseline``, its ``baselineState``.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from urllib.parse import quote

from xlalint.version import VERSION
from xlalint.checks import RULES
from xlalint.core.results import Finding, Report

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"error": "error", "warning": "warning", "info": "note"}
ROOT_ID = "%SRCROOT%"
FINGERPRINT_KEY = "xlalintFingerprint/v1"
URL_LABELS = ("repository", "source", "homepage")  # [project.urls] keys tried, in this order


@lru_cache(maxsize=1)
def project_url() -> str | None:
    """The project's repository URL from the installed package's metadata ([project.urls] in pyproject)."""
    try:
        entries = metadata.metadata("xlalint").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    urls = {label.strip().lower(): url.strip() for label, _, url in (e.partition(",") for e in entries)}
    return next((urls[label].rstrip("/") for label in URL_LABELS if urls.get(label)), None)


def help_uri(code: str, base: str | None) -> str | None:
    """The rule's page, ``rules/CODE/README.md`` of the repository at ``base``."""
    return f"{base}/blob/main/rules/{code}/README.md" if base else None


def source_root() -> Path:
    """The repository root: the CI's checkout ($GITHUB_WORKSPACE, $CI_PROJECT_DIR) when the working
    directory is inside it, else the nearest directory up with .git, else the working directory."""
    here = Path.cwd().resolve()
    for variable in ("GITHUB_WORKSPACE", "CI_PROJECT_DIR"):
        workspace = os.environ.get(variable)
        if workspace and (Path(workspace).resolve() == here or Path(workspace).resolve() in here.parents):
            return Path(workspace).resolve()
    return next((d for d in (here, *here.parents) if (d / ".git").exists()), here)


def artifact(path: str, root: Path) -> dict:
    """``artifactLocation`` of a reported path: relative to the root and percent-encoded, else absolute."""
    absolute = Path(os.path.abspath(path))
    try:
        relative = absolute.relative_to(root)
    except ValueError:
        return {"uri": absolute.as_uri()}
    return {"uri": quote(relative.as_posix(), safe="/"), "uriBaseId": ROOT_ID}


def _rule(code: str, base: str | None) -> dict:
    rule = RULES[code]
    described = {
        "id": code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.summary},
        "help": {"text": f"See rules/{code}/README.md: what it does, why it matters, what to use instead."},
        "helpUri": help_uri(code, base),
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
    }
    return {k: v for k, v in described.items() if v is not None}


def _result(f: Finding, index: dict, root: Path, state: str | None) -> dict:
    result = {
        "ruleId": f.code,
        "ruleIndex": index[f.code],
        "level": LEVEL[f.severity],
        "message": {"text": f"{f.cell_prefix}{f.message}. {f.hint}"},
        "locations": [{
            "physicalLocation": {
                "artifactLocation": artifact(f.path, root),
                # in a notebook: the line of the .ipynb file that holds the cell's line (no column there)
                "region": {"startLine": f.file_line} if f.cell else {"startLine": f.line, "startColumn": f.col},
            },
            "logicalLocations": [{"name": name, "kind": "function"} for name in f.all_entries],
        }],
    }
    if f.related:
        result["relatedLocations"] = [
            {"id": i, "physicalLocation": {"artifactLocation": artifact(r.path, root),
                                           "region": {"startLine": r.cell["file_line"] if r.cell else r.line}},
             "message": {"text": r.message}}
            for i, r in enumerate(f.related, 1)]
    if f.fingerprint:
        result["partialFingerprints"] = {FINGERPRINT_KEY: f.fingerprint}
    if state:
        result["baselineState"] = state
    return result


def emit(report: Report) -> str:
    root, base = source_root(), project_url()
    unchanged = report.baseline.unchanged if report.baseline else []
    used = sorted({f.code for f in report.findings + unchanged})
    index = {code: i for i, code in enumerate(used)}
    state = "new" if report.baseline else None
    results = [_result(f, index, root, state) for f in report.findings]
    results += [_result(f, index, root, "unchanged") for f in unchanged]
    notifications = [
        {"level": "note" if e.notice else "error", "message": {"text": e.message},
         "locations": [{"physicalLocation": {"artifactLocation": artifact(e.path, root)}}]}
        for e in report.errors
    ]
    if report.interrupted:
        notifications.append({"level": "error", "message": {
            "text": f"the run was cut short by {report.interrupted}: the results are incomplete"}})
    driver = {"name": "xlalint", "version": VERSION, "informationUri": base,
              "rules": [_rule(code, base) for code in used]}
    run = {
        "tool": {"driver": {k: v for k, v in driver.items() if v is not None}},
        "originalUriBaseIds": {ROOT_ID: {"uri": root.as_uri().rstrip("/") + "/"}},
        "results": results,
        # A file that could not be checked (TensorFlow missing, a crash) or a cancelled run is no success:
        # its missing results do not mean the code is clean.
        "invocations": [{"executionSuccessful": not notifications, "toolExecutionNotifications": notifications}],
    }
    if report.shard:  # its own category: code scanning keeps each shard's results apart
        run["automationDetails"] = {"id": f"xlalint/{report.shard.shard.name}/"}
    return json.dumps({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2)
