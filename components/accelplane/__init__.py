"""accelplane: GPU-aware Apache Flink platforms from one schema-validated spec per cluster.

Pipeline (see docs/architecture.md): load + merge (`spec_loader`) → JSON Schema (`schema`) → typed model
(`model`) → semantic checks (`checks`) → pure builders (`builders`) → renderer (`render`) or
Pulumi components (`accelplane.pulumi`).
"""

__version__ = "0.1.0"
