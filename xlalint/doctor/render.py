"""The doctor's answer as text (one line per check, its fix below) or JSON."""

from __future__ import annotations

import json

from xlalint.doctor.model import PROBLEM, Diagnosis


def text(diagnosis: Diagnosis) -> str:
    lines = [f"xlalint doctor: TensorFlow {diagnosis.tensorflow or '(not importable)'}"]
    width = max(len(c.name) for c in diagnosis.checks)
    for check in diagnosis.checks:
        lines.append(f"{check.status:<8} {check.name:<{width}}  {check.detail}")
        if check.fix:
            lines.append(f"{'':<8} {'':<{width}}  fix: {check.fix}")
    for device in diagnosis.devices:
        timing = (f"compile {device.compile_s:.2f} s, step {device.step_s * 1e3:.2f} ms, "
                  if device.compile_s is not None and device.step_s is not None else "")
        lines.append(f"device {device.device}: XLA {device.xla} ({timing}{device.detail})")
    problems = sum(c.status == PROBLEM for c in diagnosis.checks)
    need = ", ".join(diagnosis.required) or "none"
    verdict = "XLA works" if diagnosis.ok else "XLA is not ready"
    lines.append(f"{verdict} for the required device(s): {need}; {problems} problem(s)")
    return "\n".join(lines)


def to_json(diagnosis: Diagnosis) -> str:
    return json.dumps(diagnosis.to_json(), indent=2)
