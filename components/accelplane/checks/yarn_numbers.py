"""Every number accelplane writes into a YARN file fits the Java type Hadoop parses it with (issue 37).

Hadoop's ``Configuration.getInt``/``getLong`` throw ``NumberFormatException`` for a value beyond
``int``/``long`` (the daemon does not start), and a vcore count is a whole number: ``cpu: 1500m``
on a YARN pool used to become ``cpu-vcores=1`` silently. The parsers (apache/hadoop trunk):

* ``yarn.scheduler.maximum-allocation-mb`` / ``-vcores`` (``yarn.maximumAllocation``):
  ``CapacitySchedulerConfigValidator.validateMemoryAllocation`` and ``validateVCores`` read them
  with ``conf.getInt`` (the ResourceManager's start-up validation), so at most 2^31-1.
* ``yarn.nodemanager.resource.cpu-vcores`` (``nodePools[].cpu`` of a YARN pool):
  ``NodeManagerHardwareUtils.getConfiguredVCores``: ``conf.getInt`` — at most 2^31-1 and whole.
* ``yarn.nodemanager.resource.memory-mb`` (``nodePools[].memory``):
  ``NodeManagerHardwareUtils.getConfiguredMemoryMB``: ``conf.getLong``; ``ContainersMonitorImpl``
  then multiplies it by ``1024 * 1024L`` (bytes, a ``long``), so at most (2^63-1) / 2^20 MiB.
* ``yarn.resource-types.<r>.minimum-allocation`` / ``maximum-allocation``: ``ResourceUtils``
  reads them with ``conf.getLong``; the schema bounds them at 2^63-1.

`tests/yarn/test_yarn_numbers.py` drives Hadoop's own ``Configuration.getInt``/``getLong`` (from
the pyspark jars) on the bounds and one past them.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from accelplane.derive.flink_keys import MIB
from accelplane.errors import Problem
from accelplane.findings import ERROR, declare
from accelplane.model import NodePool, Spec

JAVA_INT_MAX = 2**31 - 1
JAVA_LONG_MAX = 2**63 - 1
NODEMANAGER_MEMORY_MAX_MIB = JAVA_LONG_MAX // 2**20
"""``yarn.nodemanager.resource.memory-mb`` times 2^20 must stay a ``long`` (ContainersMonitorImpl)."""

YARN_NUMBER_TOO_LARGE = declare(
    "AP5060", ERROR,
    "a YARN number is larger than the Java int/long Hadoop parses it with, so the daemon does not start",
    fix="use a realistic value (at most the bound the message names)",
)  # fmt: skip
YARN_FRACTIONAL_VCORES = declare(
    "AP5061", ERROR,
    "a YARN pool's cpu is not a whole number of vcores (YARN counts whole vcores; 1500m would become 1)",
    fix="write whole cores, e.g. cpu: 2",
)  # fmt: skip


def _too_large(path: tuple[str | int, ...], key: str, value: int, bound: int, parser: str) -> Problem:
    return Problem(
        path,
        f"{value} is rendered as {key}, which Hadoop reads with {parser}: at most {bound}; the daemon "
        "would fail to start with a NumberFormatException; use a realistic value",
        YARN_NUMBER_TOO_LARGE,
    )


def _pool_memory_mib(pool: NodePool) -> int:
    assert pool.memory is not None
    return int(pool.memory.value // Decimal(MIB))


def pool_in_range(pool: NodePool) -> bool:
    """True when the pool's cpu and memory are within the Java types the NodeManager reads them
    with (`check` reports the pool at its field otherwise, AP5060)."""
    cpu_over = pool.cpu is not None and pool.cpu.value > JAVA_INT_MAX
    return not cpu_over and (pool.memory is None or _pool_memory_mib(pool) <= NODEMANAGER_MEMORY_MAX_MIB)


def check(spec: Spec) -> Iterator[Problem]:
    """Every YARN number in range of its Java type; YARN pools' cpu in whole vcores."""
    y = spec.yarn
    if y is not None and y.maximum_allocation_memory is not None:
        mib = int(y.maximum_allocation_memory.value) // MIB
        if mib > JAVA_INT_MAX:
            yield _too_large(
                ("yarn", "maximumAllocation", "memory"), "yarn.scheduler.maximum-allocation-mb (MiB)", mib,
                JAVA_INT_MAX, "Configuration.getInt (CapacitySchedulerConfigValidator.validateMemoryAllocation)",
            )
    if y is not None and y.maximum_allocation_vcores is not None and y.maximum_allocation_vcores > JAVA_INT_MAX:
        yield _too_large(
            ("yarn", "maximumAllocation", "vcores"), "yarn.scheduler.maximum-allocation-vcores",
            y.maximum_allocation_vcores, JAVA_INT_MAX, "Configuration.getInt (CapacitySchedulerConfigValidator.validateVCores)",
        )
    for pool in spec.node_pools:
        if pool.platform != "yarn":
            continue
        if pool.cpu is not None:
            cores = pool.cpu.value
            if cores != cores.to_integral_value():
                yield Problem(
                    (*pool.path, "cpu"),
                    f"{pool.cpu.text} is {cores.normalize()} cores, but a NodeManager offers whole vcores "
                    f"(yarn.nodemanager.resource.cpu-vcores); accelplane would write {int(cores)}; write whole "
                    f"cores, e.g. cpu: {max(int(cores), 1)}",
                    YARN_FRACTIONAL_VCORES,
                )
            elif cores > JAVA_INT_MAX:
                yield _too_large(
                    (*pool.path, "cpu"), "yarn.nodemanager.resource.cpu-vcores", int(cores), JAVA_INT_MAX,
                    "Configuration.getInt (NodeManagerHardwareUtils.getConfiguredVCores)",
                )
        if pool.memory is not None:
            mib = _pool_memory_mib(pool)
            if mib > NODEMANAGER_MEMORY_MAX_MIB:
                yield _too_large(
                    (*pool.path, "memory"), "yarn.nodemanager.resource.memory-mb (MiB)", mib,
                    NODEMANAGER_MEMORY_MAX_MIB,
                    "Configuration.getLong and then multiplies by 2^20 into a long (NodeManagerHardwareUtils, "
                    "ContainersMonitorImpl)",
                )
