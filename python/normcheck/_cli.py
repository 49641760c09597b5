"""The `normcheck` command of the Python package: the CLI binary installed inside it
(normcheck/bin/normcheck, which finds the bundled cases in normcheck/data)."""

import os
import sys


def main():
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "normcheck")
    if not os.access(exe, os.X_OK):
        sys.stderr.write(f"normcheck: the CLI is not installed with this package ({exe} is missing)\n")
        sys.exit(2)
    os.execv(exe, ["normcheck", *sys.argv[1:]])


if __name__ == "__main__":
    main()
