"""The one error the real-Flink harness raises when it cannot do what it was asked."""

from __future__ import annotations


class HarnessError(RuntimeError):
    """The harness could not do what it was asked (with diagnostics)."""
