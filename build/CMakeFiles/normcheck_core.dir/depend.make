# Empty dependencies file for normcheck_core.
# This may be replaced when dependencies are built.
