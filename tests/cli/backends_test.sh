#!/usr/bin/env bash
# Backends beyond our kernels, end to end: C-ABI plugins (the example, and misbehaving ones
# whose failure must stay inside one case), external workers (cmd:), the ONNX Runtime and
# PyTorch adapters where their packages are installed, oneDNN where it was built.
# Run by ctest from the source root with NORMCHECK (binary) and PLUGINS (folder of .so).
set -u
nc=${NORMCHECK:?set NORMCHECK to the normcheck binary}
plugins=${PLUGINS:?set PLUGINS to the folder of the built plugins}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 skipped=0
expect() {  # expect NAME WANT_RC CMD...
  local name=$1 want=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" -eq "$want" ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL $name: exit $rc, wanted $want"; head -30 "$tmp/out" "$tmp/err"; fi
}
contains() {  # contains NAME FILE PATTERN
  if grep -qE -- "$3" "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $1: no /$3/ in $2"; head -30 "$2"; fi
}
lacks() {  # lacks NAME FILE PATTERN
  if grep -qE -- "$3" "$2"; then fail=$((fail + 1)); echo "FAIL $1: /$3/ in $2"; grep -E -- "$3" "$2" | head -5; else pass=$((pass + 1)); fi
}
note_skip() { skipped=$((skipped + 1)); echo "SKIP: $*"; }

w=cases/layer_norm/worked_examples.toml   # 12 cases; the faults trigger on ln_1234 (x = [1, 2, 3, 4], f64)

# ---- C-ABI plugins -------------------------------------------------------------------
ex="plugin:$plugins/libnc_example_plugin.so"
ex1="plugin:$plugins/libnc_example_abi1.so"
# ABI 1 plugins still load (issue 13): forward layer_norm/rms_norm on dense tensors; the
# backward.toml files are SKIPPED ("forward only"), ABI 1 has no normalized_dtype
# (the rounding_order*.toml rounded-first cases are SKIPPED, below) and no views
# (memory_layout.toml is SKIPPED).
fwd=$(ls cases/layer_norm/*.toml cases/rms_norm/*.toml | grep -v -e /backward.toml -e /rounding_order -e /memory_layout.toml)
expect "ABI 1 plugin: bundled layer_norm and rms_norm cases pass" 0 "$nc" run $fwd cases/onnx --backend "$ex1" --filter layer_norm --filter rms_norm
contains "ABI 1 plugin: every layer" "$tmp/out" "^rms_norm/random +rms_norm +$ex1 +bf16 +14 .* PASS$"
contains "ABI 1 plugin: no skips" "$tmp/out" " 0 skipped, 0 mistrusted, 0 errors$"
expect "ABI 1 plugin: a rounding order ABI 1 cannot carry is SKIPPED, never run rounded once" 0 "$nc" run cases/rms_norm/rounding_order.toml --backend "$ex1"
contains "ABI 1 plugin: the rounding-order skip" "$tmp/out" "plugin ABI 1 has no normalized_dtype"
contains "ABI 1 plugin: the one-rounding case runs" "$tmp/out" "2 case runs: 1 passed, 0 failed, 1 skipped"
expect "ABI 1 plugin: views and backward are SKIPPED; nothing evaluated is no PASS" 1 "$nc" run cases/layer_norm/memory_layout.toml --backend "$ex1"
contains "ABI 1 plugin: views skipped" "$tmp/out" "dense tensors only \(the offset layout is not presented to it\)"
contains "ABI 1 plugin: nothing of memory_layout.toml ran" "$tmp/out" "5 case runs: 0 passed, 0 failed, 5 skipped"
# ABI 2: the same cases, and the views (every layout of memory_layout.toml).
expect "example plugin: bundled layer_norm and rms_norm cases pass, views included" 0 "$nc" run $fwd cases/layer_norm/memory_layout.toml cases/rms_norm/memory_layout.toml cases/onnx --backend "$ex" --filter layer_norm --filter rms_norm --no-progress
contains "example plugin: a view layer" "$tmp/out" "^rms_norm/views +rms_norm +$ex +bf16 +4 .* PASS$"
# The example plugin implements every op, forward and backward, every layout (issue 13): the
# whole default suite (the case files and the coverage matrix's quick tier) passes, none skipped.
expect "example plugin: the whole default suite" 0 "$nc" run --backend "$ex" --no-progress
contains "example plugin: nothing skipped, nothing failed" "$tmp/out" "^[0-9]+ case runs: [0-9]+ passed, 0 failed, 0 skipped, 0 mistrusted, 0 errors$"
contains "example plugin: every op's backward ran" "$tmp/out" "^batch_norm/backward +batch_norm +$ex .* PASS$"
# Faulty variants are caught: reading views as dense rows (past a padded row), and layer_norm's
# backward without the mean term.
# A kernel that writes nothing: the host's fill (a signaling NaN) must not pass a case whose
# exact y is NaN (0/0 of a constant row with eps 0); it is an ERROR naming the element.
expect "plugin that writes nothing, on a NaN case" 3 "$nc" run cases/layer_norm --case ln_f32_constant_row_eps0_inexact_mean --backend "plugin:$plugins/libnc_fault_writes_nothing.so" --no-progress
contains "plugin that writes nothing: named" "$tmp/out" "left element 0 of output y unwritten"
# fp8 and int8 outputs have no fill distinct from every value (0xff: NaN, -1): a plugin that
# leaves them unwritten had passed the fp8 cases whose exact y is NaN (15 of the quantized
# ops' cases; false-pass audit). The host runs it again over 0x00 bytes and names the element.
expect "plugin that leaves fp8/int8 outputs unwritten" 3 "$nc" run matrix:quick --case mx_rms_norm_quant_w33_r2_f16_f16_zeros_typical --backend "plugin:$plugins/libnc_fault_skips_byte_outputs.so" --no-progress
contains "8-bit outputs unwritten: named" "$tmp/out" "left element 0 of output y unwritten \\(it held each of the host's fills in turn"
expect "plugin that reads views as dense rows" 1 "$nc" run cases/layer_norm/memory_layout.toml cases/group_norm/memory_layout.toml --backend "plugin:$plugins/libnc_fault_dense_rows.so" --no-progress
contains "dense rows: the padded view fails" "$tmp/out" "^FAILED ln_padded_view on plugin:"
lacks "dense rows: the offset view (dense) passes" "$tmp/out" "^FAILED ln_offset_view"
expect "plugin without backward's mean term" 1 "$nc" run cases/layer_norm/backward.toml --backend "plugin:$plugins/libnc_fault_no_mean_term.so" --no-progress
contains "no mean term: the worked gradient fails" "$tmp/out" "^FAILED ln_bwd_123_dy100 on plugin:"

fault() {  # fault NAME: run the worked examples on libnc_fault_NAME.so
  # The segfault plugin must kill its worker by SIGSEGV; in tools/sanitize.sh's build
  # AddressSanitizer's SEGV handler would turn that death into exit code 1 (handle_segv=0:
  # for these deliberately crashing runs only; ignored by a build without ASan).
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0" \
    "$nc" run "$w" --backend "plugin:$plugins/libnc_fault_$1.so" --timeout 2 >"$tmp/out" 2>"$tmp/err"
  echo $?
}
for f in segfault abort hang wrong_shape wrong_dtype forged_frame writes_input; do
  rc=$(fault $f)
  if [ "$rc" -eq 3 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL plugin $f: exit $rc, wanted 3"; cat "$tmp/out" "$tmp/err"; fi
  contains "plugin $f: only the trigger case is ERROR" "$tmp/out" "^12 [a-z ]+: 11 passed, 0 failed, 0 skipped, 0 mistrusted, 1 errors$"
  contains "plugin $f: the trigger case" "$tmp/out" "^ERROR ln_1234 on plugin:"
done
fault segfault >/dev/null
contains "segfault: named" "$tmp/out" "plugin crashed: worker killed by signal 11 \(SIGSEGV"
contains "segfault: restarted" "$tmp/out" "restarted for the next case"
fault abort >/dev/null
contains "abort: named" "$tmp/out" "killed by signal 6 \(SIGABRT"
contains "abort: stderr quoted" "$tmp/out" "worker stderr: misbehaving_plugin: giving up"
fault hang >/dev/null
contains "hang: timeout" "$tmp/out" "did not answer within 2 s \(--timeout\)"
fault wrong_shape >/dev/null
contains "wrong shape: guard" "$tmp/out" "wrote past the end of output y"
fault writes_input >/dev/null
contains "writes into an input: named" "$tmp/out" "plugin wrote into input x \(its storage changed at byte"
fault wrong_dtype >/dev/null
contains "wrong dtype: descriptor" "$tmp/out" "modified the output descriptor y \(dtype f64 -> f32"
fault forged_frame >/dev/null
contains "forged frame: refused by its size (issue 19)" "$tmp/out" \
  "oversized frame: 68719476736 bytes claimed, at most 65536 expected"
contains "forged frame: the report is complete" "$tmp/out" "^12 [a-z ]+: 11 passed"
# The worker's end: requests whose shape disagrees with their bytes or with nc_tensor
# (100 dims; 2^20 x 3 elements in 12 bytes) are answered "host: malformed request", never
# served (the host wrote past nc_tensor::shape and the plugin read past x: issue 19).
python3 - "$nc" "$plugins/libnc_example_abi1.so" >"$tmp/host" 2>&1 <<'PY'
import struct, subprocess, sys
def tensor(name, shape, data):
    return (struct.pack('<Q', len(name)) + name + struct.pack('<Ii', 1, len(shape)) +
            b''.join(struct.pack('<q', e) for e in shape) + struct.pack('<Q', len(data)) + data)
def request(shape, nbytes):
    p = struct.pack('<IdIIIiIII', 0, 1e-5, 0, 0, 0, 1, 1, 1, 1) + tensor(b'x', shape, b'\0' * nbytes)
    return b'EVAL' + struct.pack('<Q', len(p)) + p
good = request([2, 3], 24)
out = subprocess.run([sys.argv[1], '__plugin-host', sys.argv[2]], capture_output=True, timeout=30,
                     input=request([1] * 100, 4) + request([1 << 20, 3], 12) + good).stdout
while out:
    tag, n = out[:4], struct.unpack('<Q', out[4:12])[0]
    print(tag.decode(), n if tag == b'OKAY' else out[12:12 + n].decode(errors='replace'))
    out = out[12 + n:]
PY
contains "plugin host: 100 dims refused" "$tmp/host" "^ERRR host: malformed request: tensor x: 100 dims$"
contains "plugin host: shape beyond its bytes refused" "$tmp/host" "^ERRR host: malformed request: tensor x: 12 bytes for its shape$"
contains "plugin host: a good request after them is served" "$tmp/host" "^OKAY 24$"

rc=$(fault nan)
[ "$rc" -eq 1 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL plugin nan: exit $rc, wanted 1"; }
contains "nan: wrong answers are FAILED" "$tmp/out" "^12 [a-z ]+: 0 passed, 12 failed, 0 skipped, 0 mistrusted, 0 errors$"
rc=$(fault chatty)
[ "$rc" -eq 0 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL plugin chatty: exit $rc, wanted 0"; cat "$tmp/out"; }
rc=$(fault picky)
[ "$rc" -eq 0 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL plugin picky: exit $rc, wanted 0"; cat "$tmp/out"; }
contains "picky: declined cases are SKIPPED with the plugin's reason" "$tmp/out" \
  "^SKIPPED 1 x: example_plugin 2.0 \(binary64, two-pass\): misbehaving_plugin: no f16 kernel$"

expect "plugin with another ABI version" 3 "$nc" run "$w" --backend "plugin:$plugins/libnc_fault_bad_abi.so"
contains "ABI mismatch named" "$tmp/err" "plugin ABI version 999 but this normcheck speaks versions 1 to 2"
expect "missing plugin file" 2 "$nc" run "$w" --backend "plugin:$tmp/nope.so"
contains "missing plugin named" "$tmp/err" "no such file"
expect "not a shared library" 3 "$nc" run "$w" --backend "plugin:$w"
contains "load error named" "$tmp/err" "cannot load"

# ---- external workers (cmd:) ---------------------------------------------------------------
worker() {  # worker MODE: run the worked examples on tests/cli/fake_worker.py MODE
  "$nc" run "$w" --backend "cmd:python3 tests/cli/fake_worker.py $1" --timeout 2 >"$tmp/out" 2>"$tmp/err"
  echo $?
}
# A restarted worker that answers another handshake: every case after the restart is an
# ERROR (the run chose what to send it from the first answer).
rm -f "$tmp/flip"
expect "worker restarted with another handshake" 3 "$nc" run "$w" --backend "cmd:python3 tests/cli/fake_worker.py flip $tmp/flip" --timeout 5 --no-progress
contains "worker restarted with another handshake: named" "$tmp/out" "restarted worker answered another handshake"
rc=$(worker ok)
[ "$rc" -eq 0 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL worker ok: exit $rc"; cat "$tmp/out" "$tmp/err"; }
contains "worker ok: skips are reported" "$tmp/out" "^SKIPPED 4 x: fake_worker: f64, inside_sqrt, biased, no affine only$"
for m in crash exit hang garbage wrong_id wrong_shape wrong_dtype bad_npy error; do
  rc=$(worker $m)
  [ "$rc" -eq 3 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL worker $m: exit $rc, wanted 3"; cat "$tmp/out" "$tmp/err"; }
  contains "worker $m: only the trigger case is ERROR" "$tmp/out" "^12 [a-z ]+: 7 passed, 0 failed, 4 skipped, 0 mistrusted, 1 errors$"
  case $m in
    crash) contains "worker crash: signal" "$tmp/out" "worker crashed: .*SIGSEGV" ;;
    exit) contains "worker exit: status and stderr" "$tmp/out" "exited with status 7 .*worker stderr: fake_worker: exiting" ;;
    hang) contains "worker hang: timeout" "$tmp/out" "did not answer within 2 s" ;;
    garbage) contains "worker garbage" "$tmp/out" "a reply line that is not JSON: 'this is not json'" ;;
    wrong_id) contains "worker wrong id" "$tmp/out" "ids must match" ;;
    wrong_shape) contains "worker wrong shape" "$tmp/out" "output 'y' has shape \[2, 2\], expected \[4\]" ;;
    wrong_dtype) contains "worker wrong dtype" "$tmp/out" "output 'y' has dtype f32, expected f64" ;;
    bad_npy) contains "worker bad npy" "$tmp/out" "not a .npy file" ;;
    error) contains "worker error" "$tmp/out" "worker error: fake_worker: the framework refused" ;;
  esac
done
rc=$(worker nan)
[ "$rc" -eq 1 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL worker nan: exit $rc, wanted 1"; }
lacks "worker nan: no ERROR" "$tmp/out" "^ERROR"
# A backend that hangs on everything costs --max-timeouts timeouts, or --budget, not
# --timeout per case (issue 19): the rest are ERROR naming the limit, the run still reports.
t0=$(date +%s)
expect "hanging worker: stopped after 2 timeouts in a row" 3 "$nc" run "$w" --backend "cmd:python3 tests/cli/fake_worker.py hang_all" \
  --timeout 1 --max-timeouts 2
t1=$(date +%s)
contains "hanging worker: every case is ERROR" "$tmp/out" "^12 [a-z ]+: 0 passed, 0 failed, 0 skipped, 0 mistrusted, 12 errors$"
contains "hanging worker: the limit named" "$tmp/out" "not asked: the backend timed out on 2 cases in a row \(--max-timeouts 2\)"
[ $((t1 - t0)) -lt 8 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL hanging worker: took $((t1 - t0)) s, wanted ~2 s"; }
t0=$(date +%s)
expect "hanging worker: --budget" 3 "$nc" run "$w" --backend "cmd:python3 tests/cli/fake_worker.py hang_all" \
  --timeout 60 --budget 1.5 --max-timeouts 0
t1=$(date +%s)
contains "budget: every case is ERROR" "$tmp/out" "^12 [a-z ]+: 0 passed, 0 failed, 0 skipped, 0 mistrusted, 12 errors$"
contains "budget: named" "$tmp/out" "budget exhausted: this backend has spent [0-9.]+ s of its 1.5 s \(--budget\)"
[ $((t1 - t0)) -lt 8 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL budget: took $((t1 - t0)) s, wanted ~1.5 s"; }
expect "a budget ample for the run changes nothing" 0 "$nc" run "$w" --backend "cmd:python3 tests/cli/fake_worker.py ok" --budget 600
expect "bad budget" 2 "$nc" run "$w" --backend cpu --budget -1
expect "bad max-timeouts" 2 "$nc" run "$w" --backend cpu --max-timeouts x
# A worker that takes the machine's memory or CPU is stopped at --backend-memory (resident
# bytes of its process group, children included) or --backend-cpu (RLIMIT_CPU): that case is
# ERROR naming the option, the next case gets a new worker (issue 19).
for m in hog hog_child; do
  expect "worker $m: over --backend-memory" 3 "$nc" run "$w" --backend "cmd:python3 tests/cli/fake_worker.py $m" \
    --timeout 20 --backend-memory 512M
  contains "worker $m: only the trigger case is ERROR" "$tmp/out" "^12 [a-z ]+: 7 passed, 0 failed, 4 skipped, 0 mistrusted, 1 errors$"
  contains "worker $m: the limit named" "$tmp/out" "^  cmd:.*: worker held [0-9.]+ GiB resident \(with its children\), over its 0.5 GiB \(--backend-memory\): killed; restarted"
done
expect "worker hog: under the default --backend-memory it passes" 0 "$nc" run "$w" --backend "cmd:python3 tests/cli/fake_worker.py hog" --timeout 20
expect "worker spin: over --backend-cpu" 3 "$nc" run "$w" --backend "cmd:python3 tests/cli/fake_worker.py spin" \
  --timeout 30 --backend-cpu 1
contains "worker spin: only the trigger case is ERROR" "$tmp/out" "^12 [a-z ]+: 7 passed, 0 failed, 4 skipped, 0 mistrusted, 1 errors$"
contains "worker spin: the limit named" "$tmp/out" "SIGXCPU.*\(its CPU limit is 1 s, --backend-cpu\)"
expect "plugin hog: over --backend-memory" 3 "$nc" run "$w" --backend "plugin:$plugins/libnc_fault_hog.so" --timeout 20 --backend-memory 512M
contains "plugin hog: only the trigger case is ERROR" "$tmp/out" "^12 [a-z ]+: 11 passed, 0 failed, 0 skipped, 0 mistrusted, 1 errors$"
contains "plugin hog: the limit named" "$tmp/out" "^  plugin:.*: plugin worker held [0-9.]+ GiB resident \(with its children\), over its 0.5 GiB \(--backend-memory\): killed; restarted"
expect "plugin hog: under the default --backend-memory it passes" 0 "$nc" run "$w" --backend "plugin:$plugins/libnc_fault_hog.so" --timeout 20
expect "bad backend-memory" 2 "$nc" run "$w" --backend cpu --backend-memory lots
expect "negative backend-cpu" 2 "$nc" run "$w" --backend cpu --backend-cpu -1
# What a worker starts in its process group dies with it at the end of the run, also when the
# worker exits cleanly on EOF (issue 19: 10 of 10 such children outlived normcheck).
expect "spawning worker: its run passes" 0 "$nc" run "$w" --backend "cmd:python3 tests/cli/fake_worker.py spawn $tmp/spawn.pid"
spawned=$(cat "$tmp/spawn.pid" 2>/dev/null)
if [ -z "$spawned" ]; then fail=$((fail + 1)); echo "FAIL spawning worker: no pid file"
else
  for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$spawned" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$spawned" 2>/dev/null && ! grep -q zombie "/proc/$spawned/status" 2>/dev/null && \
     ! grep -q "^State:.*Z" "/proc/$spawned/status" 2>/dev/null; then
    fail=$((fail + 1)); echo "FAIL spawning worker: its child $spawned outlived normcheck"; kill "$spawned"
  else pass=$((pass + 1)); fi
fi
expect "worker that dies before the handshake" 3 "$nc" run "$w" --backend "cmd:python3 tests/cli/fake_worker.py no_hello"
contains "handshake failure named" "$tmp/err" "exited with status 4 .*fake_worker: cannot start"
expect "worker with another protocol" 3 "$nc" run "$w" --backend "cmd:python3 tests/cli/fake_worker.py bad_protocol"
expect "command that is not executable" 2 "$nc" run "$w" --backend "cmd:./no/such/worker --flag"
contains "non-executable named" "$tmp/err" "'./no/such/worker' is not an executable file"
expect "command not in PATH" 2 "$nc" run "$w" --backend "cmd:no-such-program-normcheck"
expect "unknown backend spec" 2 "$nc" run "$w" --backend "plugn:x.so"
expect "bad timeout" 2 "$nc" run "$w" --backend cpu --timeout -1

# ---- oneDNN ------------------------------------------------------------------------------------
if "$nc" backends | grep -q "^onednn .*not built"; then
  note_skip "onednn: normcheck was built without oneDNN (libdnnl-dev)"
  expect "onednn unavailable under --strict" 3 "$nc" run "$w" --backend onednn --strict
else
  expect "onednn: worked examples" 0 "$nc" run "$w" --backend onednn
  contains "onednn: f32 passes" "$tmp/out" "^layer_norm/worked +layer_norm +onednn +f32 +1 .* PASS$"
  contains "onednn: f64 skipped with the reason" "$tmp/out" "SKIPPED 9 x: onednn: layer normalization on f64 not offered"
  # every case skipped: the backend checked nothing, which is never a pass
  expect "onednn: rms_norm skipped" 1 "$nc" run cases/rms_norm/worked_examples.toml --backend onednn
  contains "onednn: no RMS primitive" "$tmp/out" "oneDNN 2.6 has no RMS normalization"
fi

# ---- framework adapters (where installed) --------------------------------------------------------
if python3 -c "import numpy, onnx, onnxruntime" 2>/dev/null; then
  ort="cmd:python3 tools/adapters/onnxruntime_backend.py"
  expect "onnxruntime: worked examples" 0 "$nc" run "$w" cases/rms_norm/worked_examples.toml --backend "$ort"
  contains "onnxruntime: f32 passes" "$tmp/out" "^layer_norm/worked +layer_norm +cmd:python3 tools/adapters/onnxruntime_backend.py +f32 +1 .* PASS$"
  expect "onnxruntime: eps placement" 0 "$nc" run cases/layer_norm/eps_placement.toml --backend "$ort"
  contains "onnxruntime: outside_sqrt is skipped, not passed" "$tmp/out" "onnxruntime: eps_placement outside_sqrt not expressible"
else
  note_skip "onnxruntime adapter: python3 packages numpy/onnx/onnxruntime not installed (pip install numpy onnx onnxruntime)"
fi
if python3 -c "import numpy, torch" 2>/dev/null; then
  expect "torch: worked examples" 0 "$nc" run "$w" cases/rms_norm/worked_examples.toml --backend "cmd:python3 tools/adapters/torch_backend.py"
  contains "torch: bf16 rms passes" "$tmp/out" "^rms_norm/worked +rms_norm +cmd:.*torch_backend.py +bf16 +1 .* PASS$"
else
  note_skip "torch adapter: python3 package torch not installed (pip install torch); its test did not run"
fi

# ---- side by side ------------------------------------------------------------------------------
expect "compare format" 0 "$nc" run "$w" --backend reference,cpu,"$ex" --format side-by-side
contains "compare header" "$tmp/out" "^layer +op +dtype +reference +cpu +plugin:libnc_example_plugin.so$"
contains "compare legend" "$tmp/out" "^plugin:libnc_example_plugin.so = $ex$"
contains "compare row" "$tmp/out" "^layer_norm/worked +layer_norm +f32 +0.374 / 0.748 PASS +0.374 / 0.748 PASS +[0-9.e+-]+ / [0-9.e+-]+ PASS$"

echo "backends: $pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
