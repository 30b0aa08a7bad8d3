"""Arrays as bytes: ``.npy``/``.npz`` buffers written and read with ``allow_pickle=False`` only.

Object arrays are refused before anything is written, so nothing stored is ever unpickled.

Reading is serialised by a lock: numpy parses each ``.npy`` header with ``ast.literal_eval``,
and CPython 3.11 (before 3.11.8) can raise ``SystemError: AST constructor recursion depth
mismatch`` when two threads build ASTs at once (cpython gh-106905) — seen here when many
dashboard sessions read snapshots together.
"""

from __future__ import annotations

import io
import threading
import zipfile
from typing import Any

import numpy as np


def check_array(name: Any, arr: Any) -> np.ndarray:
    if not isinstance(name, str) or not name or "/" in name:
        raise ValueError(f"array name must be a non-empty string without '/', got {name!r}")
    a = np.asarray(arr)
    if a.dtype.hasobject:
        raise ValueError(
            f"array {name!r} has dtype {a.dtype} (Python objects); only numeric, "
            "bool or fixed-width string arrays can be stored (nothing is pickled)"
        )
    return a


def pack_npy(name: str, arr: Any) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, check_array(name, arr), allow_pickle=False)
    return buf.getvalue()


def pack_npz(arrays: dict[str, Any]) -> bytes:
    """The arrays as an ``.npz`` without compression: a run's snapshots are float arrays that deflate
    shrinks by ~15 % at ~0.5 s of CPU per 16 MB (measured: zlib level 6 took 4.6 of the 12 s of a
    160-replica ``engine run``), so storing them as they are is the better trade."""
    checked = {k: check_array(k, v) for k, v in arrays.items()}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, a in checked.items():
            with zf.open(name + ".npy", "w", force_zip64=True) as f:
                np.lib.format.write_array(f, a, allow_pickle=False)
    return buf.getvalue()


_READ_LOCK = threading.Lock()


def unpack_npy(blob: bytes) -> np.ndarray:
    with _READ_LOCK:
        return np.load(io.BytesIO(blob), allow_pickle=False)


def unpack_npz(blob: bytes) -> dict[str, np.ndarray]:
    with _READ_LOCK, np.load(io.BytesIO(blob), allow_pickle=False) as z:
        return {k: z[k] for k in z.files}
