"""XLA401 experimental-compile: ``experimental_compile=`` is the old name of ``jit_compile=``.

A source rule: every ``experimental_compile=`` given to ``tf.function``, in full and ``--static`` mode.
"""

from __future__ import annotations

from xlalint.checks.base import Fix, Rule
from xlalint.static.compiled import is_tf_function
from xlalint.static.index import Index, Pending
from xlalint.static.syntax import keyword


def check_source(index: Index):
    for site in index.calls:
        if not is_tf_function(index.aliases, site.node):
            continue
        wrapped = index.wrapped(site.node)
        for arg in site.node.args:
            if keyword(arg) == "experimental_compile":
                yield Pending(RULE, "`experimental_compile=` is the deprecated name of `jit_compile=`",
                              "Write `jit_compile=` instead: it means the same, and the old name may go away.",
                              arg, wrapped.name if wrapped else site.owner)


RULE = Rule("XLA401", "experimental-compile", "warning",
            "`experimental_compile=` is the deprecated name of `jit_compile=`.", stage="source",
            check_source=check_source,
            fix=Fix("jit-compile-keyword", "safe", "rename experimental_compile= to jit_compile="))
