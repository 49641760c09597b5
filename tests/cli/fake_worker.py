#!/usr/bin/env python3
"""A cmd: worker for the tests (pure Python, no NumPy): a correct f64 layer_norm/rms_norm
(inside_sqrt, biased, no affine) that misbehaves on the trigger case x = [1, 2, 3, 4] (f64) in
the way named by argv[1]:

  ok            never misbehaves
  crash         kills itself with SIGSEGV
  exit          exits with status 7
  hang          sleeps forever
  hang_all      sleeps forever on every problem, trigger or not (after the handshake)
  spawn PIDFILE correct, but starts a `sleep 600` in the background at the handshake and
                writes its pid to PIDFILE (it must not outlive normcheck)
  garbage       prints a line that is not JSON
  wrong_id      answers with another request id
  wrong_shape   returns y of shape [2, 2]
  wrong_dtype   returns y as float32 for an f64 problem
  bad_npy       returns a path to a file that is not .npy
  nan           NaN everywhere, on every case
  error_second  answers {"error": ...} to its second problem only, trigger or not (a failure
                in a benchmark's timed runs)
  error         answers {"error": ...}
  skip_empty    answers {"skip": ""} (a skip without its reason: the worker's error)
  no_hello      exits at once, before the handshake
  bad_protocol  answers the handshake with protocol 99
  hog           touches memory in 16 MiB steps up to 1 GiB, then answers correctly
  hog_child     starts a child that holds 1 GiB resident, then sleeps (the group is measured)
  spin          busy-loops (CPU, not sleep: only --backend-cpu or --timeout ends it)
  skip_repeat   answers the first problem of each shape and skips the others of that shape
                (a property's transformed problems: the case's gate passes, its property
                checks are SKIPPED)
  extra_output  correct, plus an output "Mean" the request did not name (a misnamed saved
                statistic)
  flip MARKER   crashes on the trigger like `crash`; each start answers the handshake with
                another name (start count kept in MARKER): a restart must be refused
Every other problem is answered {"skip": ...}.
"""

import json
import math
import os
import signal
import struct
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"
PROBLEMS = [0]  # problems answered so far (error_second)
SHAPES = set()  # shapes answered so far (skip_repeat)


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY"
    hl = struct.unpack("<H", data[8:10])[0]
    header = eval(data[10:10 + hl].decode("latin1"))  # a dict literal, from normcheck itself
    assert header["descr"] == "<f8", header
    n = 1
    for d in header["shape"]:
        n *= d
    return list(struct.unpack(f"<{n}d", data[10 + hl:10 + hl + 8 * n])), list(header["shape"])


def write_npy(path, values, shape, fmt="<f8"):
    code = {"<f8": "d", "<f4": "f"}[fmt]
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (fmt, dims)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack(f"<{len(values)}{code}", *values))


def norm(req, x, shape):
    c = req["convention"]
    m = 1
    for d in c["normalized_shape"]:
        m *= d
    y = []
    for r in range(len(x) // m):
        row = x[r * m:(r + 1) * m]
        mu = math.fsum(row) / m if req["op"] == "layer_norm" else 0.0
        v = math.fsum((a - mu) ** 2 for a in row) / m
        d = math.sqrt(v + c["eps"])
        y += [(a - mu) / d if d else math.nan for a in row]
    return y


def answer(req):
    rid = req["id"]
    c = req["convention"]
    if (req["op"] not in ("layer_norm", "rms_norm") or req["out_dtype"] != "f64" or req["inputs"]["x"]["dtype"] != "f64"
            or c["eps_placement"] != "inside_sqrt" or c["variance"] != "biased" or c["affine"] != "none"):
        return {"id": rid, "skip": "fake_worker: f64, inside_sqrt, biased, no affine only"}
    PROBLEMS[0] += 1
    if MODE == "error_second" and PROBLEMS[0] == 2:
        return {"id": rid, "error": "fake_worker: the second problem fails"}
    x, shape = read_npy(req["inputs"]["x"]["path"])
    if MODE == "skip_repeat":
        if tuple(shape) in SHAPES:
            return {"id": rid, "skip": "fake_worker: one problem of each shape"}
        SHAPES.add(tuple(shape))
    out = req["outputs"]["y"]["path"]
    trigger = x == [1.0, 2.0, 3.0, 4.0] and shape == [4]
    y = norm(req, x, shape)
    if MODE == "nan":
        y = [math.nan] * len(y)
    if trigger:
        if MODE in ("crash", "flip"):
            os.kill(os.getpid(), signal.SIGSEGV)
        if MODE == "exit":
            sys.stderr.write("fake_worker: exiting on [1, 2, 3, 4]\n")
            sys.exit(7)
        if MODE == "hang":
            while True:
                time.sleep(1000)
        if MODE == "garbage":
            return "this is not json"
        if MODE == "hog":
            held = []
            for _ in range(64):
                held.append(bytearray(b"\x01" * (16 << 20)))  # written, so resident
                time.sleep(0.02)
        if MODE == "hog_child":
            import subprocess
            subprocess.Popen([sys.executable, "-c", "import time; b = b'\\x01' * (1 << 30); time.sleep(600)"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            while True:
                time.sleep(1000)
        if MODE == "spin":
            while True:
                pass
        if MODE == "wrong_id":
            rid += 1000
        if MODE == "wrong_shape":
            write_npy(out, y, [2, 2])
            return {"id": rid, "outputs": {"y": {"path": out}}}
        if MODE == "wrong_dtype":
            write_npy(out, y, shape, "<f4")
            return {"id": rid, "outputs": {"y": {"path": out}}}
        if MODE == "bad_npy":
            with open(out, "w") as f:
                f.write("not an npy file")
        if MODE == "error":
            return {"id": rid, "error": "fake_worker: the framework refused [1, 2, 3, 4]"}
        if MODE == "skip_empty":
            return {"id": rid, "skip": ""}
    if not (trigger and MODE == "bad_npy"):
        write_npy(out, y, shape)
    reply = {"id": rid, "outputs": {"y": {"path": out, "dtype": "f64"}}}
    if MODE == "extra_output":
        extra = out + ".Mean.npy"
        write_npy(extra, [0.0], [1])
        reply["outputs"]["Mean"] = {"path": extra, "dtype": "f64"}
    return reply


def main():
    if MODE == "no_hello":
        sys.stderr.write("fake_worker: cannot start\n")
        sys.exit(4)
    for line in sys.stdin:
        req = json.loads(line)
        if req["type"] == "hello":
            if MODE == "spawn":
                import subprocess
                child = subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
                with open(sys.argv[2], "w") as f:
                    f.write(f"{child.pid}\n")
            reply = {"protocol": 99 if MODE == "bad_protocol" else 1, "name": f"fake_worker {MODE}"}
            if MODE == "flip":
                starts = int(open(sys.argv[2]).read() or 0) if os.path.exists(sys.argv[2]) else 0
                with open(sys.argv[2], "w") as f:
                    f.write(str(starts + 1))
                reply["name"] = f"fake_worker flip start {starts}"
        else:
            while MODE == "hang_all":
                time.sleep(1000)
            reply = answer(req)
        sys.stdout.write((reply if isinstance(reply, str) else json.dumps(reply)) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
