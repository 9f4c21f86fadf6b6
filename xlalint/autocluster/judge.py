"""An entry the program runs under auto-clustering: what it really gets, and its findings in that light.

Under auto-clustering an op XLA cannot compile is not an error: TensorFlow leaves it out of the
clusters and runs it itself. So, for an entry in that mode:

- a finding on an op inside ``jit_scope(compile_ops=False)`` is dropped: the user chose to keep it
  out of XLA, and it is not counted as a loss;
- an error on an op that ends up in no cluster becomes ``info`` ("runs in TensorFlow"), or a
  ``warning`` where it sits in a loop body whose other ops are clustered (every iteration leaves
  XLA and comes back);
- an error on an op inside a kept cluster stays an error: that cluster would fail to compile.

The entry's record (``Entry.autocluster``) holds the clusters, each op left out with its reason at
the user's line, the share of ops under XLA, and the ``jit_scope``s that hold only compilable ops.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace

from xlalint.autocluster import predict_clusters
from xlalint.autocluster.program import AUTO_CLUSTERING, Mode, entry_mode
from xlalint.checks import RULES
from xlalint.inputs.files import display_path
from xlalint.core.opgraph import OpGraph
from xlalint.core.results import Finding
from xlalint.source.sourcemap import Location, locate


def judge_entry(mode: Mode, graph: OpGraph, findings: list[Finding], support, device: str,
                fallback: Location) -> tuple[list[Finding], str, dict | None]:
    """(findings, verdict, ``autocluster`` record) of an entry in the XLA mode its program runs it in;
    ``fallback`` is the place of an op with no line of its own (the entry's)."""
    if mode.name != AUTO_CLUSTERING:
        return findings, "incompatible" if any(f.severity == "error" for f in findings) else "compatible", None
    predicted = prediction(graph, support, device, fallback)
    findings, verdict = judged(graph, findings, predicted)
    return findings, verdict, predicted.record


LOOP_HINT = ("Every iteration leaves XLA for this op and comes back (a host round trip and a kernel launch): "
             "move it out of the loop or write it with ops XLA compiles; wrapping it in "
             "jit_scope(compile_ops=False) keeps the split but states it.")


@dataclass(frozen=True)
class Prediction:
    """The entry's ``autocluster`` record (plain JSON), and the op graph's nodes it puts in clusters
    and leaves out (node id -> its record in ``splitters``)."""

    record: dict
    clustered: frozenset[str]
    left_out: dict[str, dict]


def prediction(graph: OpGraph, support, device: str, fallback: Location) -> Prediction:
    """Clusters, ops left out at the user's lines, share under XLA (``percent``; ops left out by a
    jit_scope are not counted), and the jit_scopes that are not needed."""
    predicted = predict_clusters(graph, support, device)
    splitters, left_out = [], {}
    for splitter in predicted["splitters"]:
        node_id = splitter.pop("node")
        where = locate(graph, graph.node(node_id), fallback) if node_id in graph else fallback
        splitters.append({**splitter, "path": display_path(where.path), "line": where.line})
        left_out[node_id] = splitters[-1]
    counted = predicted["total_ops"] - predicted["chosen_ops"]
    record = {"clusters": predicted["clusters"], "compiled_ops": predicted["compiled_ops"],
              "total_ops": predicted["total_ops"], "chosen_ops": predicted["chosen_ops"],
              "percent": round(100 * predicted["compiled_ops"] / counted, 1) if counted else None,
              "splitters": splitters, "unneeded_scopes": _unneeded_scopes(splitters)}
    return Prediction(record, frozenset(predicted["clustered_nodes"]), left_out)


def _unneeded_scopes(splitters: list[dict]) -> list[dict]:
    """``jit_scope(compile_ops=False)`` blocks whose every op XLA could have compiled."""
    scopes: dict[str, list[dict]] = defaultdict(list)
    for s in splitters:
        if "scope" in s:
            scopes[s["scope"]].append(s)
    return [{"scope": name, "path": ops[0]["path"], "line": ops[0]["line"], "ops": [s["op_type"] for s in ops]}
            for name, ops in scopes.items() if not any(s["otherwise"] for s in ops)]


def judged(graph: OpGraph, findings: list[Finding], predicted: Prediction) -> tuple[list[Finding], str]:
    """The entry's findings under auto-clustering, and its verdict: ``incompatible`` (an error
    remains), ``runs`` (ops are left out of XLA), or ``compatible`` (nothing blocks XLA)."""
    nodes: dict[tuple, list[dict]] = defaultdict(list)
    for node in graph.nodes():
        nodes[(node["name"], node["type"])].append(node)
    kept, left_out = [], False
    for f in findings:
        ops = nodes.get((f.op_name, f.op_type), []) if f.op_name else []
        if f.fix and f.fix.kind == "enable-jit-compile":  # the offer: it does run under XLA, in part
            record = predicted.record
            kept.append(replace(f, message=f"`{f.entry}` has no XLA blocker: jit_compile=True would compile all of "
                                f"it at once (auto-clustering compiles {share_text(record)} of its ops in "
                                f"{len(record['clusters'])} cluster(s))"))
        elif not ops or any(op["id"] in predicted.clustered for op in ops):
            kept.append(f)
        elif all((op.get("xla_attrs") or {}).get("_XlaCompile") is False for op in ops):
            left_out = left_out or f.severity == "error"  # jit_scope(compile_ops=False): the user's choice
        elif f.severity == "error":
            left_out = True
            splitters = [predicted.left_out[op["id"]] for op in ops if op["id"] in predicted.left_out]
            kept.append(_left_out(f, splitters, predicted.record["clusters"]))
        else:
            kept.append(f)
    if any(f.severity == "error" for f in kept):
        return kept, "incompatible"
    return kept, "runs" if left_out else "compatible"


def share_text(record: dict) -> str:
    """The share of ops under XLA of an ``autocluster`` record, in whole percent ("-": no op counted)."""
    return "-" if record["percent"] is None else f"{int(record['percent'])}%"


LEFT_OUT = ": auto-clustering leaves it out of XLA's clusters and TensorFlow runs it"


def runs_outside_xla(finding: Finding) -> Finding:
    """An error on an op auto-clustering leaves out, as that mode makes it: TensorFlow runs the op (info)."""
    return replace(finding, severity="info", message=finding.message + LEFT_OUT,
                   hint=f"Nothing breaks under auto-clustering. To compile it too: {finding.hint}")


def judged_by_name(findings: list[Finding], functions: list, path: str, forced: str, device: str) -> list[Finding]:
    """The source pass's findings of ``path`` in the light of the mode each compiled function (``functions``,
    ``source_scan.CompiledFunction``) runs in: a by-API-name error on an op that auto-clustering never
    clusters, in functions that all run under it, is ``info`` (TensorFlow runs the op), as for a traced entry."""
    jit = {function.name: function.jit_compile for function in functions}
    modes: dict[str, str] = {}

    def clustered(name: str) -> bool:
        if name not in modes:
            modes[name] = entry_mode(path, True if jit.get(name) else None, forced, device).name
        return modes[name] == AUTO_CLUSTERING

    return [runs_outside_xla(f) if f.severity == "error" and RULES[f.code].never_clustered and f.all_entries
            and all(map(clustered, f.all_entries)) else f for f in findings]


def _left_out(finding: Finding, splitters: list[dict], clusters: list[list[str]]) -> Finding:
    if any(_splits_loop_body(s["op_name"], clusters) for s in splitters):
        return replace(finding, severity="warning", hint=LOOP_HINT,
                       message=f"{finding.message}{LEFT_OUT}, inside a loop body it splits on every iteration")
    return runs_outside_xla(finding)


def _splits_loop_body(op_name: str, clusters: list[list[str]]) -> bool:
    """The op is in a lowered loop body where other ops are clustered."""
    if "/body/" not in op_name:
        return False
    body = op_name.rsplit("/body/", 1)[0] + "/body/"
    return any(name.startswith(body) for cluster in clusters for name in cluster)
