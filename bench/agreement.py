"""Agreement benchmark: xlalint's static verdicts against the real XLA compiler (CPU).

    python bench/agreement.py                   # the whole corpus (fixtures/corpus)
    python bench/agreement.py --json out.json   # also write every per-case result
    python bench/agreement.py -k linalg_        # only cases whose file name contains one of the -k strings
    python bench/agreement.py --autocluster     # also TensorFlow's auto-clustering against --mode autocluster

1. xlalint runs ONCE over the corpus directory:
   ``python -m xlalint fixtures/corpus --format json --device cpu`` (plus ``--no-cache`` when
   this xlalint keeps a results cache, so the wall time measured is a cold run).
2. The compiler: one child process (this file with ``--compile-child``) imports TensorFlow
   once and, for every case, builds ``tf.function(case.python_function, jit_compile=True)``,
   asks for ``experimental_get_compiler_ir(*args)(stage="hlo")`` AND calls it with concrete
   seeded tensors on CPU (some failures only appear at execution). A case that kills the
   child (segfault, abort) or hangs counts as a failure; a fresh child goes on with the next
   case. For a case with an integer argument or a None dim that compiles, a second HLO is
   built from other values (scalars 3, integers in [0, 4), None dims 5): a different HLO
   means one compilation per value, what XLA102/XLA104 warn about. Total wall time measured.
3. Report: a table, the figures (verdict agreement, false "incompatible", false
   "compatible", op type named, line named, recompile risks flagged and seen, wall times) and
   every disagreement with its reason. Info findings (XLA403...) are advice and left out.

Case files (see fixtures/corpus): ``<category>_<what>.py``, one module-level
``@tf.function(input_signature=[...])`` named ``case``, a docstring with ``Expected: compiles``,
``Expected: fails`` or ``Expected: differs`` (XLA runs it to another result than TensorFlow's:
the compiler child also runs it without XLA and compares), ``# expect: XLA0xx`` marks on the lines xlalint should report, and
``# blocker`` on a failing line that no rule covers (only the line is expected there).

Arguments are made from the signature like the project's tests make them: floats N(0, 1),
integer scalars 2 (they work as sizes), other integers in [0, 3), fair booleans, strings
"text"; ``None`` dims are 4 and an unknown rank is the shape [4].

Always exits 0: it is a report, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # this checkout's xlalint, as the `python -m xlalint` children run it
from xlalint.backend.op_stack import created_at  # noqa: E402 - the case's line the compiler names
CORPUS = REPO / "fixtures" / "corpus"
CATEGORIES = ("hostcall", "print", "string", "data", "dtype", "shape_const", "recompile", "dynamic_shape",
              "unknown_dims", "control_flow", "gradient", "tensorarray", "keras_layer", "keras_train_step",
              "linalg", "image", "random", "misc", "silent")
EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)")
BLOCKER = re.compile(r"#\s*blocker\b")  # a failing line no rule covers: only the line is expected
EXPECTED = re.compile(r"^Expected:\s*(compiles|fails|differs)\s*$", re.MULTILINE)
RECOMPILE_CODES = ("XLA102", "XLA104")
CASE_TIMEOUT_S = 180
# The same op under two names: XLA's argument node is the graph's Placeholder.
SAME_OP = {"_Arg": "Placeholder"}


# --------------------------------------------------------------------------- case files

def category_of(path: Path) -> str:
    stem = path.stem
    return max((c for c in CATEGORIES if stem.startswith(c + "_")), key=len, default="?")


def read_case(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    match = EXPECTED.search(text)
    marks: set[tuple[str, int]] = set()
    blockers: set[int] = set()
    for number, line in enumerate(text.splitlines(), 1):
        found = EXPECT.search(line)
        if found:
            marks |= {(code.strip(), number) for code in found.group(1).split(",") if code.strip()}
        if BLOCKER.search(line):
            blockers.add(number)
    return {"path": str(path.relative_to(REPO)), "name": path.stem, "category": category_of(path),
            "expected": match.group(1) if match else None, "marks": sorted(marks), "blockers": sorted(blockers)}


def case_files(corpus: Path, only: list[str]) -> list[Path]:
    files = sorted(p for p in corpus.glob("*.py") if not p.name.startswith("_"))
    return [p for p in files if not only or any(k in p.name for k in only)]


# --------------------------------------------------------------------------- xlalint side

def _no_cache() -> list[str]:
    """``--no-cache`` when this xlalint has a result cache: the time measured is a cold run."""
    done = subprocess.run([sys.executable, "-m", "xlalint", "--help"], cwd=REPO, capture_output=True, text=True)
    return ["--no-cache"] if "--no-cache" in done.stdout else []


def run_xlalint(targets: list[Path]) -> tuple[dict, float, str]:
    """One xlalint invocation over ``targets`` (the corpus folder, or some of its files), timed."""
    names = [str(p.relative_to(REPO)) for p in targets]
    command = [sys.executable, "-m", "xlalint", *names, "--format", "json", "--device", "cpu", *_no_cache()]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=3600)
    seconds = time.perf_counter() - start
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        report = {"entries": [], "findings": [], "errors": [{"path": names[0], "message": done.stderr[-2000:]}]}
    shown = names if len(names) == 1 else [f"<{len(names)} files>"]
    return report, seconds, " ".join(["python", "-m", "xlalint", *shown, *command[3 + len(names):]])


# --------------------------------------------------------------------------- compiler side (child)

_UNSUPPORTED_OP = re.compile(r"on XLA_\w+?_JIT: (\w+) \(")
_CONSTANT_INPUT = re.compile(r"with op (\w+) must be a compile-time constant")
_EVALUATING = re.compile(r"while evaluating input \d+ of (\w+) ")
_NODE = re.compile(r"\{\{node ([^}]+)\}\}|node `([^`]+)`")
_NOISE = ("Graph execution error", "Detected at node", "The op is created at", "File ", "Stack trace for op")


def _make_args(tf, np, fn, variant: int = 0) -> list:
    """Variant 1 changes every integer value (scalars 3, tensors in [0, 4)) and every None dim (5),
    so that a program specialized on values or shapes shows up as a different HLO."""
    rng = np.random.default_rng(variant)
    fill, high, scalar = (4, 3, 2) if variant == 0 else (5, 4, 3)
    args = []
    for spec in tf.nest.flatten(fn.input_signature):
        if spec.shape.rank is None:
            shape = [fill]
        else:
            shape = [fill if d is None else d for d in spec.shape.as_list()]
        dtype = spec.dtype
        if dtype == tf.string:
            args.append(tf.fill(shape, "text"))
        elif dtype == tf.bool:
            args.append(tf.constant(rng.random(shape) < 0.5))
        elif dtype.is_integer:
            values = np.array(scalar) if not shape else rng.integers(0, high, shape)
            args.append(tf.constant(values, dtype=dtype))
        elif dtype.is_complex:
            args.append(tf.constant(rng.standard_normal(shape) + 1j * rng.standard_normal(shape), dtype=dtype))
        else:
            args.append(tf.constant(rng.standard_normal(shape), dtype=dtype))
    return args


def _hlo_body(text: str) -> str:
    """HLO without what differs between any two traces: the module line and numbered names."""
    lines = (line for line in text.splitlines() if not line.startswith("HloModule"))
    return re.sub(r"_\d+", "_N", "\n".join(lines))


def _varies(tf, fn) -> bool:
    """True when some argument is an integer or has a None dim: a second value set can tell."""
    return any(s.dtype.is_integer or s.shape.rank is None or None in s.shape.as_list()
               for s in tf.nest.flatten(fn.input_signature))


def _op_types(concrete) -> dict[str, str]:
    """Node name -> op type over the traced graph and every function in its library."""
    types: dict[str, str] = {}
    try:
        graph_def = concrete.graph.as_graph_def()
    except Exception:  # noqa: BLE001 - best effort
        return types
    for node in graph_def.node:
        types.setdefault(node.name, node.op)
    for function in graph_def.library.function:
        for node in function.node_def:
            types.setdefault(node.name, node.op)
    return types


# Outputs that differ between any two runs: random draws, state the first run changed, and results
# defined only up to sign or order (eigenvectors, singular vectors).
UNCOMPARABLE = re.compile(r"Random|Multinomial|TruncatedNormal|Shuffle|StatefulUniform|StatefulStandardNormal|"
                          r"NonDeterministicInts|CandidateSampler|Assign|ResourceApply|ScatterUpdate|Eig|Svd")


def _close(np, got, want) -> bool:
    """Equal within float32 tolerances; half-precision floats within theirs (XLA may accumulate wider)."""
    if want.dtype.name in ("float16", "bfloat16"):
        return np.allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-2, atol=1e-2, equal_nan=True)
    if np.issubdtype(want.dtype, np.number):
        return np.allclose(got, want, rtol=1e-4, atol=1e-5, equal_nan=True)
    return np.array_equal(got, want)


def _differ(np, got: list, want: list) -> bool:
    """XLA's outputs are not TensorFlow's: another shape, or values outside the tolerances of ``_close``."""
    return len(got) != len(want) or any(g.shape != w.shape or not _close(np, g, w) for g, w in zip(got, want))


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).strip().splitlines()]
    line = next((l for l in lines if l and not l.startswith(_NOISE)), "")
    return line or type(error).__name__


def _error_op(message: str, types: dict[str, str]) -> tuple[str | None, str | None]:
    """(op type, node name) the compiler's message names."""
    node = _NODE.search(message)
    node_name = (node.group(1) or node.group(2)) if node else None
    for pattern in (_UNSUPPORTED_OP, _CONSTANT_INPUT, _EVALUATING):
        match = pattern.search(message)
        if match:
            return match.group(1), node_name
    if node_name:
        op = types.get(node_name) or types.get(node_name.rsplit("/", 1)[-1])
        return op, node_name
    return None, None


def compile_child(paths: list[str]) -> None:
    """Print one JSON line per case: {"start": path}, then its result."""
    import importlib.util
    import logging

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import numpy as np
    import tensorflow as tf

    logging.getLogger("tensorflow").setLevel(logging.ERROR)
    tf.get_logger().setLevel(logging.ERROR)
    out = sys.stdout
    sys.stdout = sys.stderr  # the cases' own prints must not mix with the protocol
    for path in paths:
        print(json.dumps({"start": path}), file=out, flush=True)
        result = {"path": path, "compiled": False, "stage": None, "error": None, "error_op": None,
                  "error_node": None, "seconds": None, "specializes": None, "differs": None}
        start = time.perf_counter()
        types: dict[str, str] = {}
        stage = "import"
        try:
            name = "_corpus_" + Path(path).stem
            spec = importlib.util.spec_from_file_location(name, REPO / path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            fn = module.case
            stage = "args"
            args = _make_args(tf, np, fn)
            with tf.device("/CPU:0"):
                jitted = tf.function(fn.python_function, jit_compile=True)
                stage = "trace"
                types = _op_types(jitted.get_concrete_function(*args))
                stage = "hlo"
                hlo = jitted.experimental_get_compiler_ir(*args)(stage="hlo")
                stage = "run"
                outputs = [v.numpy() for v in tf.nest.flatten(jitted(*args), expand_composites=True)
                           if hasattr(v, "numpy")]
                if not any(UNCOMPARABLE.search(t) for t in types.values()):
                    try:
                        plain = [v.numpy() for v in tf.nest.flatten(tf.function(fn.python_function)(*args),
                                                                    expand_composites=True) if hasattr(v, "numpy")]
                        result["differs"] = _differ(np, outputs, plain)
                    except tf.errors.InvalidArgumentError as error:  # a check TensorFlow runs and XLA drops
                        result["differs"], result["plain_error"] = True, _first_line(error)
            result["compiled"] = True
        except BaseException as error:  # noqa: BLE001 - the compiler's verdict is the point
            if isinstance(error, KeyboardInterrupt):
                raise
            message = str(error)
            result["error"] = _first_line(error)
            result["error_op"], result["error_node"] = _error_op(message, types)
            result["error_line"] = created_at(message, path)
            result["stage"] = stage
        result["seconds"] = round(time.perf_counter() - start, 3)
        if result["compiled"] and _varies(tf, fn):  # recompile evidence: other values, another program?
            try:
                with tf.device("/CPU:0"):
                    other = jitted.experimental_get_compiler_ir(*_make_args(tf, np, fn, 1))(stage="hlo")
                result["specializes"] = _hlo_body(hlo) != _hlo_body(other)
            except Exception as error:  # noqa: BLE001 - no evidence either way
                result["specialize_error"] = _first_line(error)
        print(json.dumps(result), file=out, flush=True)


# --------------------------------------------------------------------------- compiler side (parent)

def _reader(stream, lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def run_compiler(paths: list[str], script: Path = Path(__file__)) -> tuple[dict[str, dict], float]:
    """Each case's result from ``script --compile-child`` children (a fresh one after a crash or hang)."""
    results: dict[str, dict] = {}
    remaining = list(paths)
    start = time.perf_counter()
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": "-1"}
    while remaining:
        child = subprocess.Popen([sys.executable, str(script.resolve()), "--compile-child", *remaining],
                                 cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=_reader, args=(child.stdout, lines), daemon=True).start()
        current, started = None, time.perf_counter()
        while True:
            try:
                line = lines.get(timeout=CASE_TIMEOUT_S if current else 600)
            except queue.Empty:
                child.kill()
                line = None
                if current:
                    results[current] = {"path": current, "compiled": False, "stage": "timeout", "error_op": None,
                                        "error_node": None, "seconds": round(time.perf_counter() - started, 3),
                                        "error": f"no answer within {CASE_TIMEOUT_S} s (hang)"}
                    remaining.remove(current)
                    current = None
            if line is None:
                break
            record = json.loads(line)
            if "start" in record:
                current, started = record["start"], time.perf_counter()
                continue
            results[record["path"]] = record
            remaining.remove(record["path"])
            current = None
        code = child.wait()
        if current:  # the child died on this case
            results[current] = {"path": current, "compiled": False, "stage": "crash", "error_op": None,
                                "error_node": None, "seconds": round(time.perf_counter() - started, 3),
                                "error": f"the process died (exit code {code}) compiling or running it"}
            remaining.remove(current)
        elif remaining and code != 0:
            for path in remaining:  # died before starting anything: give up on the rest
                results[path] = {"path": path, "compiled": False, "stage": "crash", "error_op": None,
                                 "error_node": None, "seconds": None, "error": f"compiler child exited {code}"}
            remaining = []
    return results, time.perf_counter() - start


# --------------------------------------------------------------------------- comparison

def compare(case: dict, report: dict, compiler: dict) -> dict:
    path = case["path"]
    entries = [e for e in report["entries"] if e["path"] == path]
    entry = next((e for e in entries if e["name"] == "case"), None)
    # info findings (XLA403 "could use jit_compile=True", ...) are advice, not predictions: left out
    findings = [f for f in report["findings"] if f["path"] == path and f["entry"] == "case"
                and f["severity"] in ("error", "warning")]
    file_errors = [e["message"] for e in report["errors"] if e["path"] == path]
    verdict = entry["verdict"] if entry else "missing"
    failed = not compiler["compiled"]
    outcome = "fails" if failed else "differs" if compiler.get("differs") else "compiles"
    found = {(f["code"], f["line"]) for f in findings}
    marks = {tuple(m) for m in case["marks"]}
    errors = [f for f in findings if f["severity"] == "error"]
    row = {
        **case, "verdict": verdict, "entry_error": (entry or {}).get("error") or "; ".join(file_errors) or None,
        "extra_entries": [e["name"] for e in entries if e["name"] != "case"],
        "compiled": compiler["compiled"], "compiler_error": compiler.get("error"),
        "compiler_stage": compiler.get("stage"), "compiler_op": compiler.get("error_op"),
        "compiler_node": compiler.get("error_node"), "compile_s": compiler.get("seconds"),
        "specializes": compiler.get("specializes"), "differs": bool(compiler.get("differs")),
        "findings": sorted(found), "finding_ops": sorted({f["op_type"] for f in errors if f["op_type"]}),
        "outcome": outcome, "expected_matches_compiler": case["expected"] == outcome,
        "agree": _agree(outcome, verdict, findings),
        "marks_found": sorted(marks & found), "marks_missed": sorted(marks - found),
        "unmarked_findings": sorted(found - marks),
    }
    if failed:
        op = compiler.get("error_op")
        named_ops = {SAME_OP.get(o, o) for o in row["finding_ops"]}
        row["op_named"] = None if op is None else SAME_OP.get(op, op) in named_ops
        marked_lines = {line for _, line in marks} | set(case["blockers"])
        row["line_named"] = bool(marked_lines) and any(f["line"] in marked_lines for f in errors or findings)
        row["compiler_line"] = line = compiler.get("error_line")
        row["compiler_line_carried"] = None if line is None else any(
            line in [f["line"], *(r["line"] for r in f.get("related", ()) if r["path"] == path)] for f in errors)
    risks = {m for m in marks if m[0] in RECOMPILE_CODES}
    row["recompile_marked"] = bool(risks)
    row["recompile_flagged"] = bool(risks) and risks <= found
    row["recompile_reported"] = any(code in RECOMPILE_CODES for code, _ in found)
    return row


def _agree(outcome: str, verdict: str, findings: list[dict]) -> bool:
    """A failure needs an error; a silently different result needs an error or an XLA2xx warning
    (XLA202: "may differ"); a case that gives TensorFlow's result needs no error."""
    if outcome == "differs" and any(f["code"].startswith("XLA2") for f in findings):
        return True
    return verdict in ("incompatible", "compatible") and (verdict == "incompatible") == (outcome != "compiles")


def disagreement_reason(row: dict) -> str:
    if row["verdict"] not in ("incompatible", "compatible"):
        return f"xlalint gave no verdict ({row['verdict']}): {row['entry_error']}"
    codes = ", ".join(f"{c}@{l}" for c, l in row["findings"]) or "no findings"
    if row["differs"]:
        return f"false compatible: xlalint reported {codes}, but XLA returned another result than TensorFlow"
    if row["compiled"]:
        return f"false incompatible: xlalint reported {codes}, but XLA compiled and ran it to TensorFlow's result"
    return (f"false compatible: xlalint reported {codes}; XLA failed at {row['compiler_stage']}"
            f" ({row['compiler_op'] or '?'}): {row['compiler_error']}")


# --------------------------------------------------------------------------- report

def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "0/0"


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def _mark(value) -> str:
    return "-" if value is None else ("yes" if value else "NO")


def render(rows: list[dict], xlalint_s: float, compiler_s: float, command: str, report: dict) -> str:
    out = [f"xlalint: {command}", f"tensorflow {report.get('tensorflow')}, xlalint {report.get('xlalint')}, "
           f"device {report.get('device')}", ""]
    table = []
    for r in rows:
        compiler = ("DIFFERS" if r["differs"] else "ok") if r["compiled"] else f"FAIL {r['compiler_op'] or '?'}" + (
            f" ({r['compiler_stage']})" if r["compiler_stage"] not in ("hlo", None) else "")
        table.append([r["name"], compiler, r["verdict"],
                      " ".join(f"{c}@{l}" for c, l in r["findings"]) or "-",
                      "yes" if r["agree"] else "NO",
                      _mark(r.get("op_named")), _mark(r.get("line_named")),
                      _mark(r["recompile_flagged"] if r["recompile_marked"] else None),
                      _mark(r["specializes"])])
    out.append(_table(table, ["case", "compiler", "xlalint", "findings (code@line)", "agree", "op named",
                              "line named", "recompile flagged", "HLO varies"]))
    n = len(rows)
    failing = [r for r in rows if not r["compiled"]]
    differing = [r for r in rows if r["differs"]]
    with_op = [r for r in failing if r.get("op_named") is not None]
    with_line = [r for r in failing if r.get("compiler_line_carried") is not None]
    risky = [r for r in rows if r["recompile_marked"]]
    varying = [r for r in rows if r["specializes"]]
    measured_reported = [r for r in rows if r["recompile_reported"] and r["specializes"] is not None]
    quiet = [r for r in measured_reported if not r["specializes"]]
    counts = Counter(r["category"] for r in rows)
    out += ["", "per category: " + ", ".join(f"{c} {counts[c]}" for c in CATEGORIES if counts[c]), ""]
    figures = [
        ("cases", f"{n} ({len(failing)} fail under XLA, {len(differing)} compile and run to another result, "
                  f"{n - len(failing) - len(differing)} compile and run to TensorFlow's result)"),
        ("verdict agreement", _pct(sum(r["agree"] for r in rows), n)),
        ("false \"incompatible\"", str(sum(r["compiled"] and not r["differs"] and r["verdict"] == "incompatible"
                                           for r in rows))),
        ("false \"compatible\"", str(sum(not r["agree"] and r["verdict"] == "compatible" for r in rows))),
        ("no verdict (not traced)", str(sum(r["verdict"] not in ("incompatible", "compatible") for r in rows))),
        ("failing: op type named", _pct(sum(bool(r["op_named"]) for r in with_op), len(with_op))
         + f" (of failures whose message names an op; {len(failing) - len(with_op)} name none)"),
        ("failing: line named", _pct(sum(bool(r["line_named"]) for r in failing), len(failing))),
        ("failing: compiler's line carried", _pct(sum(bool(r["compiler_line_carried"]) for r in with_line),
                                                  len(with_line))
         + f" (an error finding's place or related place; of failures whose message names a line; "
           f"{len(failing) - len(with_line)} name none)"),
        ("recompile risks flagged", _pct(sum(r["recompile_flagged"] for r in risky), len(risky))
         + " (XLA102/XLA104 at every marked line)"),
        ("recompiles seen by the compiler", _pct(sum(bool(r["recompile_reported"]) for r in varying),
                                                 len(varying))
         + " reported as XLA102/XLA104 (HLO differs for a second set of integer values / None dims)"),
        ("XLA102/XLA104 with no recompile seen", f"{len(quiet)} of {len(measured_reported)} cases where it was measured"),
        ("marks matched exactly", _pct(sum(len(r["marks_found"]) for r in rows), sum(len(r["marks"]) for r in rows))),
        ("findings at unmarked lines", str(sum(len(r["unmarked_findings"]) for r in rows))),
        ("xlalint wall time", f"{xlalint_s:.1f} s (one invocation, {n} files)"),
        ("compiler wall time", f"{compiler_s:.1f} s (one child process; sum of per-case compile+run "
         f"{sum(r['compile_s'] or 0 for r in rows):.1f} s)"),
    ]
    out.append(_table([[k, v] for k, v in figures], ["figure", "value"]))
    stale = [r for r in rows if not r["expected_matches_compiler"]]
    if stale:
        out += ["", "CORPUS OUT OF DATE: the docstring's Expected line differs from the compiler:"]
        out += [f"  {r['name']}: Expected: {r['expected']}, compiler: {r['outcome']}" for r in stale]
    extra = [r for r in rows if r["extra_entries"]]
    if extra:
        out += ["", "files with entries besides `case`: " + ", ".join(f"{r['name']} {r['extra_entries']}" for r in extra)]
    out += ["", "disagreements (verdict):"]
    bad = [r for r in rows if not r["agree"]]
    out += [f"  {r['name']}: {disagreement_reason(r)}" for r in bad] or ["  none"]
    out += ["", "failing cases where the op type is not named:"]
    out += [f"  {r['name']}: compiler names {r['compiler_op']}, xlalint's error findings name "
            f"{r['finding_ops'] or 'nothing'}" for r in with_op if not r["op_named"]] or ["  none"]
    out += ["", "failing cases where the offending line is not named:"]
    out += [f"  {r['name']}: marked {r['marks'] + [('blocker', b) for b in r['blockers']]}, "
            f"xlalint {r['findings'] or 'nothing'}" for r in failing if not r["line_named"]] or ["  none"]
    out += ["", "failing cases whose error findings do not carry the compiler's line:"]
    out += [f"  {r['name']}: compiler line {r['compiler_line']}, xlalint {r['findings'] or 'nothing'}"
            for r in with_line if not r["compiler_line_carried"]] or ["  none"]
    out += ["", "recompile risks not flagged:"]
    out += [f"  {r['name']}: marked {[m for m in r['marks'] if m[0] in RECOMPILE_CODES]}, xlalint "
            f"{r['findings'] or 'nothing'}" for r in risky if not r["recompile_flagged"]] or ["  none"]
    out += ["", "recompiles the compiler shows that xlalint does not report:"]
    out += [f"  {r['name']}: xlalint {r['findings'] or 'nothing'}" for r in varying
            if not r["recompile_reported"]] or ["  none"]
    out += ["", "XLA102/XLA104 reported, but the HLO is the same for both value sets:"]
    out += [f"  {r['name']}: xlalint {r['findings']}" for r in quiet] or ["  none"]
    out += ["", "other mark mismatches (missed marks / findings at unmarked lines):"]
    other = [r for r in rows if r["marks_missed"] or r["unmarked_findings"]]
    out += [f"  {r['name']}: missed {r['marks_missed'] or '-'}; unmarked {r['unmarked_findings'] or '-'}"
            for r in other] or ["  none"]
    out += ["", "compiler messages of failing cases:"]
    out += [f"  {r['name']} [{r['compiler_stage']}]: {r['compiler_error'][:300]}" for r in failing]
    return "\n".join(out)


def autocluster_agreement(files: list[str]) -> str:
    """The test suite's comparison (bench/_autocluster_truth.py) run over these case files."""
    import tempfile

    from _autocluster_truth import format_table, measure

    with tempfile.TemporaryDirectory() as workdir:
        rows = measure(files, Path(workdir))
    exact = sum((r["predicted"], r["jaccard"], r["same_partition"]) == (r["actual"], 1.0, True) for r in rows.values())
    return "\n".join(["auto-clustering: --mode autocluster against TensorFlow's mark_for_compilation dumps (CPU)",
                      format_table(rows),
                      f"exact agreement (cluster count, Jaccard 1.0, same grouping): {_pct(exact, len(rows))}"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=str(CORPUS))
    parser.add_argument("-k", action="append", default=[], help="only case files whose name contains this")
    parser.add_argument("--json", help="write the per-case rows here")
    parser.add_argument("--autocluster", action="store_true",
                        help="also compare --mode autocluster's clusters with TensorFlow's own (CPU dumps)")
    parser.add_argument("--compile-child", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.compile_child is not None:
        compile_child(args.compile_child)
        return 0
    corpus = Path(args.corpus).resolve()
    files = case_files(corpus, args.k)
    cases = [read_case(p) for p in files]
    if args.k:  # a subset: lint only those files, still in one invocation
        report, xlalint_s, command = run_xlalint(files)
    else:
        report, xlalint_s, command = run_xlalint([corpus])
    compiler, compiler_s = run_compiler([c["path"] for c in cases])
    rows = [compare(c, report, compiler[c["path"]]) for c in cases]
    print(render(rows, xlalint_s, compiler_s, command, report))
    if args.autocluster:
        print("\n" + autocluster_agreement([str(p.relative_to(REPO)) for p in files]))
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "xlalint_s": xlalint_s, "compiler_s": compiler_s,
                                               "command": command}, indent=1))
    return 0


if __name__ == "__main__":
    try:
        main()
    except Exception as error:  # noqa: BLE001 - a report: never fail the caller
        print(f"agreement benchmark could not finish: {type(error).__name__}: {error}", file=sys.stderr)
    sys.exit(0)
