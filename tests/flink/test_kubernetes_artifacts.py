"""Pod templates, PodGroups, FlinkDeployments and the submit ConfigMap, checked by real validators.

* pod templates: ``kubernetes-validate --strict`` as ``v1/Pod`` (what Flink merges them into);
* PodGroups: the upstream Volcano CRD schema (../shared/reference/volcano), strict;
* FlinkDeployments: the Flink Kubernetes Operator's own CRD (release-1.15.0,
  ../shared/reference/flink-kubernetes-operator), strict, and beside it
  tests/flink/operator_schema.py (the operator's admission rules on the fields we emit, plus the
  embedded pod templates through kubernetes-validate);
* the cross-checks users get wrong: every pod carries the group annotation of an existing
  PodGroup in its namespace and ``schedulerName: volcano``, minResources covers all pods.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from accelplane.builders import build_all
from accelplane.derive.flink_java import FLINK_JAVA17_OPTIONS
from accelplane.discovery_install import CONFIGMAP_KEY, MODULE_KEY, configmap_name
from accelplane.quantity import parse_quantity
from accelplane.render import bundle_files

from tests.conftest import EXAMPLE_SPECS
from tests.flink.operator_schema import validate_flink_deployment
from tests.flink.specs import KUBERNETES, variant
from tests.support.paths import REPO_ROOT
from tests.support.render import files_for
from tests.support.specs import model_of, write_spec
from tests.support.validators import validate_core_object, validate_crd_object

GROUP_ANNOTATION = "scheduling.k8s.io/group-name"


def _rendered(spec_path: Path) -> tuple[dict[str, tuple[str, int]], list[dict[str, Any]]]:
    files = files_for(spec_path)
    objects = [yaml.safe_load(text) for path, (text, _) in files.items() if path.startswith("kubernetes/")]
    return files, objects


def _pod_templates(files: dict[str, tuple[str, int]]) -> dict[str, dict[str, Any]]:
    return {
        path: yaml.safe_load(text) for path, (text, _) in files.items() if path.endswith("-pod-template.yaml")
    }


def _taskmanager_template(tmp_path: Path, data: dict[str, Any]) -> dict[str, Any]:
    """The rendered TaskManager pod template of the spec document ``data`` (cluster ``job1``)."""
    files = bundle_files(build_all(model_of(write_spec(tmp_path, data))))
    template: dict[str, Any] = yaml.safe_load(files["flink/job1/taskmanager-pod-template.yaml"][0])
    return template


@pytest.fixture(scope="module", params=EXAMPLE_SPECS, ids=[p.stem for p in EXAMPLE_SPECS])
def example(request: pytest.FixtureRequest) -> tuple[dict[str, tuple[str, int]], list[dict[str, Any]]]:
    return _rendered(request.param)


def test_examples_cover_every_target_and_format() -> None:
    seen_targets, seen_files = set(), set()
    for spec in EXAMPLE_SPECS:
        files, objects = _rendered(spec)
        seen_files |= {Path(p).name for p in files if p.startswith("flink/")}
        seen_targets |= {o["kind"] for o in objects if o["kind"] in ("FlinkDeployment", "PodGroup")}
        seen_targets |= {"yarn" for p, (t, _) in files.items() if "yarn.application.name" in t}
        seen_targets |= {"standalone" for p in files if "/taskmanagers/" in p}
    assert {"config.yaml", "flink-conf.yaml"} <= seen_files
    assert {"FlinkDeployment", "PodGroup", "yarn", "standalone"} <= seen_targets


Example = tuple[dict[str, tuple[str, int]], list[dict[str, Any]]]


def _of_kind(kind: str) -> Callable[[Example], list[dict[str, Any]]]:
    return lambda example: [o for o in example[1] if o["kind"] == kind]


# id -> (which rendered objects, their real validator)
VALIDATED: dict[str, tuple[Callable[[Example], list[dict[str, Any]]], Callable[[dict[str, Any]], None]]] = {
    "pod-templates-strict": (lambda example: list(_pod_templates(example[0]).values()), validate_core_object),
    "podgroups-volcano-crd": (_of_kind("PodGroup"), validate_crd_object),
    "flink-deployments-operator-crd": (_of_kind("FlinkDeployment"), validate_crd_object),
    "flink-deployments-admission-rules": (_of_kind("FlinkDeployment"), validate_flink_deployment),
}


@pytest.mark.parametrize(("select", "validate"), VALIDATED.values(), ids=VALIDATED.keys())
def test_rendered_objects_pass_their_validator(
    example: Example,
    select: Callable[[Example], list[dict[str, Any]]],
    validate: Callable[[dict[str, Any]], None],
) -> None:
    for obj in select(example):
        validate(obj)


def test_pod_templates_pass_kubernetes_validate_cli(tmp_path: Path) -> None:
    """The same through the `kubernetes-validate --strict` command line, as users run it."""
    paths = []
    for spec in EXAMPLE_SPECS:
        for path, (text, _) in files_for(spec).items():
            if path.endswith("-pod-template.yaml"):
                target = tmp_path / path.replace("/", "_")
                target.write_text(text, encoding="utf-8")
                paths.append(str(target))
    assert paths
    cli = Path(sys.executable).with_name("kubernetes-validate")
    proc = subprocess.run(
        [str(cli), "--strict", "-k", "1.33.0", *paths], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _pods_of(
    files: dict[str, tuple[str, int]], objects: list[dict[str, Any]]
) -> list[tuple[str, dict[str, Any]]]:
    """(namespace, pod template) of every Flink pod the rendered output would create."""
    pods: list[tuple[str, dict[str, Any]]] = []
    for path, template in _pod_templates(files).items():
        cluster = path.split("/")[1]
        namespace = next(
            o["metadata"]["namespace"]
            for o in objects
            if o["metadata"].get("labels", {}).get("accelplane.io/flink-cluster") == cluster
            and "namespace" in o["metadata"]
        )
        pods.append((namespace, template))
    for obj in objects:
        if obj["kind"] == "FlinkDeployment":
            for role in ("jobManager", "taskManager"):
                pods.append((obj["metadata"]["namespace"], obj["spec"][role]["podTemplate"]))
    return pods


def test_every_pod_joins_an_existing_podgroup(
    example: tuple[dict[str, tuple[str, int]], list[dict[str, Any]]],
) -> None:
    files, objects = example
    groups = {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objects if o["kind"] == "PodGroup"}
    for namespace, pod in _pods_of(files, objects):
        assert pod["spec"]["containers"][0]["name"] == "flink-main-container"
        if pod["spec"]["schedulerName"] == "yunikorn":  # gang by task groups: no PodGroup (tests/yunikorn)
            assert not groups and GROUP_ANNOTATION not in pod["metadata"]["annotations"]
            assert pod["metadata"]["labels"]["applicationId"]
            continue
        if pod["spec"]["schedulerName"] == "default-scheduler":  # Kueue: no gang, a LocalQueue (tests/kueue)
            assert not groups and GROUP_ANNOTATION not in pod["metadata"]["annotations"]
            queue = pod["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]
            assert any(
                o["kind"] == "LocalQueue" and (o["metadata"]["namespace"], o["metadata"]["name"]) == (namespace, queue)
                for o in objects
            )
            continue
        assert (namespace, pod["metadata"]["annotations"][GROUP_ANNOTATION]) in groups
        assert pod["spec"]["schedulerName"] == "volcano"


def test_min_resources_cover_jobmanager_and_all_taskmanagers(tmp_path: Path) -> None:
    spec_path = write_spec(tmp_path, variant(KUBERNETES))
    _, objects = _rendered(spec_path)
    (group,) = [o for o in objects if o["kind"] == "PodGroup"]
    assert group["metadata"] == {
        "name": "podgroup-job1",
        "namespace": "flink",
        "labels": {
            "accelplane.io/cluster": "test",
            "accelplane.io/flink-cluster": "job1",
            "app.kubernetes.io/managed-by": "accelplane",
        },
    }
    assert group["spec"] == {
        "minMember": 1,
        "minResources": {"cpu": "9", "memory": "18Gi", "nvidia.com/gpu": "4"},
        "queue": "streaming",
        "priorityClassName": "flink-critical",
    }


def test_min_resources_exact_for_fractional_cpu(tmp_path: Path) -> None:
    tm = {"replicas": 3, "slots": 1, "cpu": "1500m", "memory": "1600Mi", "gpu": {"amount": 1, "pool": "a100"}}
    spec = model_of(
        write_spec(
            tmp_path, variant(KUBERNETES, jobManager={"cpu": "250m", "memory": "1728Mi"}, taskManager=tm)
        )
    )
    (group,) = [o.manifest for o in build_all(spec).objects if o.kind == "PodGroup"]
    res = group["spec"]["minResources"]
    assert parse_quantity(res["cpu"]) == Decimal("4.75")
    assert parse_quantity(res["memory"]) == (1728 + 3 * 1600) * 2**20
    assert res["nvidia.com/gpu"] == "3"


def test_taskmanager_template_gpu_wiring(tmp_path: Path) -> None:
    spec = model_of(write_spec(tmp_path, variant(KUBERNETES)))
    files = bundle_files(build_all(spec))
    tm = yaml.safe_load(files["flink/job1/taskmanager-pod-template.yaml"][0])
    jm = yaml.safe_load(files["flink/job1/jobmanager-pod-template.yaml"][0])
    assert tm["metadata"]["annotations"][GROUP_ANNOTATION] == "podgroup-job1"
    assert jm["metadata"]["annotations"][GROUP_ANNOTATION] == "podgroup-job1"
    # issue 15: what checkov would flag and Flink decides is explained; the init container's root+CHOWN too
    tm_skips = {v.split("=", 1)[0] for k, v in tm["metadata"]["annotations"].items() if k.startswith("checkov.io/")}
    jm_skips = {v.split("=", 1)[0] for k, v in jm["metadata"]["annotations"].items() if k.startswith("checkov.io/")}
    assert tm_skips - jm_skips == {"CKV_K8S_23", "CKV_K8S_25", "CKV_K8S_37"}
    for pod in (tm, jm):
        assert pod["spec"]["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}
        assert pod["spec"]["containers"][0]["securityContext"] == {
            "runAsUser": 9999,
            "runAsGroup": 9999,
            "runAsNonRoot": True,
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
        }
    assert tm["spec"]["priorityClassName"] == jm["spec"]["priorityClassName"] == "flink-critical"
    assert tm["spec"]["nodeSelector"] == {"accelplane.io/pool": "a100"}
    assert tm["spec"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
    ]
    assert (
        "nodeSelector" not in jm["spec"] and "tolerations" not in jm["spec"] and "volumes" not in jm["spec"]
    )
    (container,) = tm["spec"]["containers"]
    assert container["volumeMounts"] == [
        {
            "name": "accelplane-gpu-discovery",
            "mountPath": "/opt/flink/plugins/external-resource-gpu/accelplane-gpu-discovery",
            "subPath": CONFIGMAP_KEY,
            "readOnly": True,
        },
        {
            "name": "accelplane-gpu-discovery-module",
            "mountPath": "/opt/accelplane/discovery/accelplane_gpu_discovery.py",
            "subPath": MODULE_KEY,
            "readOnly": True,
        },
        # the preflight init container fills it; the TaskManager only reads it
        {"name": "accelplane-gpu-discovery-bytecode", "mountPath": "/opt/accelplane/bytecode", "readOnly": True},
        {"name": "accelplane-gpu-coordination", "mountPath": "/var/lib/accelplane"},
    ]
    assert {"name": "CUDA_DEVICE_ORDER", "value": "PCI_BUS_ID"} in container["env"]
    volumes = {v["name"]: v for v in tm["spec"]["volumes"]}
    assert volumes["accelplane-gpu-discovery"]["configMap"]["name"] == configmap_name()
    assert volumes["accelplane-gpu-discovery"]["configMap"]["defaultMode"] == 0o555
    assert volumes["accelplane-gpu-discovery-module"]["configMap"] == {
        "name": configmap_name(),
        "defaultMode": 0o444,
        "items": [{"key": MODULE_KEY, "path": MODULE_KEY}],
    }
    assert volumes["accelplane-gpu-discovery-bytecode"] == {
        "name": "accelplane-gpu-discovery-bytecode",
        "emptyDir": {"medium": "Memory", "sizeLimit": "8Mi"},
    }
    assert volumes["accelplane-gpu-coordination"]["hostPath"] == {
        "path": "/var/lib/accelplane",
        "type": "DirectoryOrCreate",
    }
    init, preflight = tm["spec"]["initContainers"]
    assert preflight["name"] == "accelplane-gpu-preflight"  # tests/flink/test_taskmanager_preflight.py
    assert init["command"][:2] == ["sh", "-c"]
    assert init["command"][3:] == ["accelplane-coordination-dir", "/var/lib/accelplane"]  # path is $1
    assert init["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": ["CHOWN"]}
    assert init["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert init["securityContext"]["allowPrivilegeEscalation"] is False
    assert init["securityContext"]["readOnlyRootFilesystem"] is True
    assert init["volumeMounts"] == [
        {"name": "accelplane-gpu-coordination", "mountPath": "/var/lib/accelplane"}
    ]
    validate_core_object(tm)
    assert "resources" not in container  # Flink sets requests/limits (incl. GPUs) itself


def test_no_coordination_no_hostpath(tmp_path: Path) -> None:
    tm = _taskmanager_template(tmp_path, variant(KUBERNETES, discovery={"coordination": False}))
    assert [v["name"] for v in tm["spec"]["volumes"]] == [
        "accelplane-gpu-discovery",
        "accelplane-gpu-discovery-module",
        "accelplane-gpu-discovery-bytecode",
    ]
    assert [c["name"] for c in tm["spec"]["initContainers"]] == ["accelplane-gpu-preflight"]
    validate_core_object(tm)


def test_model_selection_and_several_pools(tmp_path: Path) -> None:
    data = variant(
        KUBERNETES,
        taskManager={
            "replicas": 2,
            "slots": 1,
            "cpu": 4,
            "memory": "8Gi",
            "gpu": {"amount": 1, "model": "NVIDIA A100-SXM4-80GB"},
        },
    )
    second = {**data["nodePools"][0], "name": "a100-spot", "labels": {"accelplane.io/pool": "a100-spot"}}
    second["taints"] = [{"key": "spot", "effect": "NoSchedule"}]
    data["nodePools"].append(second)
    tm = _taskmanager_template(tmp_path, data)
    product = {"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-A100-SXM4-80GB"]}
    assert "nodeSelector" not in tm["spec"]
    terms = tm["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert terms == [
        {"matchExpressions": [{"key": "accelplane.io/pool", "operator": "In", "values": ["a100"]}, product]},
        {
            "matchExpressions": [
                {"key": "accelplane.io/pool", "operator": "In", "values": ["a100-spot"]},
                product,
            ]
        },
    ]
    assert tm["spec"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"},
        {"key": "spot", "operator": "Exists", "effect": "NoSchedule"},
    ]
    validate_core_object(tm)


def test_mig_resource_in_config_and_podgroup(tmp_path: Path) -> None:
    data = variant(
        KUBERNETES,
        taskManager={
            "replicas": 4,
            "slots": 1,
            "cpu": 4,
            "memory": "8Gi",
            "gpu": {"amount": 1, "pool": "a100"},
        },
    )
    data["nodePools"][0]["gpu"]["mig"] = {"strategy": "mixed", "devices": {"3g.40gb": 2}}
    capability = data["queues"][0]["capability"]
    capability["nvidia.com/mig-3g.40gb"] = capability.pop("nvidia.com/gpu")
    spec = model_of(write_spec(tmp_path, data))
    bundle = build_all(spec)
    (group,) = [o.manifest for o in bundle.objects if o.kind == "PodGroup"]
    assert group["spec"]["minResources"]["nvidia.com/mig-3g.40gb"] == "4"
    config = yaml.safe_load(bundle_files(bundle)["flink/job1/config.yaml"][0])
    assert config["external-resource.gpu.kubernetes.config-key"] == "nvidia.com/mig-3g.40gb"


def test_native_submit_configmap(tmp_path: Path) -> None:
    files, objects = _rendered(write_spec(tmp_path, variant(KUBERNETES)))
    (cm,) = [
        o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "accelplane-flink-job1"
    ]
    validate_core_object(cm)
    assert cm["data"] == {
        "config.yaml": files["flink/job1/config.yaml"][0],
        "jobmanager-pod-template.yaml": files["flink/job1/jobmanager-pod-template.yaml"][0],
        "taskmanager-pod-template.yaml": files["flink/job1/taskmanager-pod-template.yaml"][0],
    }
    config = yaml.safe_load(cm["data"]["config.yaml"])
    for key, name in (
        ("jobmanager", "jobmanager-pod-template.yaml"),
        ("taskmanager", "taskmanager-pod-template.yaml"),
    ):
        assert config[f"kubernetes.pod-template-file.{key}"] == f"/opt/flink/accelplane/{name}"


def test_operator_deployment(tmp_path: Path) -> None:
    job = {
        "jarURI": "local:///opt/flink/usrlib/job.jar",
        "entryClass": "a.B",
        "args": ["--x", "1"],
        "parallelism": 4,
    }
    spec = model_of(
        write_spec(
            tmp_path,
            variant(
                KUBERNETES, target="kubernetes-operator", job=job, config={"pipeline.max-parallelism": 128}
            ),
        )
    )
    bundle = build_all(spec)
    (dep,) = [o.manifest for o in bundle.objects if o.kind == "FlinkDeployment"]
    assert dep["metadata"]["name"] == "job1" and dep["metadata"]["namespace"] == "flink"
    s = dep["spec"]
    assert s["flinkVersion"] == "v1_20"
    assert s["serviceAccount"] == "flink"
    assert s["jobManager"]["resource"] == {"cpu": 1.0, "memory": "2048m"}
    assert s["taskManager"]["resource"] == {"cpu": 4.0, "memory": "8192m"}
    assert s["taskManager"]["replicas"] == 2
    assert s["job"] == {**job, "state": "running", "upgradeMode": "stateless"}
    assert s["flinkConfiguration"] == {
        "env.java.opts.all": " ".join(FLINK_JAVA17_OPTIONS),
        "external-resource.gpu.amount": "2",
        "external-resource.gpu.driver-factory.class": "org.apache.flink.externalresource.gpu.GPUDriverFactory",
        "external-resource.gpu.kubernetes.config-key": "nvidia.com/gpu",
        "external-resource.gpu.param.discovery-script.args": (
            "--enable-coordination-mode --coordination-file /var/lib/accelplane/gpu-coordination --file-mode 0660 --isolated-devices"
        ),
        "external-resource.gpu.param.discovery-script.path": (
            "/opt/flink/plugins/external-resource-gpu/accelplane-gpu-discovery"
        ),
        "external-resources": "gpu",
        "pipeline.max-parallelism": "128",
        "taskmanager.numberOfTaskSlots": "2",
    }
    files = bundle_files(bundle)
    assert not [p for p in files if p.endswith(("config.yaml", "flink-conf.yaml"))]
    for role, name in (("jobManager", "jobmanager"), ("taskManager", "taskmanager")):
        on_disk = yaml.safe_load(files[f"flink/job1/{name}-pod-template.yaml"][0])
        assert s[role]["podTemplate"] == on_disk


def _init_argv(tmp_path: Path) -> list[str]:
    tm = _taskmanager_template(tmp_path, variant(KUBERNETES))
    (init,) = [c for c in tm["spec"]["initContainers"] if c["name"] == "accelplane-coordination-dir"]
    return list(init["command"])


def test_coordination_init_container_program_is_shellcheck_clean(tmp_path: Path) -> None:
    from tests.support.validators import tool

    program = tmp_path / "init.sh"
    program.write_text(_init_argv(tmp_path)[2])
    proc = subprocess.run([tool("shellcheck"), "-S", "style", "--shell=sh", str(program)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


def test_coordination_init_container_command_prepares_the_directory(tmp_path: Path) -> None:
    """Run the init container's exact argv (POSIX sh and coreutils, as in the Flink image) against a
    directory as kubelet leaves it (root-owned, empty), then again on the prepared one; a directory
    kubelet did not just create (not empty, foreign owner, symlink) is refused and left unchanged."""
    import os

    if os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("CI must run as root: this test chowns like the init container does")
        pytest.skip("needs root to chown, as the init container does")
    argv = _init_argv(tmp_path)
    target = tmp_path / "node" / "var-lib-accelplane"
    target.mkdir(parents=True, mode=0o755)
    for _ in range(2):  # idempotent
        subprocess.run([*argv[:-1], str(target)], check=True)
        st = target.stat()
        assert (st.st_uid, st.st_gid, oct(st.st_mode & 0o7777)) == (9999, 9999, "0o2770")

    # A directory someone else owns or uses (e.g. /etc if the spec's check were bypassed).
    used = tmp_path / "node" / "etc"
    used.mkdir(mode=0o755)
    (used / "sudoers").write_text("root ALL=(ALL) ALL\n")
    foreign = tmp_path / "node" / "foreign"
    foreign.mkdir(mode=0o700)
    os.chown(foreign, 1234, 1234)
    link = tmp_path / "node" / "link"
    link.symlink_to(used)
    for victim in (used, foreign, link):
        before = victim.lstat()
        proc = subprocess.run([*argv[:-1], str(victim)], capture_output=True, text=True)
        assert proc.returncode == 1
        assert "accelplane:" in proc.stderr and str(victim) in proc.stderr
        after = victim.lstat()
        assert (after.st_uid, after.st_gid, after.st_mode) == (before.st_uid, before.st_gid, before.st_mode)
    assert used.stat().st_uid == 0 and (used.stat().st_mode & 0o7777) == 0o755


def test_a_pod_template_is_built_once_per_spec_cluster_and_role() -> None:
    """`pod_template` is shared by the Flink, operator and Namespaces builders (`Spec.memo`):
    the same spec, cluster and role give the same dict; another cluster object (even one with the
    same name) or another spec gets its own; building every artifact changes none of them and
    drops them afterwards (they do not outlive the build)."""
    import dataclasses

    from accelplane.builders.pod_templates import pod_template

    spec = model_of(REPO_ROOT / "stacks" / "prod-eu.yaml")
    cluster = next(c for c in spec.flink_clusters if c.target in ("kubernetes", "kubernetes-operator"))
    tm = pod_template(spec, cluster, "taskmanager")
    assert pod_template(spec, cluster, "taskmanager") is tm
    assert pod_template(spec, cluster, "jobmanager") is not tm
    renamed = dataclasses.replace(cluster, namespace="elsewhere-ns")
    assert pod_template(spec, renamed, "taskmanager") is not tm
    fresh = model_of(REPO_ROOT / "stacks" / "prod-eu.yaml")
    assert pod_template(fresh, cluster, "taskmanager") is not tm
    snapshot = yaml.safe_dump(tm)
    build_all(spec)  # uses the shared templates without changing them, then drops them
    assert yaml.safe_dump(tm) == snapshot
    again = pod_template(spec, cluster, "taskmanager")
    assert again is not tm and again == tm == pod_template(fresh, cluster, "taskmanager")
