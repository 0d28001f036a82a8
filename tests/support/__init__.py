"""Test support shared by every test module: repository paths (`paths`), real validators
(`validators`), writing specs and validating them (`specs`), in-process render (`render`), the
real-Flink harness (`flink`), fakes."""
