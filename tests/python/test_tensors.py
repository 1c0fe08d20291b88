"""tensors.py against the format it documents, bytes written by hand."""
from __future__ import annotations

import json
import os
import struct

import numpy as np
import pytest

import tensors


def handmade(path: str) -> None:
    """Two tensors in the documented layout, without tensors.py."""
    head = json.dumps({"tensors": [
        {"name": "w", "dtype": "float32", "shape": [2, 2], "offset": 0},
        {"name": "ids", "dtype": "int64", "shape": [3], "offset": 16}]}).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(head)) + head)
        f.write(struct.pack("<4f", 1.5, -2.0, 0.25, 8.0))
        f.write(struct.pack("<3q", 7, -1, 2**40))


def test_reads_the_documented_layout(tmp_path) -> None:
    p = str(tmp_path / "t")
    handmade(p)
    t = tensors.read(p)
    assert t["w"].dtype == np.float32 and t["w"].tolist() == [[1.5, -2.0], [0.25, 8.0]]
    assert t["ids"].dtype == np.int64 and t["ids"].tolist() == [7, -1, 2**40]


def test_writes_what_it_reads_and_leaves_no_partial_file(tmp_path) -> None:
    p = str(tmp_path / "t")
    x: dict = {"a": np.arange(6, dtype=np.float64).reshape(2, 3),  # stored as float32
         "b": np.array([3, 4], dtype=np.int32),                # stored as int64
         "s": np.array(2.5, dtype=np.float32)}                 # a scalar
    tensors.write(p, x)
    assert os.listdir(tmp_path) == ["t"]
    with open(p, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    assert [(h["name"], h["dtype"], h["shape"]) for h in header["tensors"]] == [
        ("a", "float32", [2, 3]), ("b", "int64", [2]), ("s", "float32", [])]
    back = tensors.read(p)
    assert back["a"].dtype == np.float32 and back["a"].tolist() == x["a"].tolist()
    assert back["b"].dtype == np.int64 and back["b"].tolist() == [3, 4]
    assert float(back["s"]) == 2.5


def test_an_unknown_dtype_is_refused(tmp_path) -> None:
    p = str(tmp_path / "t")
    head = json.dumps({"tensors": [{"name": "x", "dtype": "float16", "shape": [1],
                                    "offset": 0}]}).encode()
    with open(p, "wb") as f:
        f.write(struct.pack("<Q", len(head)) + head + b"\0\0")
    with pytest.raises(ValueError, match="'x' is 'float16'"):
        tensors.read(p)
