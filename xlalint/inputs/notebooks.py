"""Jupyter notebooks as Python modules: the code cells joined in order, with a map back to the cells.

``read_notebook(path)`` gives a ``NotebookModule``: the Python source every mode checks (and the full
mode imports), and where each of its lines sits in the notebook (cell, line in the cell, line of the
``.ipynb`` file). IPython magics and shell lines (``%``, ``%%``, ``!``, ``x = !cmd``, ``obj?``) keep
their lines as ``pass  # magic``, so every position maps back. ``fixes.notebook.rewrite`` writes edits of that source
back into the notebook's JSON text (``xlalint.fixes.notebook``).

Cells are numbered from 1 among all cells of the notebook, markdown included, as ruff does.
"""

from __future__ import annotations

import ast
import functools
import io
import json
import linecache
import os
import re
import shlex
import tokenize
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, replace
from json.decoder import scanstring  # type: ignore[attr-defined]  # public in json.decoder, not in its stubs
from typing import Any

from xlalint.core.results import Related

SUFFIX = ".ipynb"
MAGIC = "pass  # magic"  # what a magic or shell line is in the module
# Cell magics whose body IPython runs as Python; any other (%%bash, %%writefile, %%html...) is not Python.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
_LINE_MAGIC = re.compile(r"^\s*(%|!|[A-Za-z_][\w.]*(\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[%!])")
_SET_ENV = re.compile(r"^(?P<name>[A-Za-z_]\w*)(\s*=\s*|\s+)(?P<value>\S.*)$")  # %env's arguments that set one
_MAGIC_CALL = re.compile(r"^\s*%(?P<magic>\w+)(\s+(?P<args>.*))?$")  # a line magic (not an assignment from one)
_TIMEIT_VALUED = frozenset({"-n", "-r", "-p"})  # %timeit options that take a value
_HELP = re.compile(r"^\s*(\?{1,2}[\w.]+|[\w.]+\?{1,2})\s*$")
# IPython's line magics and shell aliases (IPython 8), which its automagic runs without their `%`
AUTOMAGICS = frozenset(
    "alias alias_magic autoawait autocall automagic bookmark cat cd colors conda config cp debug dhist dirs "
    "doctest_mode ed edit env gui hist history killbgscripts ldir lf lk ll load load_ext loadpy logoff logon "
    "logstart logstate logstop ls lsmagic lx macro magic matplotlib mkdir mv notebook page pastebin pdb pdef pdoc "
    "pfile pinfo pinfo2 pip popd pprint precision prun psearch psource pushd pwd pycat pylab quickref recall "
    "rehashx reload_ext rep rerun reset reset_selective rm rmdir run save sc set_env sx system tb time timeit "
    "unalias unload_ext who who_ls whos xdel xmode".split())
_AUTOMAGIC = re.compile(r"^\s*(?P<name>[A-Za-z_]\w*)\s+(?P<rest>[^\s=,].*)$")  # a name, then arguments
_OPERATION = re.compile(r"^([-+*/%&|^<>@]=?|\*\*|//|==|!=|in|is|and|or|if|not)\s")  # `time - start`: Python
_LINE = re.compile(r"([^\r\n]*)(\r\n|\r|\n|\Z)")  # Python's line breaks
_SPACE = re.compile(r"[ \t\n\r]*")


class NotebookError(ValueError):
    """A notebook xlalint cannot check; the message says why (and where, for a syntax error)."""


def is_notebook(path: str) -> bool:
    return path.endswith(SUFFIX)


@dataclass(frozen=True)
class Cell:
    number: int  # 1-based among all cells
    first: int  # module line of its first line (1-based)
    lines: tuple[str, ...]  # its lines as written, with their endings
    code: tuple[str, ...]  # its lines in the module (magics replaced), without endings
    tokens: tuple[tuple[int, int], ...]  # (start, end) offsets of its source's JSON string(s) in the file
    listed: bool  # the source is a JSON list of strings (else one string)

    @property
    def last(self) -> int:
        return self.first + len(self.code) - 1


@dataclass(frozen=True)
class NotebookModule:
    source: str  # the Python module
    cells: tuple[Cell, ...]  # the code cells, in order
    file_lines: tuple[int, ...]  # per module line: the .ipynb file's line where its JSON string starts

    def cell_at(self, line: int) -> Cell | None:
        return next((c for c in self.cells if c.first <= line <= c.last), None)

    def skipped(self) -> list[dict]:
        """``{"cell", "line", "text"}`` of each magic or shell line that runs as ``pass`` (a continued one once)."""
        out = []
        for cell in self.cells:
            if cell.lines and body(cell.lines[0]).lstrip().startswith("%%") and set(cell.code) == {MAGIC}:
                out.append({"cell": cell.number, "line": 1, "text": body(cell.lines[0]).strip() + " (the whole cell)"})
                continue
            if cell.lines and body(cell.lines[0]).lstrip().startswith("%%") and set(cell.code[1:]) <= {MAGIC}:
                continue  # a cell magic that runs, as its first line (%%writefile)
            for index, code in enumerate(cell.code):
                written = body(cell.lines[index]).strip()
                continues = index > 0 and body(cell.lines[index - 1]).endswith("\\") and cell.code[index - 1].strip() == MAGIC
                if code.strip() == MAGIC and written and not continues:
                    out.append({"cell": cell.number, "line": index + 1, "text": written})
        return out

    def place(self, line: int) -> dict | None:
        """``{"cell", "line", "file_line"}`` of a module line (None outside every cell)."""
        cell = self.cell_at(line)
        if cell is None:
            return None
        return {"cell": cell.number, "line": line - cell.first + 1, "file_line": self.file_lines[line - 1]}


def split_lines(text: str) -> list[str]:
    """Lines with their endings, as Python counts lines."""
    return [m.group(0) for m in _LINE.finditer(text) if m.group(0)]


def body(line: str) -> str:
    """The line without its ending."""
    return line.rstrip("\r\n")


def _as_python(lines: list[str]) -> list[str]:
    """The cell's lines with IPython syntax replaced by ``pass  # magic`` at the same indentation."""
    lines = _dedented(lines)
    bodies = [body(line) for line in lines]
    if bodies and bodies[0].lstrip().startswith("%%"):
        words = bodies[0].lstrip()[2:].split()
        text = "".join(lines[1:]) + ("\n" if len(lines) > 1 and lines[-1] == bodies[-1] else "")  # IPython ends it
        written = _writefile_python(words, text) if words[:1] == ["writefile"] else None
        if written:
            return [written] + [MAGIC] * (len(bodies) - 1)
        if not words or words[0] not in PYTHON_CELL_MAGICS:
            return [MAGIC] * len(bodies)
        return [MAGIC] + _without_line_magics(bodies[1:])
    first = next((i for i, line in enumerate(bodies) if line.strip()), len(bodies))
    automagic = _automagic(bodies[first]) if len(bodies) == first + 1 else None  # IPython's: one-line cells only
    if automagic:
        return bodies[:first] + [magic_python(automagic) or MAGIC]
    return _without_line_magics(bodies)


def _dedented(lines: list[str]) -> list[str]:
    """The lines less the indentation of the first line with text, where they start with it: IPython takes
    it off a cell before reading it (a cell pasted with its indentation runs)."""
    first = next((line for line in lines if line.strip()), "")
    space = first[:len(first) - len(first.lstrip(" \t"))]
    return [line[len(space):] if line.startswith(space) else line for line in lines] if space else lines


def _writefile_python(words: list[str], text: str) -> str | None:
    """``%%writefile [-a] FILE`` (``words``, the magic's name first) as one line of Python that writes the
    cell's ``text`` after that line to FILE (``-a``: appends it), as IPython does; None for another form."""
    try:
        arguments = shlex.split(" ".join(words[1:]))
    except ValueError:  # an unclosed quote
        return None
    mode = "a" if arguments[:1] in (["-a"], ["--append"]) else "w"
    if len(arguments) != 1 + (mode == "a") or arguments[-1].startswith("-"):
        return None
    path = f"__import__('os').path.expanduser({arguments[-1]!r})"
    return f"__import__('pathlib').Path({path}).open({mode!r}, encoding='utf-8').write({text!r})  # magic"


def _without_line_magics(bodies: list[str]) -> list[str]:
    out: list[str] = []
    continued, indent = False, ""
    for body in bodies:
        if not continued:
            indent = body[:len(body) - len(body.lstrip())]  # continuation lines take the magic's own
        looks = bool(_LINE_MAGIC.match(body) or _HELP.match(body))
        magic = continued or (looks and not _statement_open(out))
        python = None if continued or body.endswith("\\") or not magic else magic_python(body)
        continued = magic and body.endswith("\\")
        out.append(indent + (python or MAGIC) if magic else body)
    return out


def _automagic(line: str) -> str | None:
    """The line with its ``%`` where IPython's automagic runs it as a magic (the line of a one-line cell): a line
    magic's or shell alias's name followed by arguments (``ls -a``, ``pip install x``, ``cd ..``), neither an
    assignment nor, where the line is Python, an operation on a variable of that name (``time - start``); else
    None. (IPython also keeps a name the notebook defined for Python; xlalint reads no namespace.)"""
    found = _AUTOMAGIC.match(line)
    if found is None or found["name"] not in AUTOMAGICS:
        return None
    if _OPERATION.match(found["rest"]):
        try:
            ast.parse(line.strip())
            return None
        except SyntaxError:
            pass
    return f"{line[:found.start('name')]}%{line[found.start('name'):]}"


def _statement_open(lines: list[str]) -> bool:
    """Whether these lines of Python end inside a statement (an open bracket or string, a trailing
    backslash): IPython reads magics per logical line, so a line that continues one is Python
    (``%(a, b)`` after ``print('%d %d'``)."""
    try:
        for _ in tokenize.generate_tokens(io.StringIO("".join(line + "\n" for line in lines)).readline):
            pass
    except tokenize.TokenError:  # "EOF in multi-line statement" or "... string"
        return True
    except SyntaxError:  # a dedent to no outer level: not for this question
        return False
    return False


def magic_python(line: str) -> str | None:
    """The Python that a line magic means, for those that change the program (IPython's meaning, in one line);
    None for a magic xlalint skips. ``%env``/``%set_env NAME=VALUE`` set the variable; ``%cd DIR`` changes
    the working directory; ``%run [-i] FILE.py [ARGS]`` runs the script as ``__main__`` and takes its names
    (``-i``: in the notebook's own namespace); ``%load_ext NAME`` imports the extension's module (no IPython
    shell: its ``load_ipython_extension`` is not called); ``%time STATEMENT`` runs the statement, ``%timeit``
    once, in a copy of the namespace."""
    found = _MAGIC_CALL.match(line)
    if found is None:
        return None
    magic, args = found["magic"], (found["args"] or "").strip()
    try:
        words = shlex.split(args)
    except ValueError:  # an unclosed quote
        return None
    if magic in ("env", "set_env") and (sets := _SET_ENV.match(args)):
        return f"__import__('os').environ[{sets['name']!r}] = {sets['value'].strip()!r}  # magic"
    if magic == "cd" and [w for w in words if w != "-q"] and not any(w in ("-", "-b") for w in words):
        folder = " ".join(w for w in words if w != "-q")
        return f"__import__('os').chdir(__import__('os').path.expanduser({folder!r}))  # magic"
    if magic == "run" and words:
        return _run_python(words)
    if magic == "load_ext" and len(words) == 1 and words[0] not in IPYTHON_EXTENSIONS:
        return f"__import__('importlib').import_module({words[0]!r})  # magic"
    if magic in ("time", "timeit") and args:
        return _timed_statement(magic, args)
    return None


IPYTHON_EXTENSIONS = frozenset({"autoreload", "storemagic"})  # IPython's own: nothing of the program's


def _run_python(words: list[str]) -> str | None:
    """``%run [-i] FILE.py [ARGS]`` as one line of Python; None for another form (``-m``, ``-t``, ``-d``, a notebook)."""
    own = words[0] == "-i"
    script, *argv = words[1:] if own else words
    if script.startswith("-") or not script.endswith(".py"):
        return None
    # sys.argv is the script's while it runs, then the notebook's again (the same list), as IPython does
    argv_set = f"with __import__('unittest.mock').mock.patch.object(__import__('sys'), 'argv', {[script, *argv]!r}): "
    if own:
        return f"{argv_set}exec(compile(open({script!r}).read(), {script!r}, 'exec'), globals())  # magic"
    return (f"{argv_set}globals().update((k, v) for k, v in __import__('runpy').run_path({script!r}, "
            "run_name='__main__').items() if not k.startswith('__'))  # magic")


def _timed_statement(magic: str, args: str) -> str | None:
    """The statement ``%time``/``%timeit`` times, run once (``%timeit``'s options dropped)."""
    if magic == "timeit":
        while args.startswith("-"):
            option, _, args = args.partition(" ")
            if option in _TIMEIT_VALUED:
                args = args.lstrip().partition(" ")[2]
            args = args.lstrip()
    try:
        ast.parse(args)
    except SyntaxError:
        return None
    if magic == "timeit":  # in a namespace of its own, as IPython times it: its names do not stay
        return f"exec({args!r}, dict(globals()))  # magic"
    return args


# The notebook's JSON text, walked only to find where each cell's source strings are (``_cells`` reads the rest).

def _skip_space(text: str, pos: int) -> int:
    found = _SPACE.match(text, pos)  # whitespace or nothing: it always matches
    return found.end() if found else pos


def _walk(text: str, pos: int, opener: str, closer: str, on_value) -> int:
    """Walk the object or array at ``pos``; ``on_value(key, start)`` returns the end of each value."""
    if text[pos] != opener:
        raise ValueError(f"expected {opener!r} at offset {pos}")
    pos = _skip_space(text, pos + 1)
    if text[pos] == closer:
        return pos + 1
    index = 0
    while True:
        key = index
        if opener == "{":
            key, pos = scanstring(text, pos + 1)
            pos = _skip_space(text, pos)
            pos = _skip_space(text, pos + 1)  # the colon
        pos = _skip_space(text, on_value(key, pos))
        index += 1
        if text[pos] == closer:
            return pos + 1
        pos = _skip_space(text, pos + 1)  # the comma


_DECODER = json.JSONDecoder()


def _skip(text: str, pos: int) -> int:
    return _DECODER.raw_decode(text, pos)[1]


def _source_tokens(text: str) -> list[tuple[list[tuple[int, int]], bool]]:
    """Per cell, in order: the (start, end) offsets of its source's JSON strings, and whether they are a list."""
    cells: list[tuple[list[tuple[int, int]], bool]] = []

    def in_cell(key, pos):
        if key != "source":
            return _skip(text, pos)
        if text[pos] == '"':
            end = _skip(text, pos)
            cells.append(([(pos, end)], False))
            return end
        spans: list[tuple[int, int]] = []

        def add_span(_, p: int) -> int:
            spans.append((p, _skip(text, p)))
            return spans[-1][1]

        end = _walk(text, pos, "[", "]", add_span)
        cells.append((spans, True))
        return end

    def in_cells(_, pos):
        before = len(cells)
        end = _walk(text, pos, "{", "}", in_cell)
        if len(cells) == before:
            cells.append(([], True))
        return end

    _walk(text, _skip_space(text, 0), "{", "}",
          lambda key, pos: _walk(text, pos, "[", "]", in_cells) if key == "cells" else _skip(text, pos))
    return cells


_CELL_TYPES = ("code", "markdown", "raw")


def _cells(text: str) -> list[dict]:
    """The notebook's cells, each with its ``source`` as one string (nbformat 4 only). Read with ``json``, not
    nbformat: its schema validation imports jsonschema, whose format checkers (installed with Jupyter) take
    seconds to import."""
    try:
        notebook = json.loads(text)
    except ValueError as error:
        raise NotebookError(f"not a notebook: the file is not valid JSON ({error})") from error
    version = notebook.get("nbformat") if isinstance(notebook, dict) else None
    if version != 4:
        shown = "no nbformat version" if version is None else f"nbformat {version}"
        raise NotebookError(f"{shown} is not supported: xlalint reads nbformat 4 notebooks "
                            "(open and save it in Jupyter to convert it)")
    problem = _schema_problem(notebook)
    if problem:
        raise NotebookError(f"not a valid nbformat 4 notebook: {problem}")
    return [{**cell, "source": cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])}
            for cell in notebook["cells"]]


def _schema_problem(notebook: dict) -> str | None:
    """What breaks the parts of nbformat 4's schema that reading the code relies on, if anything."""
    if not isinstance(notebook.get("cells"), list):
        return "'cells' is not a list"
    if not isinstance(notebook.get("metadata"), dict):
        return "'metadata' is not an object"
    for number, cell in enumerate(notebook["cells"], 1):
        if not isinstance(cell, dict):
            return f"cell {number} is not an object"
        if cell.get("cell_type") not in _CELL_TYPES:
            return f"cell {number}: 'cell_type' {cell.get('cell_type')!r} is not one of {', '.join(_CELL_TYPES)}"
        source = cell.get("source")
        if not isinstance(source, str) and not (isinstance(source, list) and all(isinstance(s, str) for s in source)):
            return f"cell {number}: 'source' is not a string or a list of strings"
    return None


def parse_notebook(text: str) -> NotebookModule:
    """The notebook JSON ``text`` as one module; raises ``NotebookError``."""
    cells = _cells(text)
    tokens = _source_tokens(text)
    if len(tokens) != len(cells):
        raise NotebookError("not a notebook: its cells could not be matched to the file's text")
    found: list[Cell] = []
    code: list[str] = []
    file_lines: list[int] = []
    newline_offsets = [m.start() for m in re.finditer("\n", text)]
    for number, (cell, (spans, listed)) in enumerate(zip(cells, tokens), 1):
        if cell["cell_type"] != "code":
            continue
        found.append(_code_cell(number, len(code) + 1, cell["source"], tuple(spans), listed))
        code.extend(found[-1].code)
        file_lines.extend(_file_lines(text, spans, list(found[-1].lines), newline_offsets))
    if not found or not any(line.strip() and line.strip() != MAGIC for line in code):
        raise NotebookError("empty notebook: no code cell has Python code")
    source = "".join(line + "\n" for line in code)
    _check_syntax(source, found)
    return NotebookModule(source, tuple(found), tuple(file_lines))


def _code_cell(number: int, first: int, source: str, spans: tuple[tuple[int, int], ...] = (),
               listed: bool = True) -> Cell:
    lines = split_lines(source)
    return Cell(number, first, tuple(lines), tuple(_as_python(lines)), spans, listed)


def cells_module(sources: list[str]) -> NotebookModule:
    """Code cells given by their texts (an editor's notebook document, cell by cell, numbered from 1) as one
    module, the same module ``parse_notebook`` makes of them; no file lines, no syntax check."""
    cells: list[Cell] = []
    for number, source in enumerate(sources, 1):
        cells.append(_code_cell(number, (cells[-1].last + 1) if cells else 1, source))
    return NotebookModule("".join(line + "\n" for cell in cells for line in cell.code), tuple(cells), ())


def _file_lines(text: str, spans, lines: list[str], newlines: list[int]) -> list[int]:
    """For each line of a cell: the line of the file where the JSON string holding its start begins."""
    ends, total = [], 0
    for start, end in spans:
        total += len(json.loads(text[start:end]))
        ends.append(total)
    out, offset = [], 0
    for line in lines:
        token = min(bisect_right(ends, offset), len(spans) - 1)
        out.append(bisect_left(newlines, spans[token][0]) + 1)
        offset += len(line)
    return out


def _check_syntax(source: str, cells: list[Cell]) -> None:
    try:
        ast.parse(source)
    except SyntaxError as error:
        line = error.lineno or 1
        cell = next((c for c in cells if c.first <= line <= c.last), cells[-1])
        raise NotebookError(f"syntax error in cell {cell.number} at line {line - cell.first + 1}: {error.msg}") from error
    except (RecursionError, MemoryError):
        pass  # reported as for any file, when the module is parsed again


@functools.lru_cache(maxsize=32)
def _cached(path: str, mtime_ns: int, size: int) -> NotebookModule | NotebookError:
    try:
        with open(path, encoding="utf-8-sig") as handle:
            text = handle.read()
    except UnicodeDecodeError as error:
        return NotebookError(f"cannot decode the notebook as UTF-8 ({error.reason} at byte {error.start})")
    try:
        return parse_notebook(text)
    except NotebookError as error:
        return error


def read_notebook(path: str) -> NotebookModule:
    """The notebook at ``path`` as a module (read once per version of the file); raises ``NotebookError``
    or ``OSError``."""
    info = os.stat(path)
    result = _cached(os.path.abspath(path), info.st_mtime_ns, info.st_size)
    if isinstance(result, NotebookError):
        raise result
    return result


_remembered: dict[str, list[str]] = {}  # notebook path -> its module's lines, in a process that runs notebooks


def remember_source(path: str, source: str) -> None:
    """Make ``inspect``, AutoGraph and tracebacks (through ``linecache``) read a notebook's module, not its
    JSON, as IPython registers each cell: an entry without a modification time stays in the cache, and
    ``linecache.updatecache`` (which AutoGraph calls for every function it converts, and which would read
    the file's JSON) gives it back."""
    lines = source.splitlines(keepends=True)
    _remembered[path] = lines
    linecache.cache[path] = (len(source), None, lines, path)
    if not hasattr(linecache.updatecache, "__wrapped__"):
        reread = linecache.updatecache

        @functools.wraps(reread)
        def updatecache(filename, module_globals=None):
            if filename in _remembered:
                linecache.cache[filename] = (sum(map(len, _remembered[filename])), None, _remembered[filename],
                                             filename)
                return _remembered[filename]
            return reread(filename, module_globals)

        linecache.updatecache = updatecache


def place_of(path: str, line: int) -> dict | None:
    """``{"cell", "line", "file_line"}`` of a line of a notebook's module, None for any other file."""
    if not is_notebook(path):
        return None
    try:
        return read_notebook(path).place(line)
    except (NotebookError, OSError):
        return None


def _placed(places):
    """Places (``Related``, or ``{"path", "line", ...}``) with ``cell`` set where the path is a notebook's."""
    return [p if not is_notebook(p.path if isinstance(p, Related) else p["path"])
            else replace(p, cell=place_of(p.path, p.line)) if isinstance(p, Related)
            else {**p, "cell": place_of(p["path"], p["line"])} for p in places]


def in_cells(items: list) -> list:
    """Findings or entries with ``cell`` set where their path is a notebook, and the same for their
    related places and auto-clustering splitters."""
    out = []
    for item in items:
        changes: dict[str, Any] = {}
        if getattr(item, "related", ()):
            changes["related"] = tuple(_placed(item.related))
        if getattr(item, "autocluster", None):
            changes["autocluster"] = {**item.autocluster, "splitters": _placed(item.autocluster["splitters"])}
        if is_notebook(item.path):
            changes["cell"] = place_of(item.path, item.line)
        out.append(replace(item, **changes) if changes else item)
    return out
