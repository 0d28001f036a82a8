"""accelplane: GPU-aware Apache Flink platforms from one schema-validated spec per cluster.

Pipeline (see README): load + merge (`spec_loader`) → JSON Schema (`schema`) → typed model
(`model`) → semantic checks (`checks`) → pure builders (`builders`) → renderer (`render`) or
Pulumi components (`accelplane.pulumi`).
"""

from accelplane import dataclass_bytecode

__version__ = "0.1.0"

# First, before any module with dataclasses: their generated methods' bytecode is cached.
dataclass_bytecode.install()
