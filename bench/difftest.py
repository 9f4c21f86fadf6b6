"""Differential tester: generated programs, the real XLA compiler (CPU) and xlalint, compared.

    python bench/difftest.py --seed 7 --n 400                 # 400 programs of seed 7
    python bench/difftest.py --seed 7 --n 2000 --seconds 3600 --jobs 2
    python bench/difftest.py --seed 7 --ops abs,cumsum --n 20   # only these ops
    python bench/difftest.py --seed 7 --n 2000 --recheck        # that run judged by the current rules

Programs come from ``bench/_difftest_programs.py`` (ops x dtypes x shapes x control-flow
wrappers), each written as a user file under ``--out`` (default ``.difftest/seed-N``). A
batch is checked by ONE xlalint run (``--format json --device cpu --no-cache``) and by
compiler children (``bench/agreement.py``'s protocol: import, trace, lower to HLO, run with
concrete seeded tensors, compare with TensorFlow without XLA). A program TensorFlow itself
refuses without XLA is invalid and not counted. The script families (``bench/_difftest_scripts.py``:
distribution strategies, ``tf.function`` of objects, Keras preprocessing models) are whole scripts:
the compiler side runs each as ``__main__`` in a forked child, with XLA (where the script or Keras asks
for it, and where a function of the script has no ``jit_compile``, as xlalint judges it) and without
(what the two print is compared: the shapes of what they compute), and xlalint judges each in both
modes, ``xlalint run`` (the row's verdict) and the check command (``check``: asked only about what it
can see without a run).

Disagreements, by category: a false blocker (XLA compiles and runs it to TensorFlow's result;
xlalint reports an error; an error on a program XLA runs to another result is right, and an XLA2xx
error, a silent difference, on a program whose outputs cannot be compared is no answer), a false
compatible (XLA fails; xlalint reports none), a missed line (both fail, but no error finding
sits at the line of the op the compiler names), no verdict, and a missed silent difference (XLA
returns another result; xlalint reports neither an error nor an XLA2xx finding). Each category's first program is
minimised (its steps removed one at a time, its wrapper made plain, while the disagreement
stays) and written to ``--out``/minimised/ as a corpus-shaped case.

Results go to ``--out``/results.jsonl, one line per program: a second run with the same seed
and ``--out`` skips what is done (resumable). Each traced graph is saved in ``--out``/graphs, so
that ``--recheck`` judges the run again with the current rules without TensorFlow (the
compiler's side kept; rechecked.jsonl). Exits 0: it is a report.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import agreement  # noqa: E402 - the compiler child's protocol and helpers (and this checkout's xlalint on the path)
from xlalint.backend.op_stack import HEADINGS, created_at  # noqa: E402 - the user's line the compiler names
from _difftest_programs import FAMILIES, Program, describe, draw, render  # noqa: E402

REPO = agreement.REPO
VERDICT_KINDS = ("false blocker", "false compatible", "no verdict")


# --------------------------------------------------------------------------- compiler side (child)

def _graphs(graph):
    """``graph`` and every function graph it calls, once each."""
    seen, stack = set(), [graph]
    while stack:
        g = stack.pop()
        if id(g) in seen:
            continue
        seen.add(id(g))
        yield g
        for function in getattr(g, "_functions", {}).values():
            inner = getattr(function, "graph", None)
            if inner is not None:
                stack.append(inner)


def _op_line(concrete, node_name: str | None, path: str) -> int | None:
    """The line of ``path`` where the op named ``node_name`` was created (None when not found)."""
    if not node_name:
        return None
    wanted = {node_name, node_name.rsplit("/", 1)[-1]}
    for graph in _graphs(concrete.graph):
        for op in graph.get_operations():
            if op.name in wanted:
                lines = [frame.lineno for frame in op.traceback if _same_file(frame.filename, path)
                         ] if op.traceback else []
                if lines:
                    return lines[-1]
    return None


def _same_file(name: str, path: str) -> bool:
    """``name`` (a traceback's file, maybe ``<frozen runpy>``) is ``path``."""
    return os.path.exists(name) and os.path.samefile(name, path)


SCRIPT = 'if __name__ == "__main__":'
SCRIPT_LIMIT_S = 120


def is_script(path: Path | str) -> bool:
    """A program of a script family (run as ``__main__``), not a ``case`` function."""
    return SCRIPT in Path(path).read_text(encoding="utf-8")


def _as_asked(tf, path: str, xla: bool) -> None:
    """``tf.function`` as the tester asks: with ``xla``, a function the script makes without ``jit_compile``
    gets ``jit_compile=True`` (xlalint judges such a function as if it had it; Keras's own functions keep
    Keras's choice); without, every function loses its ``jit_compile`` (Keras's steps too): the script as
    TensorFlow runs it without XLA."""
    function = tf.function

    def asked(*args, **kwargs):
        if not xla:
            kwargs.pop("jit_compile", None)
        elif kwargs.get("jit_compile") is None and _same_file(sys._getframe(1).f_code.co_filename, path):
            kwargs["jit_compile"] = True
        return function(*args, **kwargs)

    tf.function = asked


def _run_script(path: str, xla: bool) -> tuple[dict | None, str]:
    """Run the script as ``__main__`` in a forked child (its own devices and state), with XLA or without
    (``_as_asked``): (None when it ends cleanly, else its error: the first line and the whole message; what it
    printed)."""
    import io
    import runpy
    import signal

    import tensorflow as tf

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, then say how it ended
        os.close(read)
        outcome, printed = None, io.StringIO()
        try:
            signal.alarm(SCRIPT_LIMIT_S)
            _as_asked(tf, path, xla)
            sys.argv, sys.path[0], sys.stdout = [path], str(Path(path).parent), printed
            runpy.run_path(path, run_name="__main__")
        except BaseException as error:  # noqa: BLE001 - the script's failure is the answer
            outcome = {"error": agreement._first_line(error), "message": str(error)[:20000]}
        finally:
            os.write(write, json.dumps({"outcome": outcome, "printed": printed.getvalue()[-5000:]}).encode())
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as handle:
        said = handle.read()
    _, status = os.waitpid(pid, 0)
    if not said:
        return {"error": f"the process died (status {status}) running it, or ran past {SCRIPT_LIMIT_S} s",
                "message": ""}, ""
    ended = json.loads(said)
    return ended["outcome"], ended["printed"]


def script_child(paths: list[str]) -> None:
    """``compile_child``'s protocol for scripts: each run with XLA (``_as_asked``) and once more without it. A
    script that fails both ways is invalid (TensorFlow itself refuses it); one that runs with XLA and prints
    something else without it (the shapes it prints), or fails only without it, runs to another result.
    TensorFlow and Keras are imported once, before the forks, and never run here."""
    import logging

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras  # noqa: F401 - imported before the forks, as the run server does
    import tensorflow  # noqa: F401

    logging.getLogger("tensorflow").setLevel(logging.ERROR)
    out, sys.stdout = sys.stdout, sys.stderr
    for path in paths:
        print(json.dumps({"start": path}), file=out, flush=True)
        result = {"path": path, "compiled": False, "valid": True, "error": None, "error_op": None,
                  "error_line": None, "differs": None}
        (failed, printed), (plain, plain_printed) = _run_script(path, xla=True), _run_script(path, xla=False)
        if failed is None:
            result.update(compiled=True, differs=plain is not None or printed != plain_printed)
        elif plain is not None:
            result.update(valid=False, error=failed["error"])
        else:
            result["error"] = failed["error"]
            result["error_op"] = agreement._error_op(failed["message"], {})[0]
            result["error_line"] = created_at(failed["message"], path)
        print(json.dumps(result), file=out, flush=True)


def compile_child(paths: list[str]) -> None:
    """One JSON line per case: {"start": path}, then its result (``agreement.compile_child``'s protocol)."""
    import importlib.util
    import logging

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import numpy as np
    import tensorflow as tf

    logging.getLogger("tensorflow").setLevel(logging.ERROR)
    out, sys.stdout = sys.stdout, sys.stderr  # the cases' own prints must not mix with the protocol
    for path in paths:
        print(json.dumps({"start": path}), file=out, flush=True)
        result = {"path": path, "compiled": False, "valid": True, "error": None, "error_op": None,
                  "error_line": None, "differs": None}
        stage, concrete = "import", None
        try:
            spec = importlib.util.spec_from_file_location("_difftest_" + Path(path).stem, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            fn = module.case
            args = agreement._make_args(tf, np, fn)
            with tf.device("/CPU:0"):
                stage = "plain"
                plain = [v.numpy() for v in tf.nest.flatten(tf.function(fn.python_function)(*args))
                         if hasattr(v, "numpy")]
                jitted = tf.function(fn.python_function, jit_compile=True)
                stage = "trace"
                concrete = jitted.get_concrete_function(*args)
                stage = "compile"
                got = [v.numpy() for v in tf.nest.flatten(jitted(*args)) if hasattr(v, "numpy")]
            types = agreement._op_types(concrete)
            if not any(agreement.UNCOMPARABLE.search(t) for t in types.values()):
                result["differs"] = agreement._differ(np, got, plain)
            result["compiled"] = True
        except Exception as error:  # noqa: BLE001 - the compiler's verdict is the point
            result["error"] = agreement._first_line(error)
            if stage in ("import", "plain"):  # TensorFlow itself refuses it: not a test of XLA
                result["valid"] = False
            else:
                types = agreement._op_types(concrete) if concrete is not None else {}
                result["error_op"], node = agreement._error_op(str(error), types)
                # a message that says where the op was made is read alone (an argument's names no line of the
                # file); a node name is looked up only when it says nothing, and may match another function's op
                stack = any(head in str(error) for head in HEADINGS)
                result["error_line"] = created_at(str(error), path) if stack else (
                    _op_line(concrete, node, path) if concrete is not None else None)
        print(json.dumps(result), file=out, flush=True)


# --------------------------------------------------------------------------- both sides, one batch

def _xlalint(paths: list[Path], jobs: int, env: dict, graphs: Path | None = None, timeout: int = 300) -> dict:
    """One xlalint run over ``paths`` (its JSON report); ``graphs``: where it saves each traced graph."""
    command = [sys.executable, "-m", "xlalint", *map(str, paths), "--format", "json", "--device", "cpu",
               "--no-cache", "--jobs", str(jobs), "--timeout", str(timeout),
               *(["--save-graphs", str(graphs)] if graphs else [])]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, env={**os.environ, **env})
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"entries": [], "findings": [], "errors": [{"path": "*", "message": done.stderr[-2000:]}]}


def _shown(path: Path) -> str:
    """``path`` as xlalint shows it (run from the repository)."""
    shown = os.path.relpath(path, REPO)
    return str(path) if shown.startswith("..") else shown


def _has_verdict(report: dict, path: Path) -> bool:
    if is_script(path):  # judged as a whole file, unless xlalint could not read it
        return not any(e["path"] == _shown(path) for e in report["errors"])
    return any(e["path"] == _shown(path) and e["name"] == "case" and e["verdict"] in ("compatible", "incompatible")
               for e in report["entries"])


def _replaced(report: dict, again: dict, paths: list[Path]) -> dict:
    """``report`` with what ``again`` says about ``paths`` instead of its own."""
    shown = {_shown(p) for p in paths}
    return {key: [x for x in report[key] if x["path"] not in shown] + [x for x in again[key] if x["path"] in shown]
            for key in ("entries", "findings", "errors")}


def _compiler(paths: list[Path], jobs: int) -> dict[str, dict]:
    """Each program's compiler result, from ``jobs`` children at a time (scripts and cases in children of
    their own: a script's child never runs TensorFlow itself, so that each script sets up its own devices)."""
    kinds = [[p for p in paths if is_script(p)], [p for p in paths if not is_script(p)]]
    chunks = [[str(p) for p in kind[i::jobs]] for kind in kinds for i in range(jobs)]
    with ThreadPoolExecutor(jobs) as pool:
        parts = pool.map(lambda chunk: agreement.run_compiler(chunk, Path(__file__))[0] if chunk else {}, chunks)
    return {path: result for part in parts for path, result in part.items()}


def judge(programs: list[Program], folder: Path, jobs: int, env: dict, graphs: Path | None = None) -> dict[str, dict]:
    """Each program's row: the compiler's outcome, xlalint's verdict and findings, and the category.

    A valid program left without a verdict (a file or a whole run out of time on a busy machine)
    is checked once more, alone and with a longer timeout."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for program in programs:
        path = folder / f"{program.name}.py"
        path.write_text(render(program), encoding="utf-8")
        paths.append(path.resolve())
    report = _xlalint(paths, jobs, env, graphs)
    compiled = _compiler(paths, jobs)
    retry = [p for p in paths if compiled[str(p)].get("valid", True) and not _has_verdict(report, p)]
    if retry:
        report = _replaced(report, _xlalint(retry, 1, env, graphs, timeout=900), retry)
    scripts = [p for p in paths if is_script(p)]
    ran = _xlalint_run(scripts, jobs, env) if scripts else {}
    return {program.name: classify_script(program, path, report, ran, compiled[str(path)]) if program.frame
            else classify(program, path, report, compiled[str(path)]) for program, path in zip(programs, paths)}


def _xlalint_run(scripts: list[Path], jobs: int, env: dict) -> dict:
    """``xlalint run`` over ``scripts`` (one folder), listed in that folder's ``[tool.xlalint]``: its JSON report."""
    folder = scripts[0].parent
    (folder / "pyproject.toml").write_text(f"[tool.xlalint]\nrun = {json.dumps([p.name for p in scripts])}\n",
                                           encoding="utf-8")
    command = [sys.executable, "-m", "xlalint", "run", "--format", "json", "--device", "cpu", "--jobs", str(jobs),
               "--run-timeout", str(SCRIPT_LIMIT_S)]
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, env={**os.environ, **env})
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"entries": [], "findings": [], "errors": [{"path": "*", "message": done.stderr[-2000:]}]}


def _file_side(report: dict, shown: str) -> tuple[str, list[dict], str | None]:
    """A script's verdict as a whole file, its findings, and why it has none: incompatible with an error finding
    anywhere in it; else no verdict where xlalint could not read it or judge one of its entries (a function
    without a signature, for the check command); else compatible."""
    findings = [f for f in report["findings"] if f["path"] == shown]
    if any(f["severity"] == "error" for f in findings):
        return "incompatible", findings, None
    why = [e["message"] for e in report["errors"] if e["path"] in (shown, "*")] + [
        e["error"] or e["verdict"] for e in report["entries"]
        if e["path"] == shown and e["verdict"] not in ("compatible", "incompatible")]
    return ("missing", findings, why[0][:500]) if why else ("compatible", findings, None)


def classify_script(program: Program, path: Path, check: dict, ran: dict, compiler: dict) -> dict:
    """A script's row: the compiler's outcome, ``xlalint run``'s side (the row's verdict) and the check
    command's (``check``: its verdict, findings and category)."""
    visible = program.frame is not None and program.frame.visible
    return judge_script({**_compiler_row(program, compiler), "visible": visible}, path, check, ran)


def judge_script(row: dict, path: Path, check: dict, ran: dict) -> dict:
    """``row`` (a script's program and compiler side) with both modes' sides. The check command is asked only
    about what it can see without a run (``visible``): elsewhere only a false blocker counts against it."""
    row = with_xlalint(row, *_file_side(ran, path.name))
    checked = with_xlalint(row, *_file_side(check, _shown(path)))
    category = checked["category"]
    if not row["visible"] and category and not category.startswith("false blocker"):
        category = None  # nothing to see without a run ("no entry point found" included)
    row["check"] = {"verdict": checked["verdict"], "findings": checked["findings"], "category": category,
                    "xlalint_error": checked["xlalint_error"]}
    return row


def _compiler_row(program: Program, compiler: dict) -> dict:
    """A row's program and compiler side."""
    outcome = "invalid" if not compiler.get("valid", True) else (
        "fails" if not compiler["compiled"] else "differs" if compiler.get("differs") else "compiles")
    return {"name": program.name, "family": program.family,
            "wrapper": program.frame.name if program.frame else program.wrapper,
            "steps": [s.op for s in program.steps],
            "dtypes": list(program.dtypes), "outcome": outcome,
            "compiler_error": compiler.get("error"), "compiler_op": compiler.get("error_op"),
            "compiler_line": compiler.get("error_line"),
            "compared": outcome != "compiles" or compiler.get("differs") is not None}


def classify(program: Program, path: Path, report: dict, compiler: dict) -> dict:
    shown = _shown(path)
    entry = next((e for e in report["entries"] if e["path"] == shown and e["name"] == "case"), None)
    why = [e["message"] for e in report["errors"] if e["path"] in (shown, "*")] + [entry["error"] if entry else None]
    return with_xlalint(_compiler_row(program, compiler), entry["verdict"] if entry else "missing",
                        [f for f in report["findings"] if f["path"] == shown], next((w[:500] for w in why if w), None))


def with_xlalint(row: dict, verdict: str, findings: list[dict], error: str | None = None) -> dict:
    """``row`` with xlalint's side (its verdict, error and warning findings, why it has none), the op and line
    verdicts of a failing program, and the category."""
    findings = [f for f in findings if f["severity"] in ("error", "warning")]
    errors = [f for f in findings if f["severity"] == "error"]
    shown = sorted({(f["code"], f["line"], f["op_type"] or "") for f in findings})
    related = sorted({r["line"] for f in errors for r in f.get("related", ()) if r["path"] == f["path"]}
                     - {f["line"] for f in errors})
    row = {**row, "verdict": verdict, "findings": shown, "related_lines": related, "xlalint_error": error}
    row["op"], row["line"] = _named(row, errors)
    row["category"] = _category(row, errors, findings)
    return row


def _named(row: dict, errors: list[dict]) -> tuple[bool | None, bool | None]:
    """On a program that fails under both: does an error finding name the compiler's op type, and does one
    sit at its line (its place or a related location)? None where there is nothing to compare."""
    if row["outcome"] != "fails" or row["verdict"] != "incompatible":
        return None, None
    same = agreement.SAME_OP
    op = row["compiler_op"]
    named = None if not op else same.get(op, op) in {same.get(f["op_type"], f["op_type"]) for f in errors}
    # The compiler names a string argument (_Arg) with no line of the file; rows of runs before the child read
    # the message alone hold the line of a nested function's argument of the same name: not the compiler's.
    line = row["compiler_line"] if op != "_Arg" else None
    return named, None if not line else line in {f["line"] for f in errors} | set(row["related_lines"])


def _category(row: dict, errors: list[dict], findings: list[dict]) -> str | None:
    """None when xlalint agrees with the compiler; else the kind of disagreement and what it is about."""
    outcome, verdict = row["outcome"], row["verdict"]
    if outcome == "invalid":
        return None
    if verdict not in ("incompatible", "compatible"):
        return "no verdict"
    if outcome == "compiles" and verdict == "incompatible":
        if not row.get("compared", True) and all(f["code"].startswith("XLA2") for f in errors):
            return None  # a silent difference predicted where the outputs could not be compared: no answer
        return "false blocker: " + ", ".join(sorted({f"{f['code']} {f['op_type'] or ''}".strip() for f in errors}))
    if outcome == "fails" and verdict == "compatible":
        return f"false compatible: {row['compiler_op'] or row['compiler_error'][:60]}"
    if row["line"] is False:
        return f"missed line: {row['compiler_op'] or '?'}"
    if outcome == "differs" and verdict == "compatible" and not any(f["code"].startswith("XLA2") for f in findings):
        return f"missed silent difference: {', '.join(row['steps'])}"
    return None


# --------------------------------------------------------------------------- minimising

def _smaller(program: Program) -> list[Program]:
    """Each one-step-smaller variant: a step removed, or the wrapper made plain."""
    variants = [program.without_step(i) for i in range(len(program.steps))] if len(program.steps) > 1 else []
    if program.wrapper != "plain":
        variants.append(replace(program, wrapper="plain"))
    return variants


def _kind(category: str | None) -> str | None:
    return category.split(":")[0] if category else None


def minimise(programs: dict[str, Program], rows: dict[str, dict], folder: Path, jobs: int, env: dict) -> dict:
    """Shrink each program while its disagreement stays of the same kind; the final program and row."""
    current = {name: (program, rows[name]) for name, program in programs.items()}
    open_ = set(current)
    round_ = 0
    while open_:
        round_ += 1
        trials: list[Program] = []
        owners: list[tuple[str, int]] = []
        for name in sorted(open_):
            for i, variant in enumerate(_smaller(current[name][0])):
                trials.append(replace(variant, name=f"{name}_m{round_}_{i}"))
                owners.append((name, i))
        if not trials:
            break
        judged = judge(trials, folder / "trials", jobs, env)
        progressed = set()
        for trial, (name, _) in zip(trials, owners):
            if name in progressed:
                continue
            if _kind(judged[trial.name]["category"]) == _kind(current[name][1]["category"]):
                current[name] = (trial, judged[trial.name])
                progressed.add(name)
        open_ = progressed
    return current


def write_case(program: Program, row: dict, folder: Path) -> Path:
    """The minimised program as a corpus-shaped case: the compiler's outcome and the disagreement."""
    folder.mkdir(parents=True, exist_ok=True)
    expected = {"fails": "fails", "differs": "differs"}.get(row["outcome"], "compiles")
    docstring = (f"Minimised by bench/difftest.py ({row['category']}): {describe(program)}.\n\n"
                 f"Compiler: {row['outcome']} {row['compiler_error'] or ''}\n"
                 f"xlalint: {row['verdict']} {row['findings']}\n\nExpected: {expected}\n")
    path = folder / f"{program.name.split('_m')[0]}.py"
    path.write_text(render(program, docstring), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- the run

def run(seed: int, n: int, out: Path, jobs: int = 1, seconds: float | None = None, batch: int = 40,
        ops: tuple[str, ...] | None = None, env: dict | None = None, minimise_max: int = 8,
        families: tuple[str, ...] = ("core",)) -> dict:
    """Draw, check and compare up to ``n`` programs of ``seed`` per family (taken in turns, so that a run
    cut short has as many of each); minimise one case per category."""
    env = env or {}
    out.mkdir(parents=True, exist_ok=True)
    log = out / "results.jsonl"
    rows = {r["name"]: r for r in map(json.loads, log.read_text().splitlines())} if log.exists() else {}
    programs = {p.name: p for p in (draw(seed, i, ops, family) for i in range(n) for family in families)}
    todo = [p for name, p in programs.items() if name not in rows]
    start = time.monotonic()
    for i in range(0, len(todo), batch):
        if seconds is not None and time.monotonic() - start > seconds:
            break
        judged = judge(todo[i:i + batch], out / "programs", jobs, env, out / "graphs")
        with log.open("a", encoding="utf-8") as handle:
            for row in judged.values():
                handle.write(json.dumps(row) + "\n")
        rows.update(judged)
    first: dict[str, str] = {}
    for name, row in rows.items():
        if row["category"] and name in programs:
            first.setdefault(row["category"], name)
    chosen = dict(list(first.items())[:minimise_max])
    shrunk = minimise({name: programs[name] for name in chosen.values()},
                      rows, out / "minimising", jobs, env) if chosen else {}
    cases = {category: str(write_case(*shrunk[name], out / "minimised")) for category, name in chosen.items()}
    return {"rows": [rows[name] for name in programs if name in rows], "minimised": cases}


# --------------------------------------------------------------------------- judging a run again

def recheck(out: Path, jobs: int = 1, env: dict | None = None, batch: int = 40) -> dict:
    """The valid rows of ``out``'s run judged again by the current rules, the compiler's side kept:
    from each program's saved graph without TensorFlow, or traced again where none was saved.
    Written to ``out``/rechecked.jsonl (results.jsonl stays as the run found it). A script family's programs
    are judged again by running both xlalint modes over them (a script's side needs a run)."""
    from xlalint.engine.entries import findings_for_traced_entry
    from xlalint.settings.table import Options

    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    kept = {r["name"] for r in rows if "check" in r}
    rejudged = _rejudge_scripts([r for r in rows if r["name"] in kept and r["outcome"] != "invalid"],
                                out / "programs", jobs, env or {}, batch)
    graphs = out / "graphs"

    def saved(row: dict) -> Path | None:
        return next(graphs.glob(f"*programs__{row['name']}.case.json"), None)

    untraced = [out / "programs" / f"{r['name']}.py" for r in rows
                if r["outcome"] != "invalid" and r["name"] not in kept and not saved(r)]
    for i in range(0, len(untraced), batch):
        _xlalint(untraced[i:i + batch], jobs, env or {}, graphs)
    options = Options(device="cpu", mode="jit")
    again = []
    for row in rows:
        if row["name"] in kept:  # a script: judged by both modes above (an invalid one as it was)
            again.append(rejudged.get(row["name"], row))
            continue
        graph = saved(row) if row["outcome"] != "invalid" else None
        if graph is None:
            again.append(row if row["outcome"] == "invalid" else with_xlalint(row, "missing", [], "not traced again"))
            continue
        raw = json.loads(graph.read_text(encoding="utf-8"))
        if "compared" not in row:  # a run from before the field: the compiler child's own test, on the saved graph
            row = {**row, "compared": row["outcome"] != "compiles" or not any(
                agreement.UNCOMPARABLE.search(node["type"]) for node in raw["graph"]["nodes"])}
        found = findings_for_traced_entry(raw, raw["path"], raw["tensorflow"], options)
        findings = [{"code": f.code, "path": f.path, "line": f.line, "op_type": f.op_type, "severity": f.severity,
                     "related": [r.to_json() for r in f.related]} for f in found]
        again.append(with_xlalint(row, "incompatible" if any(f.severity == "error" for f in found) else "compatible",
                                  findings))
    (out / "rechecked.jsonl").write_text("".join(json.dumps(r) + "\n" for r in again), encoding="utf-8")
    return {"rows": again, "minimised": {}}


def _rejudge_scripts(rows: list[dict], folder: Path, jobs: int, env: dict, batch: int) -> dict[str, dict]:
    """Script rows judged again by both modes of the current xlalint, ``batch`` programs per run."""
    judged = {}
    for i in range(0, len(rows), batch):
        part = rows[i:i + batch]
        paths = [(folder / f"{row['name']}.py").resolve() for row in part]
        check, ran = _xlalint(paths, jobs, env), _xlalint_run(paths, jobs, env)
        judged.update({row["name"]: judge_script(row, path, check, ran) for row, path in zip(part, paths)})
    return judged


def _share(flags: list) -> str:
    """``agreed/asked (pct)`` over the flags that are not None."""
    asked = [f for f in flags if f is not None]
    return f"{sum(asked)}/{len(asked)} ({100 * sum(asked) / len(asked):.1f}%)" if asked else "-"


def _figures(rows: list[dict]) -> list[str]:
    """valid, fail, verdict disagreements, false blockers, op named, line named: one family's columns."""
    kinds = Counter((r["category"] or "").split(":")[0] for r in rows)
    verdict = sum(kinds[k] for k in VERDICT_KINDS)
    return [str(len(rows)), str(sum(r["outcome"] == "fails" for r in rows)),
            f"{len(rows) - verdict}/{len(rows)}", str(kinds["false blocker"]),
            _share([r.get("op") for r in rows]), _share([r.get("line") for r in rows])]


def _check_summary(rows: list[dict]) -> list[str]:
    """The script families under the check command (the table above is ``xlalint run``'s): per family, the
    programs it can see without a run, its verdict agreement on them, and its false blockers on all."""
    if not rows:
        return []
    lines = ["", "the check command on the script families (visible: made where it sees them without a run):"]
    for family in sorted({r["family"] for r in rows}):
        mine = [r for r in rows if r["family"] == family]
        visible = [r for r in mine if r["visible"]]
        kinds = Counter((r["check"]["category"] or "").split(":")[0] for r in mine)
        agree = sum(1 for r in visible if (r["check"]["category"] or "").split(":")[0] not in VERDICT_KINDS)
        lines.append(f"  {family}: {len(visible)} visible of {len(mine)}, verdict {agree}/{len(visible)}, "
                     f"false blockers {kinds['false blocker']}, no verdict {kinds['no verdict']}")
    lines += [f"  {count:5d}  {category}" for category, count in
              Counter(r["check"]["category"] for r in rows if r["check"]["category"]).most_common()]
    return lines


def summary(result: dict) -> str:
    rows = [r for r in result["rows"] if r["outcome"] != "invalid"]
    invalid = len(result["rows"]) - len(rows)
    outcomes = Counter(r["outcome"] for r in rows)
    categories = Counter(r["category"] for r in rows if r["category"])
    verdict = sum(c for k, c in categories.items() if k.split(":")[0] in VERDICT_KINDS)
    families = sorted({r.get("family", "core") for r in rows})
    table = [[family, *_figures([r for r in rows if r.get("family", "core") == family])] for family in families]
    header = ["family", "valid", "fail", "verdict", "false blockers", "op named", "line named"]
    widths = [max(len(str(x)) for x in column) for column in zip(header, *table, ["all", *_figures(rows)])]
    lines = [f"programs: {len(result['rows'])} ({invalid} invalid: TensorFlow refuses them without XLA)",
             f"compiler: {outcomes['compiles']} compile and agree, {outcomes['differs']} compile to another "
             f"result, {outcomes['fails']} fail",
             f"verdict disagreements: {verdict}/{len(rows)} ({100 * verdict / max(len(rows), 1):.2f}%), "
             f"false blockers: {sum(c for k, c in categories.items() if k.startswith('false blocker'))}",
             "", *("  ".join(str(x).ljust(w) for x, w in zip(line, widths))
                   for line in [header, *table, ["all", *_figures(rows)]]),
             "", "disagreements by category:"]
    lines += [f"  {count:5d}  {category}" for category, count in categories.most_common()] or ["  none"]
    lines += _check_summary([r for r in rows if "check" in r])
    lines += ["", "minimised cases:"]
    lines += [f"  {category}: {path}" for category, path in result["minimised"].items()] or ["  none"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n", type=int, default=200, help="programs to draw from the seed")
    parser.add_argument("--seconds", type=float, help="stop starting new batches after this long")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--batch", type=int, default=40, help="programs per xlalint run")
    parser.add_argument("--ops", help="comma-separated op names of bench/_difftest_programs.py to draw from")
    parser.add_argument("--families", default="core",
                        help=f"comma-separated program families, --n programs each ({', '.join(FAMILIES)}, or all)")
    parser.add_argument("--out", help="results, programs and minimised cases (default: .difftest/seed-N)")
    parser.add_argument("--json", help="also write every row here")
    parser.add_argument("--recheck", action="store_true",
                        help="judge the run in --out again with the current rules (the compiler's side kept)")
    parser.add_argument("--compile-child", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.compile_child is not None:
        scripts = bool(args.compile_child) and is_script(args.compile_child[0])
        (script_child if scripts else compile_child)(args.compile_child)
        return 0
    out = Path(args.out or REPO / ".difftest" / f"seed-{args.seed}").resolve()
    if args.recheck:
        result = recheck(out, args.jobs, batch=args.batch)
    else:
        families = tuple(FAMILIES) if args.families == "all" else tuple(args.families.split(","))
        result = run(args.seed, args.n, out, args.jobs, args.seconds, args.batch,
                     tuple(args.ops.split(",")) if args.ops else None, families=families)
    print(summary(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
