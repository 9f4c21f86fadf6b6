"""The op's stack in XLA's compile error (xlalint/backend/op_stack.py), read by the tools that compile for real: the
differential tester's line of a file, the run truth's innermost file of a folder. TensorFlow writes each frame's file
without the folders that all the stack's files share, its own included; the messages here are written out as it
writes them, so no TensorFlow runs."""

from __future__ import annotations

from xlalint.backend.op_stack import created_at, innermost_in


def _message(*frames: tuple[str, int], heading: str = "The op is created at:", contents: bool = False) -> str:
    """A compile error naming ``frames`` (file as TensorFlow writes it, line), outermost first."""
    code = "\n  return tf.strings.as_string(x)" if contents else ""
    shown = "\n".join(f'File "{file}", line {line}, in step{code}' for file, line in frames)
    return ("Detected unsupported operations when trying to compile graph __inference_step_12[] on XLA_CPU_JIT: "
            f"AsString (No registered 'AsString' OpKernel){{{{node AsString}}}}\n{heading} \n{shown}\n"
            "\ttf2xla conversion failed while converting __inference_step_12[]. Run with TF_DUMP_GRAPH_PREFIX=... "
            '[Op:__inference_step_12]\nFile "runs/p.py", line 99, in later')


def test_the_line_of_a_file_is_read_whatever_folders_the_message_leaves_off():
    message = _message(("usr/lib/python3/runpy.py", 3), ("runs/p.py", 12), ("runs/p.py", 19))
    assert created_at(message, "/data/runs/p.py") == 19  # TensorFlow under /data too: "/data/" left off
    assert created_at(message.replace('"runs', '"data/runs'), "/data/runs/p.py") == 19  # just "/"
    assert created_at(message.replace('"runs', '"/data/runs'), "/data/runs/p.py") == 19  # nothing
    assert created_at(message, "/data/xruns/p.py") is None  # a folder's boundary, not any suffix
    assert created_at("no stack here", "/data/runs/p.py") is None


def test_the_innermost_file_of_a_folder_is_read_whatever_folders_the_message_leaves_off():
    """As the run truth reads a script's failure: its folder's files only, not a sub-folder's or a sibling's, nor
    Python's frozen runpy (a frame of no file, which leaves every path whole)."""
    folder = "/data/runs/truth"
    frames = [("runs/truth/train.py", 30), ("runs/truth/helper.py", 7), ("runs/xtruth/helper.py", 9),
              ("runs/truth/sub/layer.py", 4)]
    assert innermost_in(_message(*frames), folder) == ("helper.py", 7)  # "/data/" left off
    whole = [("<frozen runpy>", 88), *((f"/data/{file}", line) for file, line in frames)]
    assert innermost_in(_message(*whole), folder) == ("helper.py", 7)
    assert innermost_in(_message(*frames[:2], heading="Stack trace for op definition:", contents=True),
                        folder) == ("helper.py", 7)  # a tensor list's stack, each frame with its line's code
    assert innermost_in(_message(("<frozen runpy>", 88)), "/data") is None
    assert innermost_in("no stack here", folder) is None


def test_the_stack_ends_where_its_frames_do_when_the_compiler_writes_nothing_after_it():
    """A traceback printed later in the message (no "tf2xla conversion failed" between) is not the op's stack."""
    stack = _message(("runs/p.py", 12), contents=True).split("\ttf2xla")[0]
    later = '\nTraceback (most recent call last):\n  File "runs/p.py", line 99, in later\n    later()\n'
    assert created_at(stack + later, "/data/runs/p.py") == 12
    assert created_at(stack, "/data/runs/p.py") == 12
