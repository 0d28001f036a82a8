"""Shared helpers for the YARN tests: a base spec, rendering, strict parsers for the file formats."""

from __future__ import annotations

import configparser
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.support.render import files_for

# A YARN cluster exercising every feature: node labels per GPU model, Docker, cgroups v2, an explicit
# allowed-device list, an AMD pool (no GPU plugin), a CPU-only pool, hierarchical queues.
BASE = """\
cluster: {name: lab, platforms: [yarn]}
nodePools:
  - name: v100
    platform: yarn
    nodes: 2
    cpu: 64
    memory: 512Gi
    gpu: {vendor: nvidia, model: Tesla V100-SXM2-32GB, perNode: 4}
  - name: t4
    platform: yarn
    nodes: 3
    cpu: 32
    memory: 256Gi
    gpu: {vendor: nvidia, model: Tesla T4, perNode: 4, allowedDevices: ["0:0", "2:3", "1:1"]}
  - name: mi
    platform: yarn
    nodes: 1
    cpu: 96
    memory: 1Ti
    gpu: {vendor: amd, model: AMD Instinct MI300X OAM, perNode: 8}
  - name: cpu
    platform: yarn
    nodes: 4
    cpu: 48
    memory: 192Gi
queues:
  - {name: stream, weight: 2, gpuModels: {Tesla V100-SXM2-32GB: {}}}
  - {name: batch, weight: 1, gpuModels: {Tesla T4: {}, AMD Instinct MI300X OAM: {}}}
yarn:
  nodeLabels: true
  cgroups: v2
  docker: {enabled: true, runtime: nvidia, allowedDevices: [/dev/nvidia-caps/nvidia-cap1]}
  resourceTypes:
    - {name: yarn.io/gpu, minimumAllocation: 0, maximumAllocation: 4}
flink:
  clusters:
    - name: scoring
      target: yarn
      mode: session
      image: registry.example.com/flink-gpu:1.20.1-py3
      queue: stream
      taskManager: {replicas: 2, slots: 1, cpu: 4, memory: 8Gi, gpu: {amount: 2, model: Tesla V100-SXM2-32GB}}
"""


QUEUES_WITH_MODELS = (
    "  - {name: stream, weight: 2, gpuModels: {Tesla V100-SXM2-32GB: {}}}\n"
    "  - {name: batch, weight: 1, gpuModels: {Tesla T4: {}, AMD Instinct MI300X OAM: {}}}\n"
)


def without_gpu_models(text: str) -> str:
    """``text`` with the base queues' ``gpuModels`` removed (for specs without node labels, where
    they would only add the warning that they have no effect)."""
    assert QUEUES_WITH_MODELS in text
    return text.replace(QUEUES_WITH_MODELS, "  - {name: stream, weight: 2}\n  - {name: batch, weight: 1}\n")


def yarn_files(path: Path) -> dict[str, str]:
    """Rendered ``yarn/…`` files of a spec: ``{path below yarn/: text}``."""
    return {p.removeprefix("yarn/"): t for p, (t, _) in files_for(path).items() if p.startswith("yarn/")}


def parse_configuration(text: str) -> list[tuple[str, str]]:
    """Parse a Hadoop Configuration file strictly: ``<configuration>`` of ``<property>`` elements
    with exactly ``<name>``, ``<value>`` and an optional ``<description>``; returns (name, value)."""
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == "configuration" and not (root.text or "").strip()
    out = []
    for prop in root:
        assert prop.tag == "property", prop.tag
        tags = [c.tag for c in prop]
        assert tags in (["name", "value"], ["name", "value", "description"]), tags
        assert all(len(c) == 0 for c in prop)
        out.append((prop.findtext("name") or "", prop.findtext("value") or ""))
    names = [n for n, _ in out]
    assert len(names) == len(set(names)), "duplicate property"
    return out


def parse_container_executor(text: str) -> dict[str, dict[str, str]]:
    """Parse a container-executor.cfg fragment: sections of ``key=value`` lines, nothing else."""
    for line in text.splitlines():
        assert line == "" or line.startswith(("#", "[")) or "=" in line, line
        if "=" in line:
            assert line == line.strip() and line.count("=") == 1, line
    parser = configparser.ConfigParser(interpolation=None, delimiters=("=",), comment_prefixes=("#",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(text)
    return {s: dict(parser[s]) for s in parser.sections()}
