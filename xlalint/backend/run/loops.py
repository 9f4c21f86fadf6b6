"""Leave a loop of the user's code that only repeats captured calls, and go on with the code after it.

A training loop whose calls trace nothing new has shown all it can (``Capture``'s patience). The
program is not stopped there: the frame that runs the loop jumps, at its next line, to the statement
after its outermost loop around that line (a line trace event may set ``frame.f_lineno``), so the code
that follows (an evaluation, another compiled function) still runs and is captured. Straight-line code
is never stopped for patience: a frame in no loop just goes on. A loop that is the last statement of
its function, or one Python cannot jump out of, is ended as before (``RunStop``).
"""

from __future__ import annotations

import ast
import linecache
import sys
from functools import lru_cache
from types import FrameType


LOOPS = (ast.For, ast.AsyncFor, ast.While)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@lru_cache(maxsize=64)
def _tree(filename: str) -> ast.Module | None:
    try:
        return ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return None


def _blocks(node: ast.AST):
    """The statement lists directly under ``node`` (a body, an else, handlers' bodies), not inside nested scopes."""
    for field in ("body", "orelse", "finalbody"):
        block = getattr(node, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block
    for handler in getattr(node, "handlers", ()):
        yield handler.body
    for case in getattr(node, "cases", ()):
        yield case.body


def _first_line(statement: ast.stmt) -> int:
    """Where a statement's code starts: its first decorator's line for a decorated ``def`` or ``class``."""
    return min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))])


def _scope(tree: ast.Module, code_line: int, name: str) -> ast.AST:
    """The function (or the module) whose code runs in the frame: its ``def`` holds the frame's first line."""
    if name == "<module>":
        return tree
    return next((node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and node.name == name and _first_line(node) == code_line),
                tree)


def after_outermost_loop(tree: ast.Module, line: int, code_line: int, name: str) -> int | None | bool:
    """The line of the statement after the outermost loop around ``line`` in the scope; False where ``line``
    is in no loop; None where that loop is the last statement there is."""
    def search(node: ast.AST, after: int | None) -> int | None | bool:
        for block in _blocks(node):
            for index, statement in enumerate(block):
                if not statement.lineno <= line <= (statement.end_lineno or statement.lineno):
                    continue
                following = _first_line(block[index + 1]) if index + 1 < len(block) else after
                if isinstance(statement, LOOPS):
                    return following
                if isinstance(statement, SCOPES):
                    return False
                return search(statement, following)
        return False

    return search(_scope(tree, code_line, name), None)


def leave_loop(frame: FrameType, stop) -> str:
    """Make ``frame`` jump, at its next line, past its outermost loop around the current line: "left".
    "straight": the frame is in no loop (nothing to do). "last": the loop is the last statement of its scope
    (nowhere to jump). Where Python refuses the jump, ``stop()`` gives the exception raised there instead."""
    tree = _tree(frame.f_code.co_filename)
    target = False if tree is None else after_outermost_loop(tree, frame.f_lineno, frame.f_code.co_firstlineno,
                                                             frame.f_code.co_name)
    if target is False:
        return "straight"
    if target is None:
        return "last"
    previous = sys.gettrace()

    def jump(traced: FrameType, event: str, arg):
        if traced is not frame or event != "line":
            return jump
        try:
            traced.f_lineno = target  # type: ignore[misc]  # writable from the frame's own trace function
        except ValueError as refused:  # out of a block Python cannot leave this way
            raise stop() from refused
        finally:
            traced.f_trace = None
            sys.settrace(previous)
        return None

    frame.f_trace_lines = True
    frame.f_trace = jump
    sys.settrace(previous or (lambda *args: None))  # tracing on for this thread: the frame's own tracer then runs
    return "left"
