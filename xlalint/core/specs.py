"""Parse tensor specs given on the command line, such as ``float32[8,224,224,3]``."""

from __future__ import annotations

import re
from dataclasses import dataclass

_SPEC = re.compile(r"^\s*([a-z][a-z0-9_]*)\s*\[\s*([^\]]*)\]\s*$")
DTYPES = frozenset(
    "bool bfloat16 float16 half float32 float64 double int8 int16 int32 int64 "
    "uint8 uint16 uint32 uint64 complex64 complex128 string".split()
)


class SpecError(ValueError):
    """A spec string that does not describe a tensor."""


@dataclass(frozen=True)
class Spec:
    dtype: str
    shape: tuple[int | None, ...]

    def __str__(self) -> str:
        dims = ",".join("None" if d is None else str(d) for d in self.shape)
        return f"{self.dtype}[{dims}]"


def signature_text(signature: list[dict]) -> str:
    """``float32[64,16], int32[64]`` for a traced signature (``[{"dtype", "shape"}, ...]``)."""
    return ", ".join(s["dtype"] if s["shape"] is None else str(Spec(s["dtype"], tuple(s["shape"]))) for s in signature)


def parse_spec(text: str) -> Spec:
    """``"float32[None,3]"`` -> ``Spec("float32", (None, 3))``; ``?`` also means unknown."""
    match = _SPEC.match(text)
    if not match:
        raise SpecError(f"bad spec {text!r}: expected DTYPE[DIM,...], e.g. float32[8,224,224,3] or int32[]")
    dtype, dims_text = match.groups()
    if dtype not in DTYPES:
        raise SpecError(f"bad spec {text!r}: unknown dtype {dtype!r} (one of {', '.join(sorted(DTYPES))})")
    dims: list[int | None] = []
    for part in filter(None, (p.strip() for p in dims_text.split(","))):
        if part in ("None", "?", "-1"):
            dims.append(None)
        elif part.isdigit():
            dims.append(int(part))
        else:
            raise SpecError(f"bad spec {text!r}: dimension {part!r} is not a number, None or ?")
    return Spec(dtype, tuple(dims))
