"""Pulumi program entry point (`pulumi up` runs this file; see README "Deploying with Pulumi")."""

from components.program import main

main()
