"""The GitHub Action's step (action.yml): check the paths, write SARIF, annotations and a job summary.

Inputs come as ``INPUT_*`` environment variables (set by action.yml). xlalint runs three times on
the same paths, each with one output format; the second and third runs read the result cache.
With ``shard: K/N`` (a job of a matrix) each run checks that shard's files, and the reports are
named after it, for ``xlalint merge`` in a later job (docs/ci.md).
Outputs (``$GITHUB_OUTPUT``): ``exit-code`` (the gate, for the action's last step), ``sarif``,
``sarif-complete`` (upload only a complete run), ``category`` (code scanning's, per shard), ``json``
(the JSON report) and ``coverage`` (percent of ops under XLA).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter

def _input(name: str) -> str:
    return os.environ.get(f"INPUT_{name.upper().replace('-', '_')}", "").strip()


def _name() -> str:
    """``xlalint``, or ``xlalint/shard-K-of-N`` for a shard: the reports' names and the SARIF category."""
    shard = _input("shard")
    return f"xlalint/shard-{shard.replace('/', '-of-')}" if shard else "xlalint"


def changed_python_files() -> list[str] | None:
    """The Python files and notebooks a pull request adds or changes (None outside a pull request)."""
    event_path = os.environ.get("GITHUB_EVENT_PATH")
    if os.environ.get("GITHUB_EVENT_NAME") not in ("pull_request", "pull_request_target") or not event_path:
        return None
    with open(event_path, encoding="utf-8") as handle:
        base = json.load(handle)["pull_request"]["base"]["sha"]
    subprocess.run(["git", "fetch", "--quiet", "--depth=1", "origin", base], check=False)
    diff = subprocess.run(["git", "diff", "--name-only", "--diff-filter=ACMR", "-z", base, "HEAD", "--", "*.py", "*.ipynb"],
                          capture_output=True, text=True, check=True)
    return [p for p in diff.stdout.split("\0") if p]


def _options() -> list[str]:
    options = []
    for name, flag in (("device", "--device"), ("baseline", "--baseline"), ("min-coverage", "--min-coverage"),
                       ("shard", "--shard")):
        if _input(name):
            options += [flag, _input(name)]
    return options


def _xlalint(fmt: str, paths: list[str], changed: bool, quiet: bool = True) -> subprocess.CompletedProcess:
    """One run; files from the pull request's diff without TensorFlow entry points are skipped quietly."""
    extra = (["--skip-untraceable"] if changed else []) + (["-q"] if quiet else [])
    command = [sys.executable, "-m", "xlalint", "--format", fmt, *_options(), *extra, "--", *paths]
    return subprocess.run(command, capture_output=True, text=True)


def summary(report: dict, gate: str | None) -> str:
    """The job summary in Markdown: coverage table, blockers per file, entries ready to enable."""
    cov = report["coverage"]
    lines = ["## xlalint: is XLA on?", ""]
    percent = "-" if cov["percent"] is None else f"{cov['percent']}%"
    lines.append(f"XLA is on for **{cov['xla_on']} of {cov['entries']}** entries; **{percent}** of the traced ops "
                 f"run under XLA; {cov['ready']} more ready for `jit_compile=True`.")
    if gate:
        failed = cov["ops"] and cov["ops_under_xla"] * 100 < float(gate) * cov["ops"]
        lines.append(f"Coverage gate: at least {gate}% of ops: **{'failed' if failed else 'passed'}**.")
    if cov["auto_clustering"]:
        lines.append("Auto-clustering is turned on at " + ", ".join(f"`{s}`" for s in cov["auto_clustering"]) + ".")
    lines += ["", "| file | entries | XLA on | ready | ops | under XLA | coverage |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for f in cov["files"]:
        share = "-" if f["percent"] is None else f"{f['percent']}%"
        lines.append(f"| `{f['path']}` | {f['entries']} | {f['xla_on']} | {f['ready']} | {f['ops']} | "
                     f"{f['ops_under_xla']} | {share} |")
    blockers: dict[str, Counter] = {}
    for finding in report["findings"]:
        if finding["severity"] == "error":
            blockers.setdefault(finding["path"], Counter())[finding["code"]] += 1
    lines += ["", "### Blockers per file", ""]
    lines += [f"- `{path}`: " + ", ".join(f"{code} ×{n}" for code, n in sorted(codes.items()))
              for path, codes in sorted(blockers.items())] or ["None."]
    ready = [(f["path"], e) for f in cov["files"] for e in f["by_entry"] if e["ready"] and e["xla"] != "jit_compile"]
    lines += ["", "### Ready for `jit_compile=True`", ""]
    lines += [f"- `{path}::{e['name']}` (line {e['line']}, {e['ops']} ops)" for path, e in ready] or ["None."]
    if report["errors"]:
        lines += ["", "### Files not checked", ""] + [f"- `{e['path']}`: {e['message']}" for e in report["errors"]]
    if report.get("baseline"):
        b = report["baseline"]
        lines += ["", f"Baseline `{b['path']}`: {b['unchanged']} recorded finding(s) not shown, {len(b['fixed'])} fixed"
                  + (" (refresh it with `xlalint --write-baseline`)." if b["fixed"] else ".")]
    return "\n".join(lines) + "\n"


def _append(variable: str, text: str) -> None:
    target = os.environ.get(variable)
    if target:
        with open(target, "a", encoding="utf-8") as out:
            out.write(text)


def main() -> int:
    given = _input("paths").split()
    paths = given or changed_python_files()
    changed = not given and paths is not None
    if paths == []:
        _append("GITHUB_STEP_SUMMARY", "## xlalint: is XLA on?\n\nNo Python file changed in this pull request.\n")
        _append("GITHUB_OUTPUT", "exit-code=0\nsarif-complete=false\n")
        return 0
    paths = paths or ["."]
    name = _name()
    sarif_file, json_file = (f"{name.replace('/', '-')}.{ext}" for ext in ("sarif", "json"))
    sarif = _xlalint("sarif", paths, changed, quiet=False)  # traces: progress lines go to the log
    sys.stderr.write(sarif.stderr)
    with open(sarif_file, "w", encoding="utf-8") as out:
        out.write(sarif.stdout)
    complete = bool(sarif.stdout.strip()) and \
        json.loads(sarif.stdout)["runs"][0]["invocations"][0]["executionSuccessful"]
    annotations = _xlalint("github", paths, changed)
    print(annotations.stdout, end="")
    sys.stderr.write(annotations.stderr)
    text = _xlalint("json", paths, changed).stdout
    with open(json_file, "w", encoding="utf-8") as out:
        out.write(text)
    report = json.loads(text or "null")
    if report is not None:
        _append("GITHUB_STEP_SUMMARY", summary(report, _input("min-coverage")))
    coverage = report["coverage"]["percent"] if report else None
    _append("GITHUB_OUTPUT", f"exit-code={annotations.returncode}\nsarif={sarif_file}\n"
            f"sarif-complete={str(complete).lower()}\ncategory={name}\njson={json_file}\n"
            f"coverage={'' if coverage is None else coverage}\n")
    return 0  # the action's last step fails with exit-code, after the SARIF upload


if __name__ == "__main__":
    sys.exit(main())
