"""YARN GPU configuration files from the spec (docs/yarn.md).

``DIR/yarn/``:

* ``resource-types.xml`` — ResourceManager, NodeManagers and clients: the GPU types and their
  allocation bounds.
* ``capacity-scheduler.xml`` — ResourceManager: DominantResourceCalculator and the queue tree.
* ``node-resources/<pool>.xml`` — NodeManagers of a ``platform: yarn`` pool: per-type amounts.
* ``yarn-site/<pool>.xml`` — NodeManager ``yarn-site.xml`` fragment of that pool: container
  executor, cgroups, GPU plugin, Docker runtime.
* ``container-executor/<pool>.cfg`` — ``[gpu]``, ``[cgroups]``, ``[docker]`` sections of that pool's
  ``container-executor.cfg``; ``install-container-executor-cfg.sh`` merges them into a NodeManager's
  file (before the site's sections, root-owned 0400, parents checked as container-executor does).
* with ``yarn.maximumAllocation`` or ``yarn.nodeLabels``: ``resourcemanager/yarn-site.xml`` (the
  scheduler's maximum allocation; node labels on, distributed configuration) and, with node labels,
  ``resourcemanager/cluster-node-labels.txt`` (the argument of ``yarn rmadmin -addToClusterNodeLabels``);
  labelled pools' yarn-site fragments name their partition.

Per-pool files exist because allowed GPU devices and Docker device lists differ between pools.
Nothing is rendered for clusters whose ``platforms`` do not include ``yarn``.
"""

from __future__ import annotations

from collections.abc import Iterable

from accelplane.artifacts import Bundle, FileArtifact
from accelplane.derive.node_fit import Resource, yarn_maximum_allocation, yarn_nodemanager_offer
from accelplane.derive.yarn_am_limit import capacity_scheduler_properties
from accelplane.derive.yarn_capacity import plan_queues
from accelplane.derive.yarn_docker import (
    CFG_PATH,
    DEFAULT_NETWORK,
    NM_DOCKER_CAPABILITIES,
    allowed_mounts,
    docker_clusters,
    trusted_registries,
)
from accelplane.derive.yarn_labels import add_to_cluster_argument, cluster_labels, pool_label
from accelplane.derive.yarn_types import (
    NM_RESOURCE_PREFIX,
    RESOURCE_TYPES_KEY,
    ConfProperty,
    needed_types,
    node_amounts,
    type_bounds,
    uses_gpu_plugin,
    yarn_pools,
)
from accelplane.model import NodePool, Spec
from accelplane.templating import render_template

FAMILY = "yarn"
LINUX_CONTAINER_EXECUTOR = "org.apache.hadoop.yarn.server.nodemanager.LinuxContainerExecutor"
CGROUPS_HANDLER = "org.apache.hadoop.yarn.server.nodemanager.util.CgroupsLCEResourcesHandler"
NVIDIA_DOCKER_PLUGIN = "nvidia-docker-v2"
NVIDIA_CONTROL_DEVICES = ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools")
NM = "yarn.nodemanager."
LCE = f"{NM}linux-container-executor."
GPU_PLUGIN = f"{NM}resource-plugins.gpu."
DOCKER_RUNTIME = f"{NM}runtime.linux.docker."


CFG_MERGE_RULE = (
    "Sections of container-executor.cfg for the NodeManagers of the node pool named like this file.\n"
    "# Merge: put them after the site's top-level keys (yarn.nodemanager.linux-container-executor.group,\n"
    "# banned.users, min.user.id, allowed.system.users: before any [section]) and delete the site's own\n"
    "# copies of these keys. container-executor merges repeated sections and reads the FIRST occurrence\n"
    "# of a key, so a key the site sets earlier wins (Hadoop 3.4.1 configuration.c:454-474, 520-524,\n"
    "# 561-572). install-container-executor-cfg.sh does this and installs the file root-owned, 0400, in\n"
    "# directories only root can write (configuration.c:82-100, 137-159; docs/yarn.md)."
)
"""The header of each rendered ``container-executor/<pool>.cfg``: how it is merged with a site's file."""
_MAXIMUM_ALLOCATION_KEYS: tuple[tuple[Resource, str, str], ...] = (
    ("memory", "yarn.scheduler.maximum-allocation-mb", "largest container (MiB): yarn.maximumAllocation.memory"),
    ("cpu", "yarn.scheduler.maximum-allocation-vcores", "largest container (vcores): yarn.maximumAllocation.vcores"),
)
"""The ResourceManager's keys of `yarn_maximum_allocation`, written where the spec sets them."""
_NODEMANAGER_OFFER_KEYS: tuple[tuple[Resource, str], ...] = (("memory", "memory-mb"), ("cpu", "cpu-vcores"))
"""``yarn.nodemanager.resource.<key>`` of `yarn_nodemanager_offer`, written where the pool sets it."""


def _xml(path: str, purpose: str, properties: Iterable[ConfProperty]) -> FileArtifact:
    text = render_template("yarn/configuration.xml.j2", purpose=purpose, properties=list(properties))
    return FileArtifact(path=f"yarn/{path}", text=text, family=FAMILY)


def resource_types_properties(spec: Spec) -> list[ConfProperty]:
    """``resource-types.xml``: the type list, then the bounds the spec sets (never units)."""
    types = needed_types(spec)
    props = [
        ConfProperty(
            RESOURCE_TYPES_KEY,
            ",".join(types),
            "GPU types derived from the YARN node pools and Flink clusters",
        )
    ]
    bounds = type_bounds(spec)
    for t in types:
        b = bounds.get(t)
        if b is None:
            continue
        if b.minimum_allocation is not None:
            props.append(
                ConfProperty(f"{RESOURCE_TYPES_KEY}.{t}.minimum-allocation", str(b.minimum_allocation))
            )
        if b.maximum_allocation is not None:
            props.append(
                ConfProperty(f"{RESOURCE_TYPES_KEY}.{t}.maximum-allocation", str(b.maximum_allocation))
            )
    return props


def resourcemanager_site_properties(spec: Spec) -> list[ConfProperty]:
    """ResourceManager ``yarn-site.xml`` fragment: the scheduler's maximum allocation the spec sets
    (``yarn.maximumAllocation``; unset keys keep Hadoop's defaults) and node labels with distributed
    configuration (each NodeManager reports its partition from its own yarn-site); empty when the
    spec sets neither."""
    maximum = yarn_maximum_allocation(spec)
    props = [
        ConfProperty(key, str(maximum[res][0]), why) for res, key, why in _MAXIMUM_ALLOCATION_KEYS if maximum[res][1]
    ]
    if not cluster_labels(spec):
        return props
    return [
        *props,
        ConfProperty("yarn.node-labels.enabled", "true", "one node partition per GPU model"),
        ConfProperty(
            "yarn.node-labels.configuration-type",
            "distributed",
            "NodeManagers report their partition (yarn.nodemanager.node-labels.provider=config)",
        ),
    ]


def node_resources_properties(spec: Spec, pool: NodePool) -> list[ConfProperty]:
    """``node-resources.xml`` of a pool: every declared GPU type, 0 where the pool has none."""
    return [ConfProperty(f"{NM_RESOURCE_PREFIX}{t}", str(n)) for t, n in node_amounts(spec, pool).items()]


def allowed_gpu_devices(pool: NodePool) -> str:
    """``auto`` or the pool's ``index:minor`` list in index order."""
    if pool.gpu is None or not pool.gpu.allowed_devices:
        return "auto"
    pairs = sorted(tuple(int(x) for x in d.split(":")) for d in pool.gpu.allowed_devices)
    return ",".join(f"{i}:{m}" for i, m in pairs)


def gpu_device_files(pool: NodePool) -> list[str]:
    """``/dev/nvidia<minor>`` of the GPUs a NodeManager hands out (minor = index under ``auto``)."""
    if pool.gpu is None or pool.gpu.vendor != "nvidia":
        return []
    if pool.gpu.allowed_devices:
        minors = sorted({int(d.split(":")[1]) for d in pool.gpu.allowed_devices})
    else:
        minors = list(range(pool.gpu.per_node))
    return [f"/dev/nvidia{m}" for m in minors]


def yarn_site_properties(spec: Spec, pool: NodePool) -> list[ConfProperty]:
    """NodeManager ``yarn-site.xml`` fragment of a pool."""
    y = spec.yarn
    assert y is not None
    props = [
        ConfProperty(
            f"{NM}container-executor.class", LINUX_CONTAINER_EXECUTOR, "cgroups isolation needs the LCE"
        ),
        ConfProperty(f"{LCE}resources-handler.class", CGROUPS_HANDLER),
        ConfProperty(f"{LCE}cgroups.mount", "false", "cgroups are mounted by the OS"),
        ConfProperty(f"{LCE}cgroups.mount-path", y.cgroups_mount_path),
        ConfProperty(f"{LCE}cgroups.hierarchy", y.cgroups_hierarchy, "same as [cgroups] yarn-hierarchy"),
        ConfProperty(
            f"{LCE}cgroups.v2.enabled", "true" if y.cgroups == "v2" else "false", f"cgroups {y.cgroups}"
        ),
    ]
    offer = yarn_nodemanager_offer(pool)
    props += [
        ConfProperty(f"{NM}resource.{key}", str(offer[res][0]), f"nodePools[].{res}: what containers may use")
        for res, key in _NODEMANAGER_OFFER_KEYS
        if offer[res][1]
    ]
    if uses_gpu_plugin(pool):
        props += [
            ConfProperty(f"{NM}resource-plugins", "yarn.io/gpu", "GPU discovery and isolation"),
            ConfProperty(f"{GPU_PLUGIN}allowed-gpu-devices", allowed_gpu_devices(pool)),
            ConfProperty(f"{GPU_PLUGIN}path-to-discovery-executables", y.nvidia_smi_path),
        ]
    label = pool_label(spec, pool)
    if label is not None:
        props += [
            ConfProperty(f"{NM}node-labels.provider", "config", "this pool's GPU-model partition"),
            ConfProperty(f"{NM}node-labels.provider.configured-node-partition", label),
        ]
    if y.docker_enabled:
        props.append(ConfProperty(f"{NM}runtime.linux.allowed-runtimes", "default,docker"))
        props += [
            ConfProperty(f"{NM}local-dirs", ",".join(y.local_dirs), "yarn.localDirs: allowed rw in container-executor.cfg"),
            ConfProperty(f"{NM}log-dirs", ",".join(y.log_dirs), "yarn.logDirs: allowed rw in container-executor.cfg"),
            ConfProperty(
                f"{DOCKER_RUNTIME}capabilities",
                ",".join(NM_DOCKER_CAPABILITIES),
                "Hadoop's default list, written out: docker.allowed.capabilities must hold every one",
            ),
            ConfProperty(f"{DOCKER_RUNTIME}allowed-container-networks", DEFAULT_NETWORK),
            ConfProperty(
                f"{DOCKER_RUNTIME}default-container-network", DEFAULT_NETWORK, "as docker.allowed.networks"
            ),
        ]
        if uses_gpu_plugin(pool):
            props.append(
                ConfProperty(
                    f"{GPU_PLUGIN}docker-plugin",
                    NVIDIA_DOCKER_PLUGIN,
                    "starts GPU containers with --runtime=nvidia and NVIDIA_VISIBLE_DEVICES",
                )
            )
    return props


def _docker_entries(spec: Spec, pool: NodePool) -> list[tuple[str, str]]:
    """The ``[docker]`` keys container-executor needs to run every Flink container that may land on
    the pool as the NodeManager asks for it (checked against Hadoop 3.4.1's docker-util.c in
    tests/yarn/test_container_executor.py): sorted by key, empty lists left out."""
    y = spec.yarn
    assert y is not None
    auto = [*NVIDIA_CONTROL_DEVICES, *gpu_device_files(pool)] if uses_gpu_plugin(pool) else []
    devices = auto + [d for d in sorted(set(y.docker_allowed_devices)) if d not in auto]
    allowed = allowed_mounts(spec, pool)
    runs_flink = bool(docker_clusters(spec))
    entries = {
        "module.enabled": "true",
        "docker.allowed.capabilities": ",".join(NM_DOCKER_CAPABILITIES),
        "docker.allowed.devices": ",".join(devices),
        "docker.allowed.networks": DEFAULT_NETWORK,
        "docker.allowed.ro-mounts": ",".join(allowed["ro"]),
        "docker.allowed.runtimes": "nvidia" if uses_gpu_plugin(pool) and y.docker_runtime == "nvidia" else "",
        "docker.allowed.rw-mounts": ",".join(allowed["rw"]),
        "docker.trusted.registries": ",".join(trusted_registries(spec)) if runs_flink else "",
    }
    return [(k, v) for k, v in entries.items() if v]


def container_executor_sections(spec: Spec, pool: NodePool) -> list[tuple[str, list[tuple[str, str]]]]:
    """``container-executor.cfg`` sections of a pool as ``(section, [(key, value)])``."""
    y = spec.yarn
    assert y is not None
    sections: list[tuple[str, list[tuple[str, str]]]] = []
    if uses_gpu_plugin(pool):
        sections.append(("gpu", [("module.enabled", "true")]))
    sections.append(("cgroups", [("root", y.cgroups_mount_path), ("yarn-hierarchy", y.cgroups_hierarchy)]))
    if y.docker_enabled:
        sections.append(("docker", _docker_entries(spec, pool)))
    for _, entries in sections:
        for key, value in entries:
            if any(c in value for c in "\n\r=") or any(c in key for c in "\n\r=[]"):
                raise ValueError(f"unsafe container-executor.cfg entry {key}={value!r}")  # schema forbids it
    return sections


def build(spec: Spec) -> Bundle:
    """Every YARN file of a cluster whose platforms include ``yarn``."""
    bundle = Bundle()
    if not spec.has_platform("yarn") or spec.yarn is None:
        return bundle
    plan = plan_queues(spec)
    bundle.files.append(
        _xml(
            "resource-types.xml",
            "resource-types.xml for the ResourceManager, every NodeManager and clients",
            resource_types_properties(spec),
        )
    )
    bundle.files.append(
        _xml(
            "capacity-scheduler.xml",
            f"capacity-scheduler.xml for the ResourceManager ({plan.mode} queue capacities)",
            capacity_scheduler_properties(spec, plan),
        )
    )
    rm_site = resourcemanager_site_properties(spec)
    if rm_site:
        bundle.files.append(
            _xml(
                "resourcemanager/yarn-site.xml",
                "yarn-site.xml properties for the ResourceManager ("
                + ", ".join(
                    what
                    for what, present in (
                        ("maximum allocation", any(p.name.startswith("yarn.scheduler.") for p in rm_site)),
                        ("node labels", bool(cluster_labels(spec))),
                    )
                    if present
                )
                + ")",
                rm_site,
            )
        )
    if cluster_labels(spec):
        bundle.files.append(
            FileArtifact(
                path="yarn/resourcemanager/cluster-node-labels.txt",
                text=add_to_cluster_argument(spec) + "\n",
                family=FAMILY,
            )
        )
    if yarn_pools(spec):
        bundle.files.append(
            FileArtifact(
                path="yarn/install-container-executor-cfg.sh",
                text=render_template(
                    "yarn/install-container-executor-cfg.sh.j2", spec_name=spec.name, default_target=CFG_PATH
                ),
                mode=0o755,
                family=FAMILY,
            )
        )
    for pool in yarn_pools(spec):
        bundle.files.append(
            _xml(
                f"node-resources/{pool.name}.xml",
                "node-resources.xml for the NodeManagers of the node pool named like this file",
                node_resources_properties(spec, pool),
            )
        )
        bundle.files.append(
            _xml(
                f"yarn-site/{pool.name}.xml",
                "yarn-site.xml properties for the NodeManagers of the node pool named like this file",
                yarn_site_properties(spec, pool),
            )
        )
        text = render_template(
            "yarn/container-executor.cfg.j2",
            purpose=CFG_MERGE_RULE,
            sections=[{"name": n, "entries": e} for n, e in container_executor_sections(spec, pool)],
        )
        bundle.files.append(
            FileArtifact(path=f"yarn/container-executor/{pool.name}.cfg", text=text, family=FAMILY)
        )
    return bundle
