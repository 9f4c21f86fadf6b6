"""Stage 3: which ops may be clustered at all, and why the others may not.

A candidate has an XLA kernel for the device and its dtypes (the support tables) and none of
the auto-clustering exclusions of ``compilability_check_util.cc`` and
``mark_for_compilation_pass.cc``: ``_XlaCompile=False`` (``jit_scope(compile_ops=False)``),
stateful random ops, ``Assert``/``CheckNumerics``, ``Unique``, ``variant`` or ``string``
values, Stack/TensorArray ops, slow or inaccurate linear algebra, ops Grappler fused into one
XLA cannot compile, and stateful ops whose value must be a compile-time constant
(``BackwardsConstAnalysis``). A functional loop or branch that was not lowered is a candidate
when every op of its bodies is (``IsCompilableCall``).
"""

from __future__ import annotations

from xlalint.autocluster.flatten import Unit
from xlalint.autocluster.model import Model
from xlalint.autocluster.tables import (
    CONSTANT_OPS, CONTROL_FLOW, DROPPED_OPS, DUMMY_IMPL, NEVER_AUTO_CLUSTERED, RESOURCE_READS, SLOW_OR_INACCURATE,
    STATEFUL_RANDOM, is_stateful)
from xlalint.core.opgraph import CALL_OPS


def find_candidates(model: Model) -> None:
    # A stateful op whose value must be a compile-time constant is never clustered: XLA could not
    # fold it, and the cluster after it would recompile for each value anyway.
    for key, user in _must_be_constant(model).items():
        unit = model.units[key]
        if unit.kind == "op" and (is_stateful(unit.type) or unit.type in RESOURCE_READS) \
                and not unit.type.startswith(("Stack", "TensorArray")):
            model.reason.setdefault(model.group[key], f"stateful op whose value {model.units[user].type} "
                                                     "needs at compile time: kept out of clusters")
    for rep, (fused_type, members) in model.fused.items():
        names = "+".join(model.units[m].type for m in members)
        model.reason[rep] = (f"Grappler fuses {names} into {fused_type} on {model.device} before clustering, "
                             "and that op has no XLA kernel")
    for key, unit in model.units.items():
        rep = model.group[key]
        if rep in model.fused:
            continue
        why = _exclusion(model, unit, honour_scope=rep not in model.composed)
        if why and rep not in model.reason:
            model.reason[rep] = why
            if why == SCOPED:  # the user's choice: would it be left out anyway?
                model.scoped[rep] = _exclusion(model, unit, honour_scope=False)


SCOPED = "inside jit_scope(compile_ops=False) (_XlaCompile=False)"


def _exclusion(model: Model, unit: Unit, honour_scope: bool = True) -> str | None:
    node, op_type = unit.node, unit.type
    if unit.kind == "arg":
        return "function argument"
    if unit.kind == "control_flow":
        return ("control flow is lowered to Switch/Merge before clustering: its bodies are "
                "clustered apart from the ops around it")
    # A _UnaryOpsComposition is a new node: the _Xla* attrs of the ops it replaces are lost
    # (measured: jit_scope(compile_ops=False) around one op of a unary chain has no effect).
    if honour_scope and (node.get("xla_attrs") or {}).get("_XlaCompile") is False:
        return SCOPED
    if unit.removed:
        return None  # gone after Grappler
    if unit.folded:  # a constant after Grappler
        return "string constant: XLA has no string type" if any(
            o["dtype"] == "string" for o in node["outputs"]) else None
    if op_type in CALL_OPS:
        return "call of a function whose body was not exported"
    if op_type in CONTROL_FLOW:  # not lowered: compiled whole, or not at all
        return _uncompilable_body(model, node, depth=1)
    if op_type in STATEFUL_RANDOM:
        return "stateful random op: auto-clustering never compiles it (XLA's RNG differs from TensorFlow's)"
    if op_type in DUMMY_IMPL:
        return "Assert/CheckNumerics: auto-clustering keeps them in TensorFlow"
    if op_type in NEVER_AUTO_CLUSTERED:
        return NEVER_AUTO_CLUSTERED[op_type]
    if op_type in SLOW_OR_INACCURATE:
        return "slow or inaccurate under XLA: auto-clustering leaves it to TensorFlow"
    if op_type.startswith(("Stack", "TensorArray")):
        return "Stack/TensorArray op: not auto-clustered"
    if not model.support.has_op(model.device, op_type):
        return f"no XLA kernel on {model.device}"
    types = {t["dtype"] for t in node["inputs"]} | {t["dtype"] for t in node["outputs"]}
    if op_type in CONSTANT_OPS and "string" in types:
        return "string constant: XLA has no string type"
    if "variant" in types:
        return "produces or consumes a variant (TensorList, dataset, optional...)"
    if "string" in types:
        return "string tensors: XLA has no string type"
    mismatch = model.support.dtype_mismatch(model.device, op_type, node["attrs"])
    if mismatch:
        return f"no XLA kernel for {mismatch[1]} ({mismatch[0]}={mismatch[1]}) on {model.device}"
    return None


def _uncompilable_body(model: Model, node: dict, depth: int) -> str | None:
    """Why a functional While/If/Case (or a call in one) cannot be compiled whole, if it can't.

    IsCompilableCall: every op of every body must be compilable, and ops in called functions
    may not touch resource variables."""
    if depth > 10:
        return "functions nested too deeply"
    for names in node["calls"].values():
        for name in names:
            if name not in model.graph.functions:
                continue  # a Defun-era body the export cannot see: assumed compilable (ctc_loss: it is)
            inputs = set(model.graph.functions[name]["inputs"])
            for inner in model.graph.nodes():
                if inner["function"] != name or inner["id"] in inputs or inner["type"] in DROPPED_OPS:
                    continue
                if inner["type"] in CALL_OPS or inner["type"] in CONTROL_FLOW:
                    why = _uncompilable_body(model, inner, depth + 1)
                elif any(t["dtype"] == "resource" for t in inner["inputs"]):
                    why = "uses a resource variable inside a called function"
                else:
                    why = _exclusion(model, Unit(inner["name"], inner, -1, -1))
                if why:
                    return f"{inner['type']} `{inner['name']}` in its body {name}: {why}"
    return None


def _must_be_constant(model: Model) -> dict[str, str]:
    """Ops whose value XLA would need at compile time (BackwardsConstAnalysis) -> the op needing it."""
    needed: dict[str, str] = {}
    stack: list[tuple[str, str]] = []
    for key, unit in model.units.items():
        args = model.support.const_inputs.get(unit.type, ())
        stack.extend((src, key) for src, inp in zip(unit.inputs, unit.node["inputs"])
                     if src is not None and inp["arg"] in args)
    while stack:
        key, user = stack.pop()
        if key in needed:
            continue
        needed[key] = user
        unit = model.units[key]
        if unit.kind == "op" and unit.type not in model.support.metadata_ops:
            stack.extend((src, user) for src in unit.inputs if src is not None)
    return needed
