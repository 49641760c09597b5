#!/bin/sh
# Checks tools/adapters/numpy_backend.py, the NumPy worker that implements every op:
#   1. protocol: the hello, a run request answered with its outputs, and requests with an
#      unknown convention key, an unknown value and an unknown input answered with "skip";
#   2. round_out (its one rounding) against normcheck_worker.round_to and exact rationals;
#   3. the layout and backward case files pass on the worker, and each fault mode
#      (--fault offset | strides | no_mean_term) makes normcheck exit 1 with FAILED cases;
#   4. the whole default suite (case files and matrix:quick) passes, none skipped; with FULL=1
#      also 1000 fuzz draws (minutes).
# Usage, from anywhere: tests/adapters/test_numpy_backend.sh [NORMCHECK]   (default build/normcheck)
# Exit 0: all passed; 1: a check failed; 77: skipped (no python3 with numpy, no binary).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
N=${1:-$ROOT/build/normcheck}
case $N in /*) ;; *) N=$(pwd)/$N ;; esac
W="python3 tools/adapters/numpy_backend.py"
cd "$ROOT" || exit 1
if ! python3 -c "import numpy" 2>/dev/null; then echo "SKIP: python3 with numpy not found"; exit 77; fi
if [ ! -x "$N" ]; then echo "SKIP: no normcheck binary at $N"; exit 77; fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0
check() {  # check NAME STATUS: report one check
  if [ "$2" -eq 0 ]; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}

# 1. Protocol, by hand: layer_norm [1, 2, 3] in f64 (sqrt(3/2) (-1, 0, 1)), as a padded view.
python3 - "$TMP" <<'EOF'
import json, subprocess, sys
import numpy as np
tmp = sys.argv[1]
np.save(f"{tmp}/x.npy", np.array([np.nan] * 5 + [1.0, 2.0, 3.0, np.nan]))
conv = {"eps": 0.0, "eps_placement": "inside_sqrt", "variance": "biased", "affine": "none", "normalized_shape": [3],
        "acc_dtype": "f64", "direction": "forward", "normalized_dtype": None}
def run(rid, conv, inputs=None):
    inputs = inputs or {"x": {"path": f"{tmp}/x.npy", "dtype": "f64", "shape": [1, 3], "strides": [4, 1], "offset": 5}}
    return {"type": "run", "id": rid, "op": "layer_norm", "out_dtype": "f64", "layout": "offset", "convention": conv,
            "inputs": inputs, "outputs": {"y": {"path": f"{tmp}/{rid}_y.npy", "dtype": "f64", "shape": [1, 3]},
                                          "mean": {"path": f"{tmp}/{rid}_mean.npy", "dtype": "f64", "shape": [1], "optional": True}}}
extra_input = {"x": run(0, conv)["inputs"]["x"], "w": run(0, conv)["inputs"]["x"]}
lines = [{"type": "hello", "protocol": 2, "protocols": [1, 2]}, run(1, conv), run(2, {**conv, "new_key": 1}),
         run(3, {**conv, "eps_placement": "inside_log"}), run(4, conv, extra_input)]
p = subprocess.run([sys.executable, "tools/adapters/numpy_backend.py"], input="".join(json.dumps(l) + "\n" for l in lines),
                   capture_output=True, text=True, timeout=60)
replies = [json.loads(l) for l in p.stdout.splitlines()]
ok = len(replies) == 5 and replies[0]["protocol"] == 2 and replies[0]["backward"] is True and replies[0]["views"] is True
y = np.load(f"{tmp}/1_y.npy") if ok and "outputs" in replies[1] else None
ok = ok and y is not None and np.array_equal(y, [[-1.224744871391589, 0.0, 1.224744871391589]])
ok = ok and np.load(f"{tmp}/1_mean.npy").tolist() == [2.0]
ok = ok and all("skip" in r for r in replies[2:]) and "new_key" in replies[2]["skip"] and "inside_log" in replies[3]["skip"]
if not ok:
    print(p.stdout, p.stderr, file=sys.stderr)
sys.exit(0 if ok else 1)
EOF
check "protocol: hello, a strided run, skips for an unknown key, value and input" $?

# 2. The rounding, against the helper module and exact rationals (near ties, with remainders).
python3 - <<'EOF'
import random, sys
from fractions import Fraction as F
import numpy as np
sys.path.insert(0, "tools/adapters")
import normcheck_worker as nw
import numpy_backend as nb
L = np.longdouble
v = np.random.default_rng(2).standard_normal(20000) * 10.0 ** np.random.default_rng(3).integers(-320, 300, 20000)
v = np.concatenate([v, [np.inf, -np.inf, np.nan, 0.0, -0.0, 65520.0, 65519.99, 2.0**-149, 3 * 2.0**-150]])
bad = 0
for dt in ("f64", "f32", "f16", "bf16"):
    a, b = nb.round_out(v.astype(L), dt).astype(np.float64), nw.round_to(v, dt).astype(np.float64)
    bad += int(np.sum(~((a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b)))))
rng = random.Random(1)
for _ in range(5000):  # x = m 2^k with two more bits than the format (ties included), plus a remainder
    dt = rng.choice(list(nb.FORMATS))
    mode, sat = rng.choice(["nearest_even", "nearest_away"]), rng.random() < 0.5
    p, min_exp, top = nb.FORMATS[dt]
    k = rng.randint(min_exp - p - 5, int(np.log2(top)) - p)
    x = F(rng.choice([-1, 1]) * rng.randint(0, 2 ** (p + 2))) * F(2) ** k
    lo = F(rng.choice([-1, 0, 1])) * F(2) ** (k - 70) if x else F(0)
    e = x + lo  # the exact value; its rounding, by the definition:
    hi_b, lo_b = F(top), F(-128) if dt == "int8" else -F(top)
    if (sat or dt == "int8") and (e >= hi_b or e <= lo_b):
        want = hi_b if e >= hi_b else lo_b
    elif e == 0:
        want = F(0)
    else:
        ex = 0
        while F(2) ** (ex - 1) > abs(e): ex -= 1
        while F(2) ** ex <= abs(e): ex += 1
        q = F(2) ** (max(ex, min_exp) - p)
        n = int(e / q)
        frac = abs(e / q - n)
        if frac > F(1, 2) or (frac == F(1, 2) and (mode == "nearest_away" or n % 2)):
            n += 1 if e > 0 else -1
        want = n * q
    to_l = lambda f: np.ldexp(L(f.numerator), -(f.denominator.bit_length() - 1))
    got = nb.round_out(np.array([to_l(x)]), dt, mode, sat, lo=np.array([to_l(lo)]))[0]
    if dt != "int8" and abs(want) > top:  # the format's overflow
        bad += not (np.isnan(got) if dt == "fp8_e4m3fn" else got == (np.inf if want > 0 else -np.inf))
    else:
        bad += not (np.isfinite(got) and F(float(got)) == want)
print(f"round_out: {bad} mismatches")
sys.exit(bad != 0)
EOF
check "round_out: correct rounding (helper's round_to, exact rationals, ties and remainders)" $?

# 3. Layout and backward cases pass; each fault mode fails them.
"$N" run cases/*/memory_layout.toml cases/*/backward.toml --backend "cmd:$W" --no-progress > "$TMP/ok.txt" 2>&1
check "memory_layout + backward cases pass: $(tail -n 2 "$TMP/ok.txt" | head -n 1)" $?
for f in offset strides no_mean_term; do
  "$N" run cases/*/memory_layout.toml cases/*/backward.toml --backend "cmd:$W --fault $f" --no-progress > "$TMP/$f.txt" 2>&1
  status=$?
  failed=$(grep -c '^FAILED' "$TMP/$f.txt")
  [ "$status" -eq 1 ] && [ "$failed" -gt 0 ]
  check "--fault $f: exit $status, $failed FAILED cases" $?
done

# 4. The whole default suite (the case files and matrix:quick): every case evaluated and passed,
#    none skipped; with FULL=1 also 1000 fuzz draws.
"$N" run --backend "cmd:$W" --no-progress > "$TMP/suite.txt" 2>&1
st=$?
grep -qE '^[0-9]+ case runs: [0-9]+ passed, 0 failed, 0 skipped, 0 mistrusted, 0 errors$' "$TMP/suite.txt" || st=1
check "the default suite, none skipped: $(tail -n 2 "$TMP/suite.txt" | head -n 1)" $st
if [ "${FULL:-0}" = 1 ]; then
  "$N" fuzz --backend "cmd:$W" --count 1000 --no-progress > "$TMP/fuzz.txt" 2>&1
  check "fuzz 1000: $(head -n 1 "$TMP/fuzz.txt")" $?
fi
exit $fail
