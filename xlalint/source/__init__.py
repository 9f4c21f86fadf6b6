"""The libcst model of one Python file that source rules read, with no rule in it.

``index`` (imports, definitions, calls, assignments, loops: one walk), ``compiled`` (which
functions are compiled), ``api_calls`` (the calls compiled functions make of APIs the shipped
``api_table`` lists), ``positions`` (lines and columns, placed at once), ``syntax`` (small libcst
helpers) and ``limits`` (what libcst is not given). It is to source rules what ``opgraph`` is to
graph rules; the pass that runs the rules over it is ``xlalint.engine.source_pass``.
"""
