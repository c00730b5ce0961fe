"""safetensors files for the tests, with numpy only: one writer and one
reader shared by the test scripts (which put this folder on sys.path)."""
import json
import struct

import numpy as np

DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16,
          "I64": np.int64, "I32": np.int32}
NAMES = {np.dtype(t): name for name, t in DTYPES.items()}


def encode(tensors):
    """The bytes of a file holding `tensors`, name -> numpy array (bool is
    stored as I32), or name -> ("BF16", uint16 array of the bits)."""
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        if isinstance(array, tuple):
            dtype, array = array
        else:
            if array.dtype == np.bool_:
                array = array.astype(np.int32)
            dtype = NAMES[array.dtype]
        data = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def write(path, tensors):
    with open(path, "wb") as f:
        f.write(encode(tensors))


def read_metadata(path):
    """The file's "__metadata__" string map ({} when it has none)."""
    with open(path, "rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
    return header.get("__metadata__", {})


def read(path):
    """name -> numpy array; BF16 is widened to float32."""
    with open(path, "rb") as f:
        raw = f.read()
    (size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + size])
    result = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        blob = raw[8 + size + start:8 + size + end]
        if info["dtype"] == "BF16":
            bits = np.frombuffer(blob, dtype=np.uint16).astype(np.uint32)
            array = (bits << 16).view(np.float32)
        else:
            array = np.frombuffer(blob, dtype=DTYPES[info["dtype"]])
        result[name] = array.reshape(info["shape"])
    return result
