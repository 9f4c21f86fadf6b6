"""Tell the user's own source frames from library and generated ones."""

from __future__ import annotations

import os
import site
import sys
import sysconfig
from functools import lru_cache

import xlalint

_LIBRARY_ROOTS = tuple(
    sorted(
        {
            os.path.realpath(p) + os.sep
            for p in [
                sys.prefix,
                sys.base_prefix,
                sys.exec_prefix,
                *site.getsitepackages(),
                site.getusersitepackages(),
                sysconfig.get_paths()["stdlib"],
                os.path.dirname(xlalint.__file__),
            ]
            if p
        }
    )
)


@lru_cache(maxsize=None)
def _real_folder(folder: str) -> str:
    return os.path.realpath(folder)


def real_file(filename: str) -> str:
    """``os.path.realpath(filename)`` with each absolute folder resolved once: the 3,500 modules a TensorFlow
    process has loaded sit in under 800 folders (a third of the time of asking each whole path)."""
    folder, name = os.path.split(filename)
    if not os.path.isabs(filename) or name in ("", ".", "..") or os.path.islink(filename):
        return os.path.realpath(filename)
    return os.path.join(_real_folder(folder), name)


@lru_cache(maxsize=None)
def is_user_file(filename: str) -> bool:
    """True for a real source file outside Python, site-packages and xlalint (cached: a graph has
    tens of thousands of frames from a few dozen files)."""
    if not filename or filename.startswith("<") or "__autograph_generated_file" in filename:
        return False
    real = real_file(filename)
    return not real.startswith(_LIBRARY_ROOTS) and os.path.isfile(real)


realpath = lru_cache(maxsize=None)(real_file)


def innermost_user_frame(frame):
    """``frame`` or the first frame outside it that runs the user's code; None where none does."""
    while frame is not None and not is_user_file(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def user_frames(frames) -> list[list]:
    """``[[file, line, function], ...]`` of the user frames, outermost first."""
    return [
        [realpath(f.filename), f.lineno, getattr(f, "name", "")]
        for f in frames or ()
        if is_user_file(f.filename)
    ]


def innermost_user_frames(ops) -> dict[str, list]:
    """Op name -> ``[file, line, function]`` of the innermost user frame of its traceback.

    TensorFlow's ``GraphDebugInfoBuilder`` converts the tracebacks in C++ and shares identical
    stacks (a ResNet50 graph: 1,831 ops of ~50 frames, 50 distinct stacks), so each distinct
    stack is searched once. Ops without a user frame are left out.
    """
    from tensorflow.python.util import tf_stack

    builder = tf_stack.GraphDebugInfoBuilder()
    for op in ops:
        stack = op.traceback
        if stack is not None:  # None for ops loaded from a SavedModel
            builder.AccumulateStackTrace("", op.name, stack)
    info = builder.Build()
    user = [is_user_file(f) and realpath(f) for f in info.files]
    innermost = {}
    for trace_id, trace in info.traces_by_id.items():
        for frame in map(info.frames_by_id.__getitem__, reversed(trace.frame_id)):
            if user[frame.file_index]:
                innermost[trace_id] = [user[frame.file_index], frame.line, frame.func]
                break
    return {name.rpartition("@")[0]: innermost[trace_id]
            for name, trace_id in info.name_to_trace_id.items() if trace_id in innermost}
