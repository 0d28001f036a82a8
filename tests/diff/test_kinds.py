"""Per-kind differs on hand-made trees (kinds that other families will render)."""

from __future__ import annotations

import textwrap

import pytest
from accelplane.diff import compare_trees
from accelplane.diff.artifacts import diff_trees
from accelplane.diff.changes import ArtifactDiff, Change, DiffInputError, Tree, classify
from accelplane.diff.formats import format_text
from accelplane.diff.values import diff_values, parse_flink_legacy, parse_ini, unified


def tree(**files: str) -> Tree:
    """``tree(**{"a/b.yaml": text})`` with dedented texts and mode 0644."""
    return {path: (textwrap.dedent(text).lstrip("\n"), 0o644) for path, text in files.items()}


def only(artifacts: list[ArtifactDiff]) -> ArtifactDiff:
    assert len(artifacts) == 1, artifacts
    return artifacts[0]


def pairs(changes: tuple[Change, ...] | list[Change]) -> list[tuple[str, str, object, object]]:
    return [(c.op, c.path, c.old, c.new) for c in changes]


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("kubernetes/queue__a.yaml", "kubernetes"),
        ("yarn/resource-types.xml", "hadoop-xml"),
        ("flink/x/config.yaml", "flink-config"),
        ("flink/x/flink-conf.yaml", "flink-config"),
        ("yarn/container-executor.cfg", "ini"),
        ("flink/x/pod-template-taskmanager.yaml", "yaml"),
        ("node-image/Dockerfile", "text"),
        ("node/cloud-init.yaml", "yaml"),
        ("node/install.sh", "text"),
    ],
)
def test_dispatch_by_path(path: str, kind: str) -> None:
    assert classify(path) == kind


# -- Kubernetes -------------------------------------------------------------------------------------

DS = """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: plugin, namespace: kube-system}
spec:
  template:
    spec:
      containers:
      - {name: main, image: "img:1", args: [--a, --b]}
      - {name: side, image: "side:1"}
      tolerations:
      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
      - {key: nvidia.com/gpu, operator: Exists, effect: NoExecute}
      volumes:
      - {name: dev, hostPath: {path: /dev}}
"""


def test_objects_are_matched_by_identity_not_filename() -> None:
    old = tree(**{"kubernetes/a.yaml": DS})
    new = tree(**{"kubernetes/renamed-file.yaml": DS})
    assert diff_trees(old, new) == []


def test_named_list_elements_are_matched_by_name() -> None:
    changed = DS.replace('image: "img:1"', 'image: "img:2"').replace(
        "- {name: dev, hostPath: {path: /dev}}", "- {name: cfg, configMap: {name: c}}"
    )
    a = only(diff_trees(tree(**{"kubernetes/a.yaml": DS}), tree(**{"kubernetes/a.yaml": changed})))
    assert (a.kind, a.ident, a.status) == ("kubernetes", "DaemonSet kube-system/plugin", "changed")
    assert pairs(a.changes) == [
        ("changed", "spec.template.spec.containers[name=main].image", "img:1", "img:2"),
        (
            "removed",
            "spec.template.spec.volumes[name=dev]",
            {"name": "dev", "hostPath": {"path": "/dev"}},
            None,
        ),
        ("added", "spec.template.spec.volumes[name=cfg]", None, {"name": "cfg", "configMap": {"name": "c"}}),
    ]


def test_tolerations_with_the_same_key_are_matched_by_key_and_effect() -> None:
    changed = DS.replace(
        "operator: Exists, effect: NoExecute", "operator: Equal, value: 'on', effect: NoExecute"
    )
    a = only(diff_trees(tree(**{"kubernetes/a.yaml": DS}), tree(**{"kubernetes/a.yaml": changed})))
    sel = "spec.template.spec.tolerations[key=nvidia.com/gpu,effect=NoExecute]"
    assert pairs(a.changes) == [
        ("changed", f"{sel}.operator", "Exists", "Equal"),
        ("added", f"{sel}.value", None, "on"),
    ]


def test_scalar_lists_report_inserted_and_removed_elements() -> None:
    changed = DS.replace("args: [--a, --b]", "args: [--x, --a, --b]")
    a = only(diff_trees(tree(**{"kubernetes/a.yaml": DS}), tree(**{"kubernetes/a.yaml": changed})))
    assert pairs(a.changes) == [("added", "spec.template.spec.containers[name=main].args[0]", None, "--x")]


def test_reordered_named_list_reports_only_the_order() -> None:
    changed = DS.replace(
        '- {name: main, image: "img:1", args: [--a, --b]}\n      - {name: side, image: "side:1"}',
        '- {name: side, image: "side:1"}\n      - {name: main, image: "img:1", args: [--a, --b]}',
    )
    assert changed != DS
    a = only(diff_trees(tree(**{"kubernetes/a.yaml": DS}), tree(**{"kubernetes/a.yaml": changed})))
    assert pairs(a.changes) == [
        (
            "changed",
            "spec.template.spec.containers (order)",
            ["[name=main]", "[name=side]"],
            ["[name=side]", "[name=main]"],
        )
    ]


def test_unkeyed_lists_of_maps_fall_back_to_positions() -> None:
    assert pairs(diff_values({"l": [{"a": 1}, {"a": 2}]}, {"l": [{"a": 1}, {"a": 3}, {"a": 4}]})) == [
        ("changed", "l[1].a", 2, 3),
        ("added", "l[2]", None, {"a": 4}),
    ]


def test_types_are_compared_strictly_and_shown_quoted_when_they_look_equal() -> None:
    old = tree(
        **{"kubernetes/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {n: '1'}\n"}
    )
    new = tree(
        **{"kubernetes/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {n: 1}\n"}
    )
    result = compare_trees(old, new)
    assert pairs(result.artifacts[0].changes) == [("changed", "data.n", "1", 1)]
    assert '~ data.n: "1" → 1' in format_text(result)


def test_multi_document_files_and_duplicates() -> None:
    two = "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n"
    split = {
        "kubernetes/a.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n",
        "kubernetes/b.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n",
    }
    assert diff_trees(tree(**{"kubernetes/all.yaml": two}), tree(**split)) == []
    with pytest.raises(
        DiffInputError,
        match=r"NEW: Namespace a \(core\) is defined twice \(kubernetes/a.yaml, kubernetes/all.yaml\)",
    ):
        diff_trees({}, tree(**{"kubernetes/a.yaml": split["kubernetes/a.yaml"], "kubernetes/all.yaml": two}))


def test_configmap_data_files_are_diffed_by_their_kind() -> None:
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: plugin}}\ndata:\n  config.yaml: |\n    version: v1\n    flags:\n      migStrategy: {mig}\n  run.sh: |\n    #!/bin/sh\n    exec plugin {arg}\n"
    old = tree(**{"kubernetes/cm.yaml": cm.format(mig="none", arg="--a")})
    new = tree(**{"kubernetes/cm.yaml": cm.format(mig="single", arg="--b")})
    a = only(diff_trees(old, new))
    assert pairs(a.changes)[0] == ("changed", 'data["config.yaml"] :: flags.migStrategy', "none", "single")
    script = a.changes[1]
    assert (script.path, script.op) == ('data["run.sh"]', "changed")
    assert "-exec plugin --a" in script.text_diff and "+exec plugin --b" in script.text_diff


def test_hash_renamed_objects_pair_but_unrelated_ones_do_not() -> None:
    q = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {{name: {n}}}\nspec: {{weight: {w}, capability: {{cpu: '8'}}}}\n"
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: disc-{h}, namespace: flink}}\nimmutable: true\ndata: {{s: '{t}'}}\n"
    old = tree(
        **{
            "kubernetes/q1.yaml": q.format(n="batch", w=1),
            "kubernetes/c.yaml": cm.format(h="0123456789", t="v1"),
        }
    )
    new = tree(
        **{
            "kubernetes/q2.yaml": q.format(n="analytics", w=3),
            "kubernetes/c.yaml": cm.format(h="abcdef0123", t="v2"),
        }
    )
    statuses = {(a.title, a.status) for a in diff_trees(old, new)}
    assert statuses == {
        ("ConfigMap flink/disc-0123456789 → ConfigMap flink/disc-abcdef0123", "renamed"),
        ("Queue batch", "removed"),
        ("Queue analytics", "added"),
    }


# -- Hadoop XML -------------------------------------------------------------------------------------

XML = """
<?xml version="1.0" encoding="UTF-8"?>
<!-- header -->
<configuration>
  <property><name>yarn.resource-types</name><value>yarn.io/gpu</value></property>
  <property><name>a.b</name><value>1</value><description>first</description></property>
  <property><name>gone</name><value>x</value></property>
</configuration>
"""


def test_hadoop_xml_properties_by_name() -> None:
    changed = (
        XML.replace("<value>yarn.io/gpu</value>", "<value>yarn.io/gpu,yarn.io/gpu-t4</value>")
        .replace("<description>first</description>", "<description>second</description><final>true</final>")
        .replace(
            "<property><name>gone</name><value>x</value></property>",
            "<property><name>new</name><value>y</value></property>",
        )
    )
    a = only(diff_trees(tree(**{"yarn/yarn-site.xml": XML}), tree(**{"yarn/yarn-site.xml": changed})))
    assert a.kind == "hadoop-xml"
    assert pairs(a.changes) == [
        ("added", "a.b (final)", None, "true"),
        ("changed", "a.b (description)", "first", "second"),
        ("removed", "gone", "x", None),
        ("added", "new", None, "y"),
        ("changed", "yarn.resource-types", "yarn.io/gpu", "yarn.io/gpu,yarn.io/gpu-t4"),
    ]


def test_reordered_xml_properties_are_equal_but_comments_show_as_text() -> None:
    lines = XML.strip().split("\n")
    reordered = "\n".join([*lines[:3], lines[5], lines[4], lines[3], *lines[6:]]) + "\n"
    a = only(
        diff_trees(tree(**{"y.xml": XML}), tree(**{"y.xml": reordered.replace("header", "other header")}))
    )
    assert a.changes == () and a.text_diff and a.note.startswith("no key-level changes")


def test_other_xml_is_a_text_diff() -> None:
    a = only(
        diff_trees(
            tree(**{"pom.xml": "<project><v>1</v></project>\n"}),
            tree(**{"pom.xml": "<project><v>2</v></project>\n"}),
        )
    )
    assert a.kind == "hadoop-xml" and a.changes == ()
    assert "-<project><v>1</v></project>" in a.text_diff


# -- Flink config -----------------------------------------------------------------------------------


def test_legacy_flink_conf_is_parsed_like_flink() -> None:
    text = """
    # comment: ignored
    external-resources: gpu
    external-resource.gpu.amount: 2   # trailing comment
    no.space.after.colon:2
    empty.value:
    url: http://host:8081/#frag
    """
    assert parse_flink_legacy(textwrap.dedent(text)) == {
        "external-resources": "gpu",
        "external-resource.gpu.amount": "2",
        "url": "http://host:8081/",
    }


def test_flink_config_yaml_nested_and_flat_are_the_same_keys() -> None:
    flat = "external-resource.gpu.amount: 2\nexternal-resources: [gpu]\n"
    nested = "external-resource:\n  gpu:\n    amount: 2\nexternal-resources:\n- gpu\n"
    a = only(diff_trees(tree(**{"flink/c/config.yaml": flat}), tree(**{"flink/c/config.yaml": nested})))
    assert a.changes == () and a.note
    b = only(
        diff_trees(
            tree(**{"flink/c/config.yaml": flat}), tree(**{"flink/c/config.yaml": nested.replace("2", "3")})
        )
    )
    assert pairs(b.changes) == [("changed", "external-resource.gpu.amount", 2, 3)]


def test_structured_values_under_a_config_key_are_diffed_by_element() -> None:
    cfg = "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - {{name: nvidia.com/gpu, replicas: {r}}}\n"
    a = only(
        diff_trees(tree(**{"p/config.yaml": cfg.format(r=4)}), tree(**{"p/config.yaml": cfg.format(r=8)}))
    )
    assert pairs(a.changes) == [
        ("changed", "sharing.timeSlicing.resources[name=nvidia.com/gpu].replicas", 4, 8)
    ]
    assert a.changes[0].leaf == "replicas"


def test_legacy_flink_conf_key_changes() -> None:
    old = "a: 1\nexternal-resource.gpu.yarn.config-key: yarn.io/gpu\n"
    new = "# now per model\nexternal-resource.gpu.yarn.config-key: yarn.io/gpu-t4\nb: 2\n"
    a = only(diff_trees(tree(**{"flink/c/flink-conf.yaml": old}), tree(**{"flink/c/flink-conf.yaml": new})))
    assert pairs(a.changes) == [
        ("removed", "a", "1", None),
        ("added", "b", None, "2"),
        ("changed", "external-resource.gpu.yarn.config-key", "yarn.io/gpu", "yarn.io/gpu-t4"),
    ]


# -- INI ----------------------------------------------------------------------------------------------


def test_ini_sections_and_global_keys() -> None:
    old = "yarn.nodemanager.linux-container-executor.group=hadoop\n[gpu]\nmodule.enabled=true\n[cgroups]\nroot=/sys/fs/cgroup\n"
    new = "yarn.nodemanager.linux-container-executor.group=yarn\n; comment\n[gpu]\nmodule.enabled=false\n[docker]\nmodule.enabled=true\n"
    assert parse_ini(new) == {
        "": {"yarn.nodemanager.linux-container-executor.group": "yarn"},
        "gpu": {"module.enabled": "false"},
        "docker": {"module.enabled": "true"},
    }
    a = only(
        diff_trees(tree(**{"yarn/container-executor.cfg": old}), tree(**{"yarn/container-executor.cfg": new}))
    )
    assert pairs(a.changes) == [
        ("changed", "yarn.nodemanager.linux-container-executor.group", "hadoop", "yarn"),
        ("removed", "[cgroups] root", "/sys/fs/cgroup", None),
        ("added", "[docker] module.enabled", None, "true"),
        ("changed", "[gpu] module.enabled", "true", "false"),
    ]


# -- text, binary, modes ------------------------------------------------------------------------------


def test_dockerfile_is_a_unified_diff() -> None:
    old = "FROM flink:1.20.1-java17\nUSER flink\n"
    new = "FROM flink:1.20.2-java17\nUSER flink\n"
    a = only(diff_trees(tree(**{"node-image/Dockerfile": old}), tree(**{"node-image/Dockerfile": new})))
    assert a.kind == "text" and a.changes == ()
    assert list(a.text_diff) == [
        "--- a/node-image/Dockerfile",
        "+++ b/node-image/Dockerfile",
        "@@ -1,2 +1,2 @@",
        "-FROM flink:1.20.1-java17",
        "+FROM flink:1.20.2-java17",
        " USER flink",
    ]


def test_missing_final_newline_is_visible() -> None:
    assert unified("a\n", "a", "a/x", "b/x")[-3:] == ["-a", "+a", "\\ No newline at end of file"]


def test_mode_binary_added_and_removed_files() -> None:
    old: Tree = {
        "node/run.sh": ("echo\n", 0o644),
        "blob.bin": (b"\x00\x01", 0o644),
        "gone.txt": ("x\n", 0o644),
    }
    new: Tree = {
        "node/run.sh": ("echo\n", 0o755),
        "blob.bin": (b"\x00\x02", 0o644),
        "new.txt": ("y\n", 0o644),
    }
    by_id = {a.ident: a for a in diff_trees(old, new)}
    assert pairs(by_id["node/run.sh"].changes) == [("changed", "(file mode)", "0644", "0755")]
    assert by_id["blob.bin"].kind == "binary" and by_id["blob.bin"].changes[0].path == "(content)"
    assert by_id["gone.txt"].status == "removed" and by_id["gone.txt"].text_diff[:2] == (
        "--- a/gone.txt",
        "+++ /dev/null",
    )
    assert by_id["new.txt"].status == "added" and by_id["new.txt"].text_diff[-1] == "+y"


def test_renamed_file_with_the_same_content() -> None:
    a = only(diff_trees(tree(**{"flink/a/config.yaml": "k: 1\n"}), tree(**{"flink/b/config.yaml": "k: 1\n"})))
    assert (a.status, a.title, a.changes) == ("renamed", "flink/a/config.yaml → flink/b/config.yaml", ())
