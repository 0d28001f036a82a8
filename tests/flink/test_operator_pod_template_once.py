"""An operator cluster's pod templates are represented as YAML once (issue 40): the FlinkDeployment
embeds the very mapping its pod template file is, and serialising both reuses one node, which is
dropped once both are serialised."""

from __future__ import annotations

import yaml
from accelplane.derive.flink_keys import JOBMANAGER_POD_TEMPLATE, TASKMANAGER_POD_TEMPLATE
from accelplane.pipeline import render_spec
from accelplane.render import bundle_files
from accelplane.yaml_io import Represented, dump_yaml, represented

from tests.conftest import EXAMPLE_SPECS


def test_the_file_and_the_flink_deployment_share_one_represented_template() -> None:
    spec = next(s for s in EXAMPLE_SPECS if s.name == "prod-eu.yaml")
    bundle = render_spec(spec).bundle
    files = bundle_files(bundle)
    deployments = [o for o in bundle.objects if o.kind == "FlinkDeployment"]
    assert deployments
    for fd in deployments:
        for role, file_name in (("jobManager", JOBMANAGER_POD_TEMPLATE), ("taskManager", TASKMANAGER_POD_TEMPLATE)):
            template = fd.manifest["spec"][role]["podTemplate"]
            assert isinstance(template, Represented)
            text, _ = files[f"flink/{fd.name}/{file_name}"]
            # the file is the embedded mapping (after its comment header), byte for byte
            assert text.split("\n", 1)[1] == dump_yaml(template)
            assert yaml.safe_load(text) == template
            assert template.node is None  # released once both documents were serialised
        # the FlinkDeployment was serialised by its builder, with the templates' nodes
        assert fd.text is not None and fd.text == dump_yaml(fd.manifest)
        assert files[f"kubernetes/{fd.filename}"][0] == fd.text


def test_a_represented_mapping_dumps_as_the_plain_one_and_reuses_its_node() -> None:
    data = {"b": ["x", {"multi": "line\none\n"}], "a": {"n": 1, "t": True, "s": "plain"}}
    once = represented(data)
    assert once == data
    assert dump_yaml(once) == dump_yaml(data)
    assert dump_yaml({"outer": once, "z": 0}) == dump_yaml({"outer": data, "z": 0})
    once["changed"] = 1  # a modification after representing is not seen: the node is reused
    assert "changed" not in dump_yaml(once)
    once.release()  # without its node it is represented as the plain mapping it is
    assert dump_yaml(once) == dump_yaml({**data, "changed": 1})
