"""Test support shared by every test module: repository paths and validators (`validators`),
in-process validate/render (`render`), the real-Flink harness (`flink_cluster`), fakes."""
