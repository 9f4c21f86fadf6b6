"""Regenerate everything generated from the rules: ``python tools/regen.py``.

* ``docs/rules.md``: the rule table and every rule's page, from ``rules/*/README.md`` and the
  registry (``tools/gen_rule_docs.py``; no TensorFlow);
* ``fixtures/graphs/``: the op graphs of every rule example and of two fixtures, saved with
  ``--save-graphs`` for the tests that rerun the rules without TensorFlow (needs TensorFlow;
  skipped with ``--docs-only``);
* with ``--tables`` instead: the installed TensorFlow's three tables in ``xlalint/data/`` (the support table,
  the compile-time-constant inputs, needing g++, and the static API names, a few minutes), each generated
  in its own process. Run it in an environment per supported TensorFlow release (``bench/version_matrix.py``
  makes them); xlalint picks the tables of the version it finds installed (``xlalint/core/tables.py``).

Arguments after ``--`` go to the tracing run, e.g. ``-- --cache-dir .cache`` or ``-- --jobs 4``.
A test fails, naming this command, while anything here is out of date or missing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import gen_rule_docs  # noqa: E402

from xlalint.core.tables import SUPPORT, path as table_path  # noqa: E402

GRAPHS = REPO / "fixtures" / "graphs"
GRAPH_SOURCES = ["rules", "fixtures/multi_blocker.py", "fixtures/keras_functional.py"]


def write_docs() -> None:
    (REPO / "docs" / "rules.md").write_text(gen_rule_docs.render(), encoding="utf-8")
    print("wrote docs/rules.md")


def write_graphs(extra: list[str]) -> None:
    """Trace the sources into a fresh directory, then put it in place of fixtures/graphs (no stale graph stays)."""
    with tempfile.TemporaryDirectory(dir=REPO / "fixtures") as tmp:
        done = subprocess.run([sys.executable, "-m", "xlalint", *GRAPH_SOURCES, "--device", "cpu", "--save-graphs",
                               tmp, "--format", "json", "-q", *extra], cwd=REPO, stdout=subprocess.DEVNULL)
        saved = sorted(Path(tmp).glob("*.json"))
        if done.returncode not in (0, 1) or not saved:  # 1: findings (the bad examples have them)
            sys.exit(f"tracing failed (exit {done.returncode}); fixtures/graphs left as it was")
        shutil.rmtree(GRAPHS, ignore_errors=True)
        GRAPHS.mkdir()
        for path in saved:
            shutil.copy2(path, GRAPHS / path.name)
    print(f"wrote {len(saved)} graphs to fixtures/graphs")


def write_tables() -> None:
    """The installed TensorFlow's tables, generated in fresh processes (the support table needs one)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
           "TF_CPP_MIN_LOG_LEVEL": "2"}
    with tempfile.TemporaryDirectory() as tmp:
        support = Path(tmp) / "support.json"
        subprocess.run([sys.executable, "-m", "xlalint.backend.support_tables", str(support)], env=env, check=True)
        version = json.loads(support.read_text(encoding="utf-8"))["tensorflow"]
        shutil.copyfile(support, table_path(SUPPORT, version))
    print(f"wrote the support table of TensorFlow {version}")
    for tool in ("gen_const_inputs.py", "gen_api_table.py"):
        subprocess.run([sys.executable, str(REPO / "tools" / tool)], env=env, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs-only", action="store_true", help="only docs/rules.md (no TensorFlow needed)")
    parser.add_argument("--tables", action="store_true", help="only the installed TensorFlow's tables")
    parser.add_argument("extra", nargs="*", help="after --: options for the tracing run")
    args = parser.parse_args()
    if args.tables:
        write_tables()
        return
    write_docs()
    if not args.docs_only:
        write_graphs(args.extra)


if __name__ == "__main__":
    main()
