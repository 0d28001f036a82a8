"""Shared derivations: what checks, builders and reports all need to know about a spec.

Pure functions of the typed model (no I/O, no pulumi, no problems raised): the queue tree, GPU
resource names and pool candidates, node selection, discovery paths, Flink's generated keys and
value syntax, pod-level facts (PodGroup names, minResources), YARN types and the capacity plan.
`accelplane.checks` and `accelplane.builders` import from here and never from each other (see
docs/architecture.md; `tests/foundation/test_layers.py` enforces it).
"""
