"""One line on how the program runs an entry, for the formats that list findings line by line."""

from __future__ import annotations

from xlalint.autocluster.judge import share_text
from xlalint.core.results import Entry


def mode_phrase(entry: Entry) -> str | None:
    """For an auto-clustered entry its share under XLA; for one xlalint could not place, why; else None."""
    a = entry.autocluster
    if entry.xla_mode == "auto-clustering" and a:
        return (f"`{entry.name}` runs under auto-clustering ({entry.xla_mode_source}): {share_text(a)} of its ops "
                f"under XLA in {len(a['clusters'])} cluster(s)")
    return f"`{entry.name}`: {entry.xla_mode_note}" if entry.xla_mode_note else None
