#!/usr/bin/env python3
"""Writes small safetensors files for parc-run tests, with numpy only.

usage: make_safetensors.py OUT NAME=DTYPE:SHAPE:VALUE [...] [--truncate N]
  SHAPE is like 2x3 (empty for a scalar); every element gets VALUE.
  --truncate N drops the last N bytes of the file.
"""
import json
import struct
import sys

import numpy as np

DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64,
          "I32": np.int32, "F16": np.float16}

out = sys.argv[1]
truncate = 0
header, blobs, offset = {}, [], 0
args = sys.argv[2:]
if "--truncate" in args:
    i = args.index("--truncate")
    truncate = int(args[i + 1])
    del args[i:i + 2]
for spec in args:
    name, rest = spec.split("=", 1)
    dtype, shape, value = rest.split(":")
    dims = [int(d) for d in shape.split("x")] if shape else []
    data = np.full(dims, float(value)).astype(DTYPES[dtype]).tobytes()
    header[name] = {"dtype": dtype, "shape": dims,
                    "data_offsets": [offset, offset + len(data)]}
    blobs.append(data)
    offset += len(data)
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
content = struct.pack("<Q", len(text)) + text + b"".join(blobs)
with open(out, "wb") as f:
    f.write(content[:len(content) - truncate])
