"""Output formats: one emitter per format, each a function ``Report -> str``. No analysis here."""

from xlalint.report.json_format import emit as emit_json
from xlalint.report.text import emit as emit_text

EMITTERS = {"text": emit_text, "json": emit_json}
