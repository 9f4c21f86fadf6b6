"""OpGraph's own answers on hand-built graphs (no TensorFlow): neighbours, ancestors, trace positions,
and a topological order that holds also where the trace order does not."""

from __future__ import annotations

import pytest

from graph_builder import GraphBuilder
from xlalint.analyses.folding import folded_nodes


def _diamond(out_of_order: bool) -> GraphBuilder:
    """x -> a, b -> c (+ a Const folded into d); ``out_of_order`` lists c before the ops it reads."""
    g = GraphBuilder()
    x = g.arg("x", shape=[2])
    if out_of_order:
        g.op("c", "AddV2", ["f:a", "f:b"], shape=[2])
    a = g.op("a", "Neg", [x], shape=[2])
    b = g.op("b", "Exp", [x], shape=[2])
    if not out_of_order:
        g.op("c", "AddV2", [a, b], shape=[2])
    k = g.const("k", [3])
    g.op("d", "Neg", [k], dtype="int32", shape=[])
    g.function("f", ["f:c", "f:d"])
    return g


@pytest.mark.parametrize("out_of_order", [False, True])
def test_neighbours_and_ancestors(out_of_order):
    graph = _diamond(out_of_order).build()
    assert [n["name"] for n in graph.consumers("f:x")] == ["a", "b"]
    assert list(graph.predecessors("f:c")) == ["f:a", "f:b"]
    assert graph.ancestors("f:c") == {"f:a", "f:b", "f:x"}
    assert graph.ancestors("f:x") == set()
    assert graph.reached_from({"f:a"}) == {"f:a", "f:c"}  # what reads a, directly or not
    assert graph.reached_from({"f:x", "f:k"}) == {"f:x", "f:a", "f:b", "f:c", "f:k", "f:d"}
    assert "f:c" in graph and "f:nothing" not in graph
    assert graph.find("f", "d")["type"] == "Neg" and graph.find("f", "e") is None


@pytest.mark.parametrize("out_of_order", [False, True])
def test_topological_order_and_what_it_decides(out_of_order):
    graph = _diamond(out_of_order).build()
    order = graph.topological_order
    assert sorted(order) == sorted(n["id"] for n in graph.nodes())
    for node in graph.nodes():
        assert all(order.index(inp["src"]) < order.index(node["id"]) for inp in node["inputs"])
    assert (order == [n["id"] for n in graph.nodes()]) is (not out_of_order)
    assert graph.runtime_nodes == {"f:x", "f:a", "f:b", "f:c"}
    assert folded_nodes(graph) == {"f:k", "f:d"}
    assert graph.position["f:x"] == 0 and len(graph) == 6


def test_a_cycle_has_no_topological_order():
    g = GraphBuilder()
    g.op("a", "Neg", ["f:b"])
    g.op("b", "Neg", ["f:a"])
    with pytest.raises(Exception, match="cycle"):
        g.build().topological_order
