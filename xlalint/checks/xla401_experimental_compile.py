"""XLA401 experimental-compile: ``experimental_compile=`` is the old name of ``jit_compile=``.

A source rule: every ``experimental_compile=`` given to ``tf.function``, in full and ``--static`` mode.
"""

from __future__ import annotations

import libcst as cst

from xlalint.checks.base import Fix, NodeEdit, Pending, Rule, SourceContext
from xlalint.source.compiled import is_tf_function
from xlalint.source.index import Index
from xlalint.source.syntax import keyword


def check_source(index: Index, ctx: SourceContext):
    for site in index.calls:
        if not is_tf_function(index.aliases, site.node):
            continue
        wrapped = index.wrapped(site.node)
        for arg in site.node.args:
            if keyword(arg) == "experimental_compile":
                yield Pending(RULE, "`experimental_compile=` is the deprecated name of `jit_compile=`",
                              "Write `jit_compile=` instead: it means the same, and the old name may go away.",
                              arg, wrapped.name if wrapped else site.owner)


def _renamed(arg: cst.Arg, ancestors: tuple) -> cst.Arg | None:
    """``experimental_compile=`` -> ``jit_compile=``, in any call at the line."""
    if arg.keyword and arg.keyword.value == "experimental_compile":
        return arg.with_changes(keyword=cst.Name("jit_compile"))
    return None


RULE = Rule("XLA401", "experimental-compile", "warning",
            "`experimental_compile=` is the deprecated name of `jit_compile=`.", stage="source",
            check_source=check_source,
            fix=Fix("jit-compile-keyword", "safe", "rename experimental_compile= to jit_compile=",
                    node_edit=NodeEdit(cst.Arg, _renamed)))
