#!/usr/bin/env python3
"""Checks a normcheck JSON report against a list of known failures (findings about a backend).

    known_failures.py REPORT.json KNOWN.txt

Exit 0 when the report has no ERROR and every FAILED case is listed in KNOWN.txt (one case
name per line, '#' starts a comment); listed cases that now pass are printed as fixed.
Exit 1 on an ERROR, on a failure not listed, or when nothing passed (an adapter that skips
everything would otherwise look green)."""

import json
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    report = json.load(open(sys.argv[1]))
    known = set()
    for line in open(sys.argv[2]):
        name = line.split("#", 1)[0].strip()
        if name:
            known.add(name)
    failed = {c["case"] for c in report["cases"] if c["status"] == "FAILED"}
    errors = [c for c in report["cases"] if c["status"] == "ERROR"]
    s = report["summary"]
    def num(v):
        return v if isinstance(v, str) else f"{v:.3g}"
    for r in report["layers"]:  # the per-layer measurements, for the log
        print(f"  {r['layer']:<26} {r['dtype']:<5} max ulp {num(r['max_ulp']):<9} max stab {num(r['max_stab']):<9} "
              f"{r['verdict']}")
    print(f"known_failures: {s['passed']} cases pass, {len(failed & known)} known findings fail, "
          f"{len(failed - known)} unknown, {s['skipped']} skipped, {s['errors']} errors")
    present = {c["case"] for c in report["cases"]}
    for name in sorted((known & present) - failed):
        print(f"known_failures: {name} no longer fails (fixed upstream? remove it from {sys.argv[2]})")
    bad = False
    for c in errors:
        print(f"known_failures: ERROR {c['case']} on {c['backend']}: {c.get('reason', '')}")
        bad = True
    for name in sorted(failed - known):
        print(f"known_failures: new failure {name} (not in {sys.argv[2]})")
        bad = True
    if s["passed"] == 0:
        print("known_failures: nothing passed")
        bad = True
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
