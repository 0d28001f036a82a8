"""Kubernetes resource quantities: parsing, exact arithmetic and canonical formatting.

Quantities are compared and summed exactly (Decimal), e.g. to check that a PodGroup's
``minResources`` fits its queue's ``capability`` or to add JobManager and TaskManager requests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

# The Kubernetes quantity grammar (the regex of the CRD schemas in Volcano, applied with fullmatch).
QUANTITY_RE = re.compile(
    r"(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>[KMGTPE]i|[numkMGTPE]|[eE][+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))?"
)
QUANTITY_PATTERN = QUANTITY_RE.pattern

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
}


# Kubernetes stores quantities as int64 with at most nano precision; anything beyond 1e±30 is a typo.
MAX_EXPONENT = 30


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


def parse_quantity(value: str | int | float) -> Decimal:
    """Return the exact numeric value of a Kubernetes quantity (``"1.5Gi"`` → 1610612736)."""
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a quantity")
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(repr(value))
    match = QUANTITY_RE.fullmatch(value.strip()) if isinstance(value, str) else None
    if not match or value != value.strip():
        raise QuantityError(f"{value!r} is not a Kubernetes quantity (e.g. 4, 500m, 16Gi, 1e3)")
    try:
        number = Decimal(match["num"])
    except InvalidOperation as exc:  # pragma: no cover - regex guarantees a number
        raise QuantityError(f"{value!r} is not a Kubernetes quantity") from exc
    suffix = match["suffix"] or ""
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix in _DECIMAL:
        return number * _DECIMAL[suffix]
    exponent = Decimal(suffix[1:])
    if abs(exponent) > MAX_EXPONENT or exponent != exponent.to_integral_value():
        raise QuantityError(
            f"{value!r}: exponent must be an integer between -{MAX_EXPONENT} and {MAX_EXPONENT}"
        )
    return number.scaleb(int(exponent))


@dataclass(frozen=True, order=True)
class Quantity:
    """A parsed quantity that remembers how the user wrote it (for faithful output)."""

    value: Decimal
    text: str

    @classmethod
    def parse(cls, raw: str | int | float) -> Quantity:
        """Parse ``raw``; raise `QuantityError` when it is not a quantity."""
        return cls(parse_quantity(raw), raw if isinstance(raw, str) else str(raw))

    @property
    def number(self) -> int | float:
        """The value as a plain number (an int when whole): what Flink's ``*.cpu.amount`` keys and the
        operator's ``resource.cpu`` take."""
        return int(self.value) if self.value == self.value.to_integral_value() else float(self.value)

    def __str__(self) -> str:
        return self.text


def format_quantity(value: Decimal, binary: bool) -> str:
    """Format an exact value canonically: integers plain or with the largest exact suffix.

    ``binary`` picks Ki/Mi/Gi… (memory) over k/M/G and milli (cpu, counts). Fractions of a unit are
    written in milli units (``1500m``); anything smaller is written as a plain decimal.
    """
    if value == value.to_integral_value():
        n = int(value)
        if binary and n != 0:
            for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
                if n % _BINARY[suffix] == 0:
                    return f"{n // _BINARY[suffix]}{suffix}"
        return str(n)
    milli = value * 1000
    if milli == milli.to_integral_value():
        return f"{int(milli)}m"
    return format(value.normalize(), "f")


def format_resource(name: str, value: Decimal) -> str:
    """A quantity of resource ``name`` as a person reads it: memory-like ones binary (``2Ti``)."""
    binary = name in ("memory", "ephemeral-storage") or name.startswith("hugepages-")
    return format_quantity(value, binary=binary)


def sum_quantities(values: list[Decimal]) -> Decimal:
    """Exact sum (kept as a function so callers document intent)."""
    total = Decimal(0)
    for v in values:
        total += v
    return total
