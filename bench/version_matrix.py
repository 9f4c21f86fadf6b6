"""The version matrix: the tests that ask the real compiler, run in one environment per TensorFlow release.

    python bench/version_matrix.py --venvs DIR --make            # make DIR/tf-<V> for each release (downloads)
    python bench/version_matrix.py --venvs DIR                   # run the tests in each, print the table
    python bench/version_matrix.py --venvs DIR -k 2.17 --json out.json
    python bench/version_matrix.py --tables                      # what differs between the shipped tables

``--make`` installs, one release at a time, ``tensorflow-cpu==V`` with the Keras it pulls in and, where one
exists for that release, ``tf-keras`` (without its ``tensorflow`` requirement, which would install a second
TensorFlow over the CPU one), plus xlalint's own and its tests' requirements. The checkout is not installed
there: the tests run it through ``PYTHONPATH``.

Each environment runs TESTS with pytest (``-p no:cacheprovider``, one process: the machine's cores go to the
compiler), its outcomes read from a JUnit XML file; the table lists per release the versions found, the tests
passed, failed and skipped, and each failure's test id and first line. An environment whose python is the
one running this script is run too (the global TensorFlow). Always exits 0: it is a report, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from xlalint.core.tables import API, CONST_INPUTS, SUPPORT, path, shipped_versions, version_key  # noqa: E402

# release -> the tf-keras release made for it (None: the TensorFlow's own Keras only)
RELEASES = {"2.16.2": "2.16.0", "2.17.1": "2.17.0", "2.18.1": "2.18.0", "2.19.1": "2.19.0", "2.20.0": "2.20.1",
            "2.21.0": "2.21.0"}
TESTS = [
    "tests/test_rules_against_compiler.py",  # rules/ bad and good against the compiler
    "tests/test_run_rules.py",  # the run-only rules, run for real and with xlalint run
    "tests/test_keras_fit.py",  # Keras's jit decision and the step fit compiles
    "tests/test_run.py",  # the xlalint run scenarios
    "tests/test_autocluster.py",  # the auto-clustering prediction against TensorFlow's dumps
    "tests/test_tf_keras.py",  # tf-keras: discovery, its jit decision, its fit under xlalint run
    "tests/test_run_hooks.py",  # the private hooks of xlalint run
    "tests/test_support_tables.py",  # the shipped tables against this release's registry
    "tests/test_static.py::test_shipped_table_is_what_the_installed_tensorflow_generates",
]
REQUIREMENTS = ["networkx", "libcst", "tabulate", "nbformat", "numpy", "pytest", "pytest-xdist", "hypothesis",
                "jsonschema"]
VERSIONS_PROBE = ("import importlib.metadata as m, json\n"
                  "def v(d):\n"
                  "    try:\n        return m.version(d)\n    except m.PackageNotFoundError:\n        return None\n"
                  "print(json.dumps({d: v(d) for d in ('tensorflow-cpu', 'tensorflow', 'keras', 'tf-keras')}))")


def make(root: Path, releases: list[str]) -> None:
    """One environment per release, one install at a time (each is hundreds of megabytes)."""
    for release in releases:
        venv = root / f"tf-{release}"
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
        if not venv.exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([*pip, f"tensorflow-cpu=={release}", *REQUIREMENTS], check=True)
        if RELEASES[release]:
            done = subprocess.run([*pip, "--no-deps", f"tf-keras=={RELEASES[release]}"])
            if done.returncode:
                print(f"{release}: no tf-keras {RELEASES[release]} installed")
        print(f"made {venv}")


def environments(root: Path | None, wanted: list[str]) -> list[Path]:
    """The python of each ``tf-<V>`` environment under ``root``, oldest first, then this one's (named by the
    TensorFlow installed here); ``wanted``: only those whose name contains one of these."""
    folders = sorted((p for p in (root.iterdir() if root else ()) if (p / "bin" / "python").exists()),
                     key=lambda p: version_key(p.name.removeprefix("tf-")))
    here = _versions(Path(sys.executable))
    named = [(p.name, p / "bin" / "python") for p in folders]
    named.append((f"tf-{here['tensorflow-cpu'] or here['tensorflow']}", Path(sys.executable)))
    return [python for name, python in named if not wanted or any(w in name for w in wanted)]


def _versions(python: Path) -> dict:
    done = subprocess.run([str(python), "-c", VERSIONS_PROBE], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def run_tests(python: Path, tests: list[str], timeout: int) -> dict:
    """The outcome of each test in ``tests`` under ``python``, from pytest's JUnit XML."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "TF_CPP_MIN_LOG_LEVEL": "2"}
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "junit.xml"
        started = time.monotonic()
        try:
            subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
                            f"--junitxml={junit}", *tests], cwd=REPO, env=env, timeout=timeout,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            error = None
        except subprocess.TimeoutExpired:
            error = f"pytest ran past {timeout} s"
        outcomes = _outcomes(junit) if junit.exists() else {}
    return {"outcomes": outcomes, "seconds": round(time.monotonic() - started), "error": error}


def _outcomes(junit: Path) -> dict:
    """``{test id: [outcome, first line of its message]}``."""
    found = {}
    for case in ElementTree.parse(junit).iter("testcase"):
        test = f"{case.get('classname', '').replace('.', '/')}.py::{case.get('name')}"
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = "failed" if child.tag != "skipped" else "skipped"
                message = (child.get("message") or child.text or "").strip().splitlines()[0][:200] if (
                    child.get("message") or child.text) else ""
        found[test] = [outcome, message]
    return found


def table_differences() -> list[str]:
    """What each shipped release's XLA kernel lists, constant inputs and static API names add or drop
    against the release before it."""
    lines = []
    versions = shipped_versions(SUPPORT)
    for old, new in zip(versions, versions[1:]):
        a, b = (json.loads(path(SUPPORT, v).read_text()) for v in (old, new))
        ca, cb = (json.loads(path(CONST_INPUTS, v).read_text()) for v in (old, new))
        pa, pb = (json.loads(path(API, v).read_text())["apis"] for v in (old, new))
        parts = []
        for device in ("cpu", "gpu"):
            ka, kb = a["devices"][device], b["devices"][device]
            added, dropped = sorted(set(kb) - set(ka)), sorted(set(ka) - set(kb))
            changed = sorted(op for op in set(ka) & set(kb) if ka[op] != kb[op])
            named = f" {changed}" if len(changed) <= 8 else ""
            parts.append(f"{device}: +{len(added)} {added} -{len(dropped)} {dropped}, dtypes changed for "
                         f"{len(changed)} ops{named} {_dtype_changes(ka, kb, changed)}")
        const = sorted(op for op in set(ca["compile_time_constant_inputs"]) | set(cb["compile_time_constant_inputs"])
                       if ca["compile_time_constant_inputs"].get(op) != cb["compile_time_constant_inputs"].get(op))
        parts.append(f"constant inputs changed: {const}; metadata ops "
                     f"{'same' if ca['metadata_ops'] == cb['metadata_ops'] else 'changed'}")
        parts.append(f"static API: +{sorted(set(pb) - set(pa))} -{sorted(set(pa) - set(pb))}, "
                     f"{sum(pa[k] != pb[k] for k in set(pa) & set(pb))} records changed")
        lines.append(f"{old} -> {new}: " + "; ".join(parts))
    return lines


def _dtype_changes(ka: dict, kb: dict, changed: list[str]) -> str:
    """The dtypes added to or dropped from the changed ops' constraints, summed over them."""
    def dtypes(kernels):
        return {t for kernel in kernels for allowed in kernel.values() for t in allowed}

    added = sorted(set().union(*(dtypes(kb[op]) - dtypes(ka[op]) for op in changed)))
    dropped = sorted(set().union(*(dtypes(ka[op]) - dtypes(kb[op]) for op in changed)))
    return f"(dtypes added {added}, dropped {dropped})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venvs", type=Path, help="the folder holding one tf-<V> environment per release")
    parser.add_argument("--make", action="store_true", help="make the environments first (downloads)")
    parser.add_argument("-k", action="append", default=[], help="only environments whose version contains this")
    parser.add_argument("--tests", nargs="*", default=TESTS, help="pytest ids to run (default: the compiler tests)")
    parser.add_argument("--timeout", type=int, default=3600, help="seconds per environment")
    parser.add_argument("--json", type=Path, help="write every outcome here")
    parser.add_argument("--tables", action="store_true", help="only print what differs between shipped tables")
    args = parser.parse_args()
    if args.tables:
        print("\n".join(table_differences()))
        return 0
    if args.make:
        make(args.venvs, [r for r in RELEASES if not args.k or any(k in r for k in args.k)])
    results = []
    for python in environments(args.venvs, args.k):
        versions = _versions(python)
        print(f"{python}: {versions}", file=sys.stderr, flush=True)
        results.append({"python": str(python), "versions": versions, **run_tests(python, args.tests, args.timeout)})
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))
    print(render(results))
    return 0


def render(results: list[dict]) -> str:
    rows = ["| TensorFlow | Keras | tf-keras | passed | failed | skipped | seconds |", "|---|---|---|---|---|---|---|"]
    failures = []
    for result in results:
        versions, outcomes = result["versions"], result["outcomes"].values()
        counts = {kind: sum(o[0] == kind for o in outcomes) for kind in ("passed", "failed", "skipped")}
        tensorflow = versions["tensorflow-cpu"] or versions["tensorflow"]
        rows.append(f"| {tensorflow} | {versions['keras']} | {versions['tf-keras'] or '-'} | {counts['passed']} | "
                    f"{counts['failed']} | {counts['skipped']} | {result['seconds']} |")
        failures += [f"{tensorflow}: {test}: {message}" for test, (outcome, message) in result["outcomes"].items()
                     if outcome == "failed"]
        if result["error"]:
            failures.append(f"{tensorflow}: {result['error']}")
    return "\n".join(rows + [""] + failures)


if __name__ == "__main__":
    sys.exit(main())
