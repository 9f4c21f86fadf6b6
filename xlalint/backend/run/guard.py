"""Keep user code that xlalint runs (``xlalint run``, and each file's import in the check command) from
changing the user's files or reaching the network.

The working directory is a scratch mirror of the user's (``xlalint.process.scratch``): relative
writes land there. This guard sees every write made through Python (audit events) and through
``tf.io.gfile`` (``run_hooks.on_tf_file_write``): a write into the mirror makes a linked folder on
its way real and replaces a linked file with a copy first (also for ``chmod``, ``utime``, ``chown``
and ``truncate``, which act on a link's target), a write into the user's own tree is refused with a
``PermissionError`` that says why. A subprocess or shell command that names a path inside the tree
is refused the same way (relative paths in it land in the mirror, its working directory). A
connection or name lookup for another host stops the run, naming the call and line.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import shlex
import shutil
import sys
import threading
from types import FrameType

from xlalint.core.results import place
from xlalint.inputs.notebooks import place_of
from xlalint.process.scratch import materialize

from xlalint.backend.run import hooks as run_hooks
from xlalint.backend.frames import is_user_file

WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
# audit event -> how many of its leading arguments are paths the event changes
CHANGES = {"os.remove": 1, "os.rmdir": 1, "os.mkdir": 1, "os.rename": 2, "os.truncate": 1,
           "os.chmod": 1, "os.utime": 1, "os.chown": 1, "os.symlink": 2, "os.link": 2, "shutil.rmtree": 1,
           "shutil.copyfile": 2, "shutil.move": 2}
FOLLOWS_LINKS = frozenset({"os.truncate", "os.chmod", "os.utime", "os.chown"})  # they change a link's target
# audit event -> the index of its command (an argument list, or a shell command line)
COMMANDS = {"subprocess.Popen": 1, "os.system": 0, "os.exec": 1, "os.posix_spawn": 1, "os.spawn": 2}
LOCAL_HOSTS = frozenset({"localhost", "ip6-localhost", ""})


class RunStop(BaseException):
    """Ends the script's run: ``args`` are the reason, the user's ``[file, line, function]`` or None,
    and the kind of stop ("captured", "budget", "network").

    A ``BaseException``, so that a script's ``except Exception:`` does not swallow it (its
    ``finally:`` blocks still run)."""


class NetworkStop(RunStop):
    """The script tried to reach another host: the run stops here."""


def user_site(skip: int = 0) -> tuple[tuple[str, int, str], str] | None:
    """``((file, line, function), callee)``: the innermost frame of the user's code on this thread's
    stack, and the qualified name of what it was calling."""
    frame: FrameType | None = sys._getframe(skip + 1)  # noqa: SLF001
    inner: FrameType | None = None
    while frame is not None:
        if is_user_file(frame.f_code.co_filename):
            callee = "" if inner is None else f"{inner.f_globals.get('__name__', '?')}.{getattr(inner.f_code, 'co_qualname', inner.f_code.co_name)}"  # 3.11+
            return (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name), callee
        frame, inner = frame.f_back, frame
    return None


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _local(host) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if host is None or str(host).lower() in LOCAL_HOSTS:
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


def _shell_words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:  # an unclosed quote
        return text.split()


class Guard:
    """What the run wrote (into the scratch folder), refused, and whether it reached for the network."""

    def __init__(self, scratch: str, protected: list[str], allowed: list[str]):
        self.scratch = os.path.realpath(scratch)
        self.protected = [os.path.realpath(p) for p in protected]
        self.allowed = [os.path.realpath(p) for p in allowed]  # xlalint's own files, wherever they are
        self.redirected: list[str] = []  # paths written in the scratch folder, relative to it
        self.refused: list[dict] = []  # {"path", "call", "where"}
        self._busy = threading.local()

    def install(self) -> None:
        sys.addaudithook(self._audit)
        run_hooks.on_tf_file_write(lambda path, call: self._change(path, call, opens=call == "WritableFile"))

    def _audit(self, event: str, args: tuple) -> None:
        if getattr(self._busy, "on", False):
            return
        if event == "open":
            path, mode, flags = args
            if isinstance(path, (str, bytes, os.PathLike)) and (
                    (isinstance(mode, str) and any(c in mode for c in "wax+")) or (flags or 0) & WRITE_FLAGS):
                self._change(path, "open", opens=True)
        elif event in CHANGES:
            for path in args[:CHANGES[event]]:
                if isinstance(path, (str, bytes, os.PathLike)):
                    self._change(path, event, opens=event in FOLLOWS_LINKS)
        elif event in COMMANDS:
            self._command(args[COMMANDS[event]], event)
        elif event == "socket.getaddrinfo" and not _local(args[0]):
            self._network(f"looks up host {args[0]!r}")
        elif event == "socket.connect" and isinstance(args[1], tuple) and not _local(args[1][0]):
            self._network(f"connects to {args[1][0]}")

    def _change(self, path, call: str, opens: bool) -> None:
        """Let a write into the scratch folder (or outside the user's tree) through; refuse one into the tree."""
        text = os.fsdecode(path)
        if "://" in text:  # a remote file system (gs://, s3://): not the user's tree
            return
        where = os.path.abspath(text)
        self._busy.on = True
        try:
            if _inside(where, self.scratch):
                materialize(self.scratch, where)
            if opens and os.path.islink(where) and _inside(where, self.scratch):
                target = os.path.realpath(where)
                os.unlink(where)
                if os.path.isfile(target):
                    shutil.copy2(target, where)  # copy on write: the user's file stays as it was
            real = os.path.join(os.path.realpath(os.path.dirname(where)), os.path.basename(where))
            real = os.path.realpath(real) if opens else real
        finally:
            self._busy.on = False
        if _inside(real, self.scratch):
            self.redirected.append(os.path.relpath(real, self.scratch))
        elif any(_inside(real, root) for root in self.protected) and not any(_inside(real, a) for a in self.allowed):
            site = user_site(2)
            self.refused.append({"path": text, "call": call, "where": list(site[0]) if site else None})
            raise PermissionError(errno.EACCES, "xlalint leaves your files unchanged: this write was refused", text)

    def _command(self, command, event: str) -> None:
        """Refuse a subprocess or shell command that names a path inside the user's tree (it would write
        past this guard), also inside a shell script it is given; relative paths are left to it: its
        working directory is the mirror. The program itself is run, not written."""
        words = [command] if isinstance(command, (str, bytes)) else list(command or ())
        tokens = [t for w in words if isinstance(w, (str, bytes, os.PathLike)) for t in _shell_words(os.fsdecode(w))]
        for token in tokens[1:]:
            path = token.split("=", 1)[-1].lstrip("<>|&;")  # --out=/abs/path, >/abs/path
            if os.path.isabs(path):
                self._change(path, event, opens=False)

    def _network(self, what: str) -> None:
        site = user_site(2)
        file, line = (site[0][0], site[0][1]) if site else ("", 0)
        where = f" at {place(os.path.basename(file), line, place_of(file, line))}" if site else ""
        call = f"`{site[1]}`" if site and site[1] else "a call"
        raise NetworkStop(f"the script reaches for the network: {call}{where} {what}; xlalint allows the code "
                          "it runs no network access (download the data once, then point the script at the local "
                          "copy)", list(site[0]) if site else None, "network")
