"""The ``[tool.xlalint] run`` commands whose run reaches a saved file, run with ``xlalint run`` in the background:
what they capture in that file joins its diagnostics (docs/run.md)."""

from __future__ import annotations

import asyncio
import json
import os
import sys

from xlalint.core.results import Finding
from xlalint.inputs.module_files import module_file
from xlalint.run.listed import listed_command
from xlalint.settings.config import find_config, load_config
from xlalint.settings.table import run_command_words
from xlalint.tracing.preload_plan import run_files


def reaching(path: str) -> tuple[str, list[str]]:
    """The config's folder and its listed commands whose script or local modules are ``path`` (all of them when
    a script imports too many files to read). Raises ``ConfigError``."""
    config = load_config(find_config([path]))
    root, found = str(config.root), []
    for command in config.values.get("run", []):
        script, module, _ = listed_command(command)
        # a listed command runs from the config's folder, as ``python SCRIPT`` or ``python -m MODULE`` would
        file = os.path.join(root, script) if script else module_file(module, root) if module else None
        if file is None:
            continue
        files = run_files(file, module, root)
        if files is None or os.path.realpath(path) in files:
            found.append(command)
    return root, found


async def run_command(root: str, command: str, started) -> tuple[list[Finding], str | None]:
    """``xlalint run COMMAND`` from ``root``: its findings (paths from ``root``), or why there are none;
    ``started`` is handed the process (to kill it when the file changes again)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "xlalint", "run", "--format", "json", "-q", *run_command_words(command), cwd=root,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    started(process)
    out, err = await process.communicate()
    try:
        report = json.loads(out)
    except ValueError:
        lines = err.decode(errors="replace").strip().splitlines()
        return [], f"`xlalint run {command}` gave no report" + (f": {lines[-1]}" if lines else "")
    return [Finding.from_json({**f, "path": os.path.join(root, f["path"])}) for f in report["findings"]], None
