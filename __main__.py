"""Pulumi program entry point (`pulumi up` runs this file; see docs/pulumi.md)."""

from accelplane.program import main

main()
