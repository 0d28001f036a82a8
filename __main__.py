"""Pulumi program entry point (`pulumi up` runs this file; see docs/pulumi.md)."""

from components.program import main

main()
