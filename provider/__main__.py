"""The accelplane component provider: Pulumi runs this (PulumiPlugin.yaml) and talks to it over gRPC."""

from accelplane.pulumi.package import serve

if __name__ == "__main__":
    serve()
