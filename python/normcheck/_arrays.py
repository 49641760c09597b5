"""Arrays in and out of normcheck's core: .npy bytes in the worker protocol's encoding
(tools/adapters/normcheck_worker.py): f64, f32, f16 as themselves; bf16 and fp8 as float32
values beside their dtype name; int8 as int8. Torch tensors (any device, bf16 included),
ml_dtypes arrays and anything with __array__ are accepted."""

import io

import numpy as np

from . import worker

_NUMPY_NAMES = {np.dtype(np.float64): "f64", np.dtype(np.float32): "f32", np.dtype(np.float16): "f16", np.dtype(np.int8): "int8"}
_OTHER_NAMES = {"bfloat16": "bf16", "float8_e4m3fn": "fp8_e4m3fn", "float8_e5m2": "fp8_e5m2"}


def to_numpy(a):
    """(numpy array, dtype name or None) of an array-like: a torch tensor is detached and
    moved to the CPU, bf16/fp8 widened to float32 (exact) with its dtype name kept."""
    if hasattr(a, "detach") and hasattr(a, "cpu"):  # torch.Tensor
        t = a.detach().cpu()
        name = str(t.dtype).replace("torch.", "")
        if name in _OTHER_NAMES:
            return t.float().numpy(), _OTHER_NAMES[name]
        arr = t.numpy()
        return arr, _NUMPY_NAMES.get(arr.dtype)
    arr = np.asarray(a)
    if arr.dtype.name in _OTHER_NAMES:  # ml_dtypes
        return arr.astype(np.float32), _OTHER_NAMES[arr.dtype.name]
    return arr, _NUMPY_NAMES.get(arr.dtype)


def encode(a, dtype=None, what="array"):
    """(npy bytes, dtype name) of an array-like in `dtype` (default: its own). Raises
    TypeError for a dtype normcheck has no name for (give one: (array, "bf16"))."""
    arr, own = to_numpy(a)
    name = dtype or own
    if name is None:
        raise TypeError(f"{what}: dtype {arr.dtype} has no normcheck dtype; pass (array, 'f32' | 'f16' | 'bf16' | 'f64' | ...)")
    buf = io.BytesIO()
    np.save(buf, worker.wire_array(arr, name), allow_pickle=False)
    return buf.getvalue(), name


def encode_named(values, what):
    """{name: (npy bytes, dtype)} of {name: array | (array, dtype)}."""
    out = {}
    for name, v in values.items():
        if isinstance(v, tuple):
            if len(v) != 2 or not isinstance(v[1], str):
                raise TypeError(f"{what}.{name}: expected an array or (array, dtype name)")
            out[name] = encode(v[0], v[1], f"{what}.{name}")
        else:
            out[name] = encode(v, None, f"{what}.{name}")
    return out


def decode(npy):
    """The array of .npy bytes."""
    return np.load(io.BytesIO(npy), allow_pickle=False)
