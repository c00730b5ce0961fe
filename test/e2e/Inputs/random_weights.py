#!/usr/bin/env python3
"""Writes a safetensors file of random float32 tensors.

usage: random_weights.py OUT SEED NAME=D0xD1x... [...]
"""
import json
import struct
import sys

import numpy as np

out, seed = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(seed)
header, blobs, offset = {}, [], 0
for spec in sys.argv[3:]:
    name, shape = spec.split("=")
    dims = [int(d) for d in shape.split("x")]
    data = (rng.standard_normal(dims) * 0.1).astype(np.float32).tobytes()
    header[name] = {"dtype": "F32", "shape": dims,
                    "data_offsets": [offset, offset + len(data)]}
    blobs.append(data)
    offset += len(data)
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
with open(out, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
