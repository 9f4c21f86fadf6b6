"""``--format json``: exactly one JSON object (schema documented in docs/json-schema.md)."""

from __future__ import annotations

import json

from xlalint.version import VERSION
from xlalint.engine.coverage import coverage
from xlalint.core.results import Report


def emit(report: Report) -> str:
    return json.dumps(
        {
            "xlalint": VERSION,
            "tensorflow": report.tensorflow,
            "tables": report.tables,
            "device": report.device,
            "entries": [e.to_json() for e in report.entries],
            "findings": [f.to_json() for f in report.findings],
            "errors": [e.to_json() for e in report.errors],
            "interrupted": report.interrupted,
            "coverage": coverage(report),
            "baseline": report.baseline.to_json() if report.baseline else None,
            **({"run": report.run} if report.run else {}),
            **({"runs": report.runs} if report.runs else {}),
            **({"shard": report.shard.block(report)} if report.shard else {}),
        },
        indent=2,
    )
