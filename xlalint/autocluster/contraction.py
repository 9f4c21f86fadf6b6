"""Stage 4: candidates merge into clusters along the edges between them.

As ``mark_for_compilation_pass.cc`` does: every candidate starts as a cluster of its own;
shape consumers (``Shape``/``Size``/``Rank``) join their producer first, then every edge is
tried, clusters visited from the sinks up (TensorFlow's post-order walk), until nothing
changes. A merge is refused when it would close a cycle through an op outside the pair
(``DynamicDag``), join two regions of the flattened graph, or put a variable write before a
read of the same cluster: a cluster reads every variable first and writes them last
(``resource_operation_safety_analysis.cc``).
"""

from __future__ import annotations

from xlalint.autocluster.dag import DynamicDag
from xlalint.autocluster.flatten import Unit
from xlalint.autocluster.model import Model
from xlalint.autocluster.tables import (
    CONTROL_FLOW, RESOURCE_OP_PREFIXES, RESOURCE_READS, RESOURCE_WRITES, SHAPE_CONSUMERS)
from xlalint.core.opgraph import CALL_OPS


def contract(model: Model) -> dict[str, list[str]]:
    """Representative -> member reps of each cluster after edge contraction."""
    reps = sorted({model.group[k] for k in model.units}, key=lambda r: model.units[r].order)
    dag = DynamicDag(reps, key=lambda r: model.units[r].order)
    order = model.units
    for src, dst in sorted(model.edges | model.control, key=lambda e: (order[e[0]].order, order[e[1]].order)):
        a, b = model.group[src], model.group[dst]
        if a != b:
            dag.insert_edge(a, b)
    unsafe = _unsafe_resource_pairs(model, dag)
    resource_reps = {r for pair in unsafe for r in pair}
    members = {r: [r] for r in reps if r not in model.reason}
    region = {r: model.units[r].region for r in reps}

    def resource_safe(a, b) -> bool:
        left = [r for r in members[a] if r in resource_reps]
        right = [r for r in members[b] if r in resource_reps]
        return not any((x, y) in unsafe or (y, x) in unsafe for x in left for y in right)

    def phase(accept) -> bool:
        changed = False
        for a in sorted(members, key=lambda r: -dag.rank[r]):  # post-order: sinks first
            if a not in members:
                continue
            for b in sorted(dag.succ[a], key=lambda r: dag.rank[r]):
                if (b in members and region[a] == region[b] and accept(a, b) and resource_safe(a, b)
                        and dag.contract_edge(a, b)):
                    members[a].extend(members.pop(b))
                    changed = True
        return changed

    # Phase 0: shape consumers join their producer first; then every edge, to a fixed point.
    phase(lambda a, b: len(members[b]) == 1 and model.units[b].type in SHAPE_CONSUMERS)
    while phase(lambda a, b: True):
        pass
    return members


def _resource_kind(unit: Unit) -> str | None:
    """"r", "w" or "rw" for a resource-variable op, else None."""
    if unit.kind == "op" and (unit.type in CONTROL_FLOW or unit.type in CALL_OPS):
        return "rw"  # MayCallFunction: assumed to read and write variables
    if unit.kind != "op" or not any(i["dtype"] == "resource" for i in unit.node["inputs"]):
        return None
    if unit.type in RESOURCE_READS:
        return "r"
    if unit.type in RESOURCE_WRITES:
        return "w"
    return "rw" if unit.type.startswith(RESOURCE_OP_PREFIXES) else None


def _unsafe_resource_pairs(model: Model, dag: DynamicDag) -> set[tuple[str, str]]:
    """(writer, reader) reps that may not share a cluster: a path leads from one to the other."""
    kinds = {k: _resource_kind(u) for k, u in model.units.items()}
    members_of = model.represented()
    reaching: dict[str, set[str]] = {}
    pairs: set[tuple[str, str]] = set()
    for rep in sorted(dag.rank, key=dag.rank.__getitem__):
        incoming = set().union(*(reaching[p] for p in dag.pred[rep])) if dag.pred[rep] else set()
        mine = [k for k in members_of[rep] if kinds[k]]
        for key in mine:
            if kinds[key] in ("r", "rw"):
                pairs.update((w, rep) for w in incoming)
        if any(kinds[k] in ("w", "rw") for k in mine):
            incoming = incoming | {rep}
        reaching[rep] = incoming
    return pairs
