"""nnbench's tensor files, both ways (src/engines/worker/tensor_file.h).

A file is an 8-byte little-endian header length, a JSON header
{"tensors": [{"name", "dtype": "float32" | "int64", "shape", "offset"}]}
and the raw little-endian data, each tensor at `offset` bytes after the
header. Plain stdlib and numpy, so every framework's environment reads it.
"""
from __future__ import annotations

import json
import os
import struct
from typing import Dict

import numpy as np

_DTYPES = {"float32": np.float32, "int64": np.int64}


def read(path: str) -> Dict[str, np.ndarray]:
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n).decode("utf-8"))
        data = f.read()
    out = {}
    for t in header["tensors"]:
        if t["dtype"] not in _DTYPES:
            raise ValueError(f"{path}: tensor {t['name']!r} is {t['dtype']!r}; "
                             "nnbench's tensor files hold float32 and int64")
        dtype = np.dtype(_DTYPES[t["dtype"]]).newbyteorder("<")
        count = int(np.prod(t["shape"])) if t["shape"] else 1
        a = np.frombuffer(data, dtype=dtype, count=count, offset=t["offset"])
        out[t["name"]] = a.reshape(t["shape"]).astype(dtype.newbyteorder("="))
    return out


def write(path: str, tensors: Dict[str, np.ndarray]) -> None:
    """Atomically: a reader never sees half a file."""
    header, blobs, offset = [], [], 0
    for name, a in tensors.items():
        a = np.asarray(a)  # a 0-d array stays one (ascontiguousarray makes it 1-d)
        kind = "int64" if a.dtype.kind in "iu" else "float32"
        raw = a.astype("<i8" if kind == "int64" else "<f4").tobytes()
        header.append({"name": name, "dtype": kind, "shape": list(a.shape),
                       "offset": offset})
        blobs.append(raw)
        offset += len(raw)
    head = json.dumps({"tensors": header}).encode("utf-8")
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)
