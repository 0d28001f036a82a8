"""Pulumi program entry point (`pulumi up` runs this file; see docs/pulumi.md)."""

from accelplane.program import main, tune_collector

tune_collector()  # after the imports: this interpreter runs the program and ends (docs/pulumi.md)
main()
