"""The cluster graph that edge contraction works on (``tensorflow/compiler/jit/graphcycles/graphcycles.cc``)."""

from __future__ import annotations


class DynamicDag:
    """A DAG that can contract edges without creating cycles, like TensorFlow's GraphCycles.

    Keeps a topological rank per node (Pearce-Kelly), so "is there another path from a to
    b" only searches nodes ranked between them.
    """

    def __init__(self, nodes, key):
        self.succ: dict = {n: set() for n in nodes}
        self.pred: dict = {n: set() for n in nodes}
        self.rank: dict = {n: i for i, n in enumerate(sorted(nodes, key=key))}

    def _forward(self, start, upper) -> set:
        seen, stack = {start}, [start]
        while stack:
            for s in self.succ[stack.pop()]:
                if s not in seen and self.rank[s] <= upper:
                    seen.add(s)
                    stack.append(s)
        return seen

    def _backward(self, start, lower) -> set:
        seen, stack = {start}, [start]
        while stack:
            for p in self.pred[stack.pop()]:
                if p not in seen and self.rank[p] >= lower:
                    seen.add(p)
                    stack.append(p)
        return seen

    def insert_edge(self, x, y) -> bool:
        """Add ``x -> y``; False (and no edge) if it would close a cycle."""
        if x == y or y in self.succ[x]:
            return x != y
        if self.rank[x] > self.rank[y]:
            forward = self._forward(y, self.rank[x])
            if x in forward:
                return False
            backward = self._backward(x, self.rank[y])
            moved = sorted(backward, key=self.rank.__getitem__) + sorted(forward, key=self.rank.__getitem__)
            for node, rank in zip(moved, sorted(self.rank[n] for n in moved)):
                self.rank[node] = rank
        self.succ[x].add(y)
        self.pred[y].add(x)
        return True

    def contract_edge(self, a, b) -> bool:
        """Merge ``b`` into ``a`` along the edge ``a -> b`` unless another path joins them."""
        self.succ[a].discard(b)
        self.pred[b].discard(a)
        if b in self._forward(a, self.rank[b]):
            self.succ[a].add(b)
            self.pred[b].add(a)
            return False
        succ, pred = self.succ.pop(b), self.pred.pop(b)
        for s in succ:
            self.pred[s].discard(b)
        for p in pred:
            self.succ[p].discard(b)
        del self.rank[b]
        for s in succ:
            if s != a:
                self.insert_edge(a, s)
        for p in pred:
            if p != a:
                self.insert_edge(p, a)
        return True
