"""Generated modules only: nothing here is written by hand.

`schema_fast`: fastjsonschema's ``compile_to_code`` output for schemas/spec.schema.json, made by
``python -m accelplane.schema_codegen`` (``make schema-fast``) with the fastjsonschema version its
header names; tests/foundation/test_schema_fast.py fails while it is not what that generator makes.
"""
