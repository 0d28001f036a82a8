"""URNs as the Pulumi engine computes them, from the requests a mock monitor received.

Pulumi's Python mocks (``MockMonitor.make_urn``) keep only the parent's *last* type; the engine keeps
the parent's whole qualified type — every ancestor's type but the root stack's — as
``Deployment.generateURN`` does (pulumi/pulumi pkg/resource/deploy/deployment.go: ``parentType`` is
``parent.QualifiedType()`` unless the parent is the root stack). Two resources whose engine URNs are
equal stop a real ``pulumi up`` ("Duplicate resource URN").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

ROOT_STACK_TYPE = "pulumi:pulumi:Stack"


def _qualified_type(urn: str) -> str:
    return urn.split("::")[2]


def engine_urns(requests: Iterable[Any], stack: str, project: str) -> list[tuple[str, str]]:
    """(mock URN, engine URN) of every RegisterResource request, in order. ``request.parent`` is
    the parent's mock URN (what the Python SDK received from the mock monitor)."""
    by_mock: dict[str, str] = {}
    out = []
    for request in requests:
        parent_type = ""
        if request.parent:
            parent = by_mock[request.parent]
            if _qualified_type(parent) != ROOT_STACK_TYPE:
                parent_type = _qualified_type(parent) + "$"
        engine = f"urn:pulumi:{stack}::{project}::{parent_type}{request.type}::{request.name}"
        mock = _mock_urn(request, stack, project)
        by_mock[mock] = engine
        out.append((mock, engine))
    return out


def _mock_urn(request: Any, stack: str, project: str) -> str:
    """The URN the Python mock monitor gave this request (parent's last type only)."""
    type_ = request.type
    if request.parent:
        type_ = _qualified_type(request.parent).split("$")[-1] + "$" + type_
    return f"urn:pulumi:{stack}::{project}::{type_}::{request.name}"


def duplicates(urns: Iterable[str]) -> list[str]:
    """URNs that occur more than once, sorted."""
    seen: set[str] = set()
    dup: set[str] = set()
    for urn in urns:
        (dup if urn in seen else seen).add(urn)
    return sorted(dup)
