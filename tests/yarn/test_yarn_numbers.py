"""YARN numbers fit the Java type Hadoop parses them with; vcores are whole (issue 37, item 10).

Hadoop reads ``yarn.scheduler.maximum-allocation-mb``/``-vcores`` and the NodeManager's
``cpu-vcores`` with ``Configuration.getInt``, its ``memory-mb`` and the resource types' bounds with
``getLong`` (`accelplane.checks.yarn_numbers` cites the calls). The spec check refuses what does
not fit (AP5060) and fractional vcores (AP5061); Hadoop's own ``getInt``/``getLong`` (pyspark's
jars) read the rendered bounds and throw one past them.
"""

from __future__ import annotations

import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from accelplane.checks.yarn_numbers import JAVA_INT_MAX, JAVA_LONG_MAX, NODEMANAGER_MEMORY_MAX_MIB

from tests.support.render import files_for
from tests.support.specs import findings_by_code, write_spec
from tests.yarn.hadoop import compiled_java_probe

SPEC = """\
cluster: {{name: numbers, platforms: [yarn]}}
nodePools:
  - {{name: gpus, platform: yarn, nodes: 2, cpu: {cpu}, memory: {memory}, gpu: {{vendor: nvidia, perNode: 2}}}}
yarn:
  cgroups: v1
  maximumAllocation: {{memory: {max_memory}}}
  resourceTypes: [{{name: yarn.io/gpu, maximumAllocation: {type_max}}}]
flink:
  clusters:
    - {{name: s, target: yarn, taskManager: {{gpu: {{amount: 1}}}}}}
"""


def _spec(tmp_path: Path, **values: Any) -> Path:
    fields = {"cpu": 32, "memory": "128Gi", "max_memory": "8Gi", "type_max": 2, **values}
    return write_spec(tmp_path, SPEC.format(**fields))


AT_BOUNDS = {
    "cpu": JAVA_INT_MAX,
    "memory": f"{NODEMANAGER_MEMORY_MAX_MIB}Mi",
    "max_memory": f"{JAVA_INT_MAX}Mi",
    "type_max": JAVA_LONG_MAX,
}


@pytest.mark.parametrize(
    ("values", "code", "path"),
    [
        ({"max_memory": f"{JAVA_INT_MAX + 1}Mi"}, "AP5060", "yarn.maximumAllocation.memory"),
        ({"max_memory": "953674316406250000000000Mi"}, "AP5060", "yarn.maximumAllocation.memory"),
        ({"cpu": 99999999999}, "AP5060", "nodePools[0].cpu"),
        ({"memory": f"{NODEMANAGER_MEMORY_MAX_MIB + 1}Mi"}, "AP5060", "nodePools[0].memory"),
        ({"cpu": "1500m"}, "AP5061", "nodePools[0].cpu"),
        ({"cpu": "31.5"}, "AP5061", "nodePools[0].cpu"),
        ({"type_max": JAVA_LONG_MAX + 1}, "AP1006", "yarn.resourceTypes[0].maximumAllocation"),
    ],
    ids=["max-mb-int", "max-mb-huge", "vcores-int", "nm-memory-long", "millicores", "half-core", "type-long"],
)
def test_numbers_beyond_hadoops_types_are_refused(values: dict[str, Any], code: str, path: str, tmp_path: Path) -> None:
    found = findings_by_code(_spec(tmp_path, **values))
    assert code in found, found
    assert found[code][:2] == ("error", path)


def test_numbers_at_the_bounds_validate(tmp_path: Path) -> None:
    found = findings_by_code(_spec(tmp_path, **AT_BOUNDS))
    assert not {"AP5060", "AP5061", "AP1006"} & set(found), found


# --- Hadoop's own parsers ------------------------------------------------------------------------

PARSERS = {
    "yarn.scheduler.maximum-allocation-mb": "int",
    "yarn.nodemanager.resource.cpu-vcores": "int",
    "yarn.nodemanager.resource.memory-mb": "long",
    "yarn.resource-types.yarn.io/gpu.maximum-allocation": "long",
}


@pytest.fixture(scope="module")
def conf_numbers(tmp_path_factory: pytest.TempPathFactory) -> Any:
    classpath = compiled_java_probe(Path(__file__).parent / "java" / "ConfNumbersProbe.java",
                                    tmp_path_factory.mktemp("conf-numbers"))

    def read(xml: Path) -> dict[str, tuple[str, str]]:
        args = [a for key, kind in PARSERS.items() for a in (kind, key)]
        proc = subprocess.run(
            ["java", "-cp", classpath, "ConfNumbersProbe", str(xml), *args],
            capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
        return {k: (status, v) for k, status, v in (line.split("\t") for line in proc.stdout.splitlines())}

    return read


def _merged_xml(files: dict[str, tuple[str, int]], out: Path) -> Path:
    """Every property of the rendered YARN XML files in one Hadoop configuration file."""
    root = ET.Element("configuration")
    for name, (text, _) in sorted(files.items()):
        if name.startswith("yarn/") and name.endswith(".xml"):
            root.extend(ET.fromstring(text).findall("property"))
    out.write_bytes(ET.tostring(root))
    return out


@pytest.mark.hadoop
def test_hadoop_reads_the_rendered_bounds(conf_numbers: Any, tmp_path: Path) -> None:
    """The largest values the check lets through render, and Hadoop's getInt/getLong read them."""
    files = files_for(_spec(tmp_path, **AT_BOUNDS))
    got = conf_numbers(_merged_xml(files, tmp_path / "all.xml"))
    assert got == {
        "yarn.scheduler.maximum-allocation-mb": ("value", str(JAVA_INT_MAX)),
        "yarn.nodemanager.resource.cpu-vcores": ("value", str(JAVA_INT_MAX)),
        "yarn.nodemanager.resource.memory-mb": ("value", str(NODEMANAGER_MEMORY_MAX_MIB)),
        "yarn.resource-types.yarn.io/gpu.maximum-allocation": ("value", str(JAVA_LONG_MAX)),
    }


@pytest.mark.hadoop
def test_hadoop_refuses_one_past_the_int_and_long_bounds(conf_numbers: Any, tmp_path: Path) -> None:
    """The bounds are Hadoop's: one more and getInt/getLong throw (what main rendered)."""
    values = {
        "yarn.scheduler.maximum-allocation-mb": JAVA_INT_MAX + 1,
        "yarn.nodemanager.resource.cpu-vcores": 99999999999,
        "yarn.nodemanager.resource.memory-mb": JAVA_LONG_MAX + 1,
        "yarn.resource-types.yarn.io/gpu.maximum-allocation": JAVA_LONG_MAX + 1,
    }
    root = ET.Element("configuration")
    for key, value in values.items():
        prop = ET.SubElement(root, "property")
        ET.SubElement(prop, "name").text = key
        ET.SubElement(prop, "value").text = str(value)
    (tmp_path / "past.xml").write_bytes(ET.tostring(root))
    got = conf_numbers(tmp_path / "past.xml")
    assert {k: v[0] for k, v in got.items()} == dict.fromkeys(values, "error")
    assert {v[1] for v in got.values()} == {"java.lang.NumberFormatException"}
