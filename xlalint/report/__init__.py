"""Output formats: one emitter per format, each a function ``Report -> str``. No analysis here."""

from xlalint.report.concise import emit as emit_concise
from xlalint.report.github import emit as emit_github
from xlalint.report.gitlab import emit as emit_gitlab
from xlalint.report.json_format import emit as emit_json
from xlalint.report.sarif import emit as emit_sarif
from xlalint.report.text import emit as emit_text

EMITTERS = {"text": emit_text, "concise": emit_concise, "json": emit_json, "github": emit_github,
            "sarif": emit_sarif, "gitlab": emit_gitlab}
