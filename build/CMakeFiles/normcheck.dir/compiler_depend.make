# Empty compiler generated dependencies file for normcheck.
# This may be replaced when dependencies are built.
