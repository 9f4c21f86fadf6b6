"""Stage 5: which clusters are kept, and the record ``predict_clusters`` returns.

``mark_for_compilation_pass.cc`` keeps a cluster with at least ``--tf_xla_min_cluster_size``
(4) ops that are not ``Const``/``Identity`` (a unary composition counts once), one holding a
functional loop or branch, or one where an op asks for compilation (``_XlaCompile=True``);
``DeclusterNodes`` then leaves out a ``Fill`` none of whose users is in its cluster.
"""

from __future__ import annotations

from xlalint.autocluster.model import Model
from xlalint.autocluster.tables import CONSTANT_OPS, CONTROL_FLOW, IDENTITY_OPS, MIN_CLUSTER_SIZE


def result(model: Model, clusters: dict[str, list[str]]) -> dict:
    """The ``predict_clusters`` record for the contracted ``clusters`` (representative -> member reps)."""
    rep_members = model.represented()
    kept, dropped = [], []
    for rep, reps in sorted(clusters.items(), key=lambda kv: min(model.units[r].order for r in kv[1])):
        keys = sorted((k for r in reps for k in rep_members[r]), key=lambda k: model.units[k].order)
        size = sum(_weight(model, r) for r in reps)
        asked = any((model.units[k].node.get("xla_attrs") or {}).get(a) is True
                    for k in keys if model.group[k] not in model.composed
                    for a in ("_XlaCompile", "_XlaMustCompile"))
        keys_set = set(keys)
        # DeclusterNodes: a Fill whose users are all outside the cluster is left out.
        keys = [k for k in keys if not (model.units[k].type == "Fill"
                                        and not keys_set.intersection(_users(model, k)))]
        functional = any(model.units[r].type in CONTROL_FLOW for r in reps)  # assumed big enough
        if size >= MIN_CLUSTER_SIZE or asked or functional:
            kept.append(keys)
        elif size:
            dropped.append(keys)
    counted = [k for k, u in model.units.items() if u.kind == "op" and not u.folded and not u.removed
               and u.type not in CONSTANT_OPS | IDENTITY_OPS | {"IdentityN"}]
    in_clusters = {k for keys in kept for k in keys}
    splitters = []
    for rep, why in sorted(model.reason.items(), key=lambda kv: model.units[kv[0]].order):
        unit = model.units[rep]
        if unit.kind == "arg" or unit.type in CONSTANT_OPS and "string" not in why:
            continue
        splitter = {"op_name": rep, "op_type": unit.type, "reason": why, "node": unit.node["id"]}
        if rep in model.scoped:  # left out by the user's choice; "otherwise": what else would keep it out
            splitter.update(scope=(unit.node.get("xla_attrs") or {}).get("_XlaScope", ""),
                            otherwise=model.scoped[rep])
        splitters.append(splitter)
    return {
        "clusters": kept,
        "compiled_ops": sum(1 for k in counted if k in in_clusters),
        "total_ops": len(counted),
        "chosen_ops": sum(1 for k in counted if model.group[k] in model.scoped and k not in in_clusters),
        "splitters": splitters,
        "dropped": dropped,
        "clustered_nodes": sorted({model.units[k].node["id"] for k in in_clusters}),
    }


def _weight(model: Model, rep: str) -> int:
    unit = model.units[rep]
    if rep in model.composed:
        return 1
    if unit.folded or unit.removed or unit.type in CONSTANT_OPS or unit.type in IDENTITY_OPS:
        return 0
    return 1


def _users(model: Model, key: str) -> set[str]:
    """Consumers of ``key``, seen through Identity ops (Grappler removes most of them)."""
    users, stack = set(), list(model.consumers[key])
    while stack:
        user = stack.pop()
        if model.units[user].type in IDENTITY_OPS:
            stack.extend(model.consumers[user])
        else:
            users.add(user)
    return users
