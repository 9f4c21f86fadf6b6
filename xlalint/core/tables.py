"""Which shipped table serves a TensorFlow version, and how a report names the tables it used.

xlalint ships three tables per supported TensorFlow release in ``xlalint/data/``, written by
``tools/regen.py --tables`` in an environment with that release: the support table
(``support_tf<V>.json``), the compile-time-constant inputs (``const_inputs_tf<V>.json``) and the static
API names (``static_api_tf<V>.json``). A version with no shipped table of a kind is served by the closest
shipped one: the same minor release, else the newest older one, else the oldest (the support table is
generated for it instead, ``xlalint.core.support``).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).parent.parent / "data"
SUPPORT, CONST_INPUTS, API = "support_tf", "const_inputs_tf", "static_api_tf"  # file name prefixes
KINDS = {SUPPORT: "support", CONST_INPUTS: "const_inputs", API: "api"}  # each prefix's key in a report


def version_key(version: str) -> tuple[int, ...]:
    """``"2.17.1"`` -> ``(2, 17, 1)``; a part that is not a number (``0rc1``) counts as 0."""
    return tuple(int(part) if part.isdigit() else 0 for part in version.split("."))


def shipped_versions(prefix: str) -> list[str]:
    """The TensorFlow versions with a shipped table of this kind, oldest first (the folder is read once)."""
    return list(_versions(DATA, prefix))


@lru_cache(maxsize=None)
def _versions(data: Path, prefix: str) -> tuple[str, ...]:
    return tuple(sorted((p.stem[len(prefix):] for p in data.glob(f"{prefix}*.json")), key=version_key))


def closest(prefix: str, tensorflow: str | None) -> str:
    """The shipped version of this kind that serves ``tensorflow`` (None: the newest)."""
    versions = shipped_versions(prefix)
    if not versions:
        raise FileNotFoundError(f"no {prefix}*.json in {DATA}")
    if tensorflow is None:
        return versions[-1]
    if tensorflow in versions:
        return tensorflow
    wanted = version_key(tensorflow)
    same_minor = [v for v in versions if version_key(v)[:2] == wanted[:2]]
    older = [v for v in versions if version_key(v) < wanted]
    return (same_minor or older or versions[:1])[-1]


def path(prefix: str, version: str) -> Path:
    return DATA / f"{prefix}{version}.json"


def used(tensorflow: str | None, support: tuple[str, str] | None = None) -> dict:
    """What a report says of its tables for ``tensorflow``: per kind, the version its table was made for and how it
    was found (``shipped``; ``closest``: shipped for another version; the support table's own ``generated`` or
    ``fallback``). ``support``: the support table's (version, source) when the run used it (not ``--static``)."""
    tables = {}
    if support:
        tables[KINDS[SUPPORT]] = {"tensorflow": support[0], "source": support[1]}
    for prefix in (CONST_INPUTS, API) if support else (API,):
        version = closest(prefix, tensorflow)
        tables[KINDS[prefix]] = {"tensorflow": version, "source": "shipped" if version == tensorflow else "closest"}
    return tables


def describe(tables: dict) -> str:
    """One line: ``tables: shipped for TensorFlow 2.21.0`` when every table is, else each kind's."""
    kinds = list(tables.values())
    if all(t == kinds[0] for t in kinds) and kinds[0]["source"] == "shipped":
        return f"tables: shipped for TensorFlow {kinds[0]['tensorflow']}"
    return "tables: " + ", ".join(f"{kind} {t['source']} for TensorFlow {t['tensorflow']}"
                                  for kind, t in tables.items())


def outside_range(tensorflow: str | None) -> str | None:
    """What to tell a user whose TensorFlow is older or newer than every shipped release (None: within the range)."""
    versions = shipped_versions(SUPPORT)
    if not tensorflow or not versions:
        return None
    minor = version_key(tensorflow)[:2]
    oldest, newest = versions[0], versions[-1]
    if version_key(oldest)[:2] <= minor <= version_key(newest)[:2]:
        return None
    return (f"TensorFlow {tensorflow} is outside the releases xlalint was checked on ({oldest} to {newest}): its "
            "support table was read from this TensorFlow, but Keras's decisions, the run hooks and the "
            "auto-clustering model are those of the closest release and may differ (docs/versions.md)")
