"""Predict the clusters TensorFlow's auto-clustering would form, without TensorFlow.

``TF_XLA_FLAGS=--tf_xla_auto_jit=2`` (plus ``--tf_xla_cpu_global_jit`` on CPU) runs
``MarkForCompilationPass`` on every function graph TensorFlow executes: it picks the ops XLA
may compile, glues neighbours together along data edges without creating cycles, and drops
clusters with fewer than 4 ops. Ops outside every cluster run in TensorFlow as usual. This
package replays that pass on an ``OpGraph``, one module per stage:

1. ``flatten``: calls inlined, control flow lowered, automatic control dependencies added.
2. ``grappler``: the rewrites Grappler makes first (folding, unary compositions, fusions).
3. ``candidates``: the ops that may be clustered, and why the others may not.
4. ``contraction``: candidates merged along edges without cycles (on a ``dag.DynamicDag``).
5. ``size``: clusters kept by size, and the returned record.

``tables`` holds what each stage knows about op types, ``model`` the state they share.
``docs/autocluster.md`` lists what is and is not modelled and the agreement measured
against TensorFlow 2.21 on CPU.
"""

from __future__ import annotations

from xlalint.autocluster.candidates import find_candidates
from xlalint.autocluster.contraction import contract
from xlalint.autocluster.flatten import Flattener
from xlalint.autocluster.grappler import rewrite
from xlalint.autocluster.model import Model
from xlalint.autocluster.size import result
from xlalint.core.opgraph import OpGraph
from xlalint.core.support import SupportTable


def predict_clusters(graph: OpGraph, support: SupportTable, device: str) -> dict:
    """The clusters ``--tf_xla_auto_jit=2`` would form for the entry's root function.

    Returns ``{"clusters": [[op_name, ...], ...], "compiled_ops": int, "total_ops": int,
    "chosen_ops": int, "splitters": [{"op_name", "op_type", "reason", "node"}], "dropped": [[op_name, ...], ...],
    "clustered_nodes": [node id, ...]}``.
    Op names are the root function's op names; ops that come from a nested function are
    qualified the way TensorFlow names them after inlining/lowering (``<call op>/<op>``,
    ``<while op>/body/<op>``...). ``clusters`` and ``dropped`` (clusters under the minimum
    size) list every member, constants included, in program order. ``compiled_ops`` /
    ``total_ops`` count ops that do work: not arguments, constants, identities, folded values or
    the control-flow ops themselves; ``chosen_ops`` of them are left out by
    ``jit_scope(compile_ops=False)``, the user's choice. ``node`` in a splitter is its ``OpGraph``
    node id, for ``xlalint.source.sourcemap.locate``; a splitter left out by a jit_scope also has ``scope``
    (its ``_XlaScope``) and ``otherwise`` (what would keep it out without the scope, or None).
    """
    model = Model(graph, support, device)
    rewrite(model)
    find_candidates(model)
    return result(model, contract(model))


def flattened_ops(graph: OpGraph) -> dict[str, str]:
    """Qualified op name (as ``predict_clusters`` names ops) -> ``OpGraph`` node id, for every op
    of the flattened entry: the root's ops, inlined calls and lowered control-flow bodies."""
    flat = Flattener(graph)
    flat.run()
    return {key: unit.node["id"] for key, unit in flat.units.items()}
