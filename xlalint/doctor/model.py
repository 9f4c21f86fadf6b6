"""The doctor's answer: checks (ok / problem / skipped, with a fix) and one result per device."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

OK, PROBLEM, SKIPPED = "ok", "problem", "skipped"


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # OK | PROBLEM | SKIPPED
    detail: str
    fix: str | None = None


@dataclass
class DeviceResult:
    device: str  # "cpu" | "gpu"
    xla: str  # "ok" | "broken" | "absent"
    compile_s: float | None = None
    step_s: float | None = None
    detail: str = ""
    smoke: dict = field(default_factory=dict)  # the smoke test's own figures


@dataclass
class Diagnosis:
    xlalint: str
    tensorflow: str | None
    checks: list[Check]
    devices: list[DeviceResult]
    required: tuple[str, ...]

    @property
    def ok(self) -> bool:
        working = {d.device for d in self.devices if d.xla == "ok"}
        return all(c.status != PROBLEM for c in self.checks) and set(self.required) <= working

    def to_json(self) -> dict:
        return {"xlalint": self.xlalint, "tensorflow": self.tensorflow, "ok": self.ok,
                "required": list(self.required), "checks": [asdict(c) for c in self.checks],
                "devices": [asdict(d) for d in self.devices]}
