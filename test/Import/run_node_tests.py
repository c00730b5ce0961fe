#!/usr/bin/python3
"""Runs ONNX's backend node tests (Debian's libonnx-testdata) through
parc-translate and parc-run --reference --precision f64 and, with
--compile, as a 1-rank program built by parc-compile (f32 kernels).

For every op the importer supports, each test directory node/test_<op>*
(whose model contains that op, or is an *_expanded form of it) and the
pytorch-converted / pytorch-operator tests made only of supported ops are
imported, their test_data_set_*/input_*.pb written to a safetensors file,
run, and compared with output_*.pb (rtol 1e-4, atol 1e-5).

A test is skipped only when parc-translate exits 1 with a message saying
what is unsupported (an op variant, an element type, an opset); the reason
is printed. When the importer says an input must be a constant (Reshape's
shape, Slice's bounds, ...) and that input is a graph input of the test,
the input is frozen into an initializer with the test's value and the test
is run again ("frozen"). Any other failure is a failure.

usage: run_node_tests.py --translate PATH --run PATH [--compile PATH]
                         [--data DIR] [--work DIR] [-v]
"""
import argparse
import collections
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
import safetensors_file  # noqa: E402

# ONNX op -> the snake_case prefix of its node test directories.
OPS = {
    "Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div",
    "Relu": "relu", "Tanh": "tanh", "Sigmoid": "sigmoid", "Exp": "exp",
    "Erf": "erf", "Sqrt": "sqrt", "Pow": "pow", "Softmax": "softmax",
    "LogSoftmax": "logsoftmax", "LayerNormalization": "layer_normalization",
    "Gemm": "gemm", "MatMul": "matmul", "Reshape": "reshape",
    "Transpose": "transpose", "Gather": "gather", "ReduceMean": "reduce_mean",
    "ReduceSum": "reduce_sum", "ReduceLogSumExp": "reduce_log_sum_exp",
    "Concat": "concat", "Split": "split",
    "Slice": "slice", "Unsqueeze": "unsqueeze", "Squeeze": "squeeze",
    "Cast": "cast", "Constant": "constant", "Identity": "identity",
    "Where": "where", "Trilu": "tri", "SoftmaxCrossEntropyLoss": "sce",
    "Neg": "neg", "Log": "log", "Reciprocal": "reciprocal",
    "Flatten": "flatten", "Expand": "expand", "ReduceMax": "reduce_max",
    "Conv": "conv", "MaxPool": "maxpool", "AveragePool": "averagepool",
    "GlobalAveragePool": "globalaveragepool",
    "BatchNormalization": "batchnorm",
    "Equal": "equal", "Less": "less", "Greater": "greater",
    "LessOrEqual": "less_equal", "GreaterOrEqual": "greater_equal",
    "Not": "not", "And": "and", "Or": "or", "Xor": "xor",
    # With constant indices only.
    "GatherND": "gathernd",
    # Evaluated at import when their inputs are known (OnnxFolding.cpp).
    "Shape": "shape", "Size": "size", "ConstantOfShape": "constantofshape",
    "Range": "range", "Mod": "mod",
    "Abs": "abs", "Floor": "floor", "Ceil": "ceil", "Cos": "cos",
    "Sin": "sin", "Min": "min", "Max": "max", "GatherElements": "gather_elements",
    # Only as Where(IsNaN(softmax), 0, softmax): the node tests skip.
    "IsNaN": "isnan",
}

# Tests whose expected output encodes a semantic parc deliberately differs
# on; reported as "xfail" with the reason, never counted as passed.
XFAIL = {
    "test_cast_FLOAT_to_BFLOAT16":
        "ONNX 1.12's expected output truncates float to bfloat16; parc.cast "
        "rounds to nearest even (as PyTorch does)",
}


def write_safetensors(path, tensors, onnx_types={}):
    stored = {}
    for name, array in tensors.items():
        if onnx_types.get(name) == onnx.TensorProto.BFLOAT16:
            # onnx 1.12's to_array gives bfloat16 as float32 or raw bits.
            if array.dtype == np.float32:
                array = (array.view(np.uint32) >> 16).astype(np.uint16)
            stored[name] = ("BF16", array)
        else:
            stored[name] = array
    safetensors_file.write(path, stored)


def load_pb(path):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return tensor


def find_tests(data):
    """(group, test directory) pairs."""
    tests = []
    for op, prefix in OPS.items():
        for path in sorted(glob.glob(f"{data}/node/test_{prefix}*")):
            name = os.path.basename(path)
            if not re.fullmatch(f"test_{prefix}(_.*)?", name) and op != "Trilu":
                continue
            model = onnx.load(os.path.join(path, "model.onnx"))
            op_types = {n.op_type for n in model.graph.node}
            if op in op_types or (name.endswith("_expanded") and
                                  name[:-len("_expanded")] in
                                  map(os.path.basename, glob.glob(
                                      f"{data}/node/test_{prefix}*"))):
                tests.append((op, path))
    for suite in ("pytorch-converted", "pytorch-operator"):
        for path in sorted(glob.glob(f"{data}/{suite}/test_*")):
            model = onnx.load(os.path.join(path, "model.onnx"))
            op_types = {n.op_type for n in model.graph.node}
            if op_types and op_types <= set(OPS):
                tests.append((suite, path))
    return tests


class Skip(Exception):
    pass


def import_model(args, model_path, out, shapes):
    # The float initializers are the model's weights (parameters).
    command = [args.translate, "--import-onnx", model_path, "-o", out,
               "--weights-out", out + ".weights"]
    for name, shape in shapes.items():
        command += ["--input-shape", name + "=" + ",".join(map(str, shape))]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode == 0:
        return None
    message = result.stderr.strip()
    if result.returncode != 1:
        raise RuntimeError(f"parc-translate exited {result.returncode}: "
                           f"{message}")
    return message


def reason_of(message):
    """The importer's own words for what it does not support, or None."""
    m = re.search(r"error: (.*)", message)
    text = m.group(1) if m else message
    if "unsupported" in text or "uses opset" in text:
        text = re.sub(r"; supported ops.*", "", text)
        text = re.sub(r"'/[^']*/model.onnx' ", "", text)
        return text
    return None


def tensor_input(data_set, index):
    """The array of input_<index>.pb and its ONNX element type; None for a
    non-tensor (sequence, optional) input, which the importer rejects."""
    pb = os.path.join(data_set, f"input_{index}.pb")
    try:
        tensor = load_pb(pb)
        return numpy_helper.to_array(tensor), tensor.data_type
    except Exception:
        return None


def run(command, what):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{what} exited {result.returncode}: "
                           f"{(result.stderr or result.stdout).strip()}")


def check_outputs(model, data_set, actual, label):
    """Compares `actual` with the data set's output_*.pb; `label` prefixes
    the failure."""
    for index, output in enumerate(model.graph.output):
        expected_pb = load_pb(os.path.join(data_set, f"output_{index}.pb"))
        expected = numpy_helper.to_array(expected_pb)
        if (output.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16
                and expected.dtype != np.float32):
            expected = (expected.astype(np.uint32) << 16).view(np.float32)
        got = actual[output.name]
        if got.shape != expected.shape:
            raise RuntimeError(f"{label}output '{output.name}' has shape "
                               f"{got.shape}, expected {expected.shape}")
        if not np.allclose(got.astype(np.float64),
                           expected.astype(np.float64), rtol=1e-4,
                           atol=1e-5, equal_nan=True):
            error = np.max(np.abs(got.astype(np.float64) -
                                  expected.astype(np.float64)))
            raise RuntimeError(f"{label}output '{output.name}' differs (max "
                               f"abs error {error:g})")


def run_case(args, test_dir, data_set, work):
    model = onnx.load(os.path.join(test_dir, "model.onnx"))
    initializers = {t.name for t in model.graph.initializer}
    input_names = [i.name for i in model.graph.input
                   if i.name not in initializers]
    inputs, onnx_types = {}, {}
    for index, name in enumerate(input_names):
        loaded = tensor_input(data_set, index)
        if loaded is not None:
            inputs[name] = loaded[0]
    # The model's declared type: the test data stores BFLOAT16 as UINT16.
    for i in model.graph.input:
        onnx_types[i.name] = i.type.tensor_type.elem_type
    model_path = os.path.join(test_dir, "model.onnx")
    mlir = os.path.join(work, "model.mlir")
    if os.path.exists(mlir + ".weights"):  # an earlier test's
        os.remove(mlir + ".weights")
    frozen, shapes = [], {}
    while True:
        message = import_model(args, model_path, mlir, shapes)
        if message is None:
            break
        m = re.search(r"input '([^']+)' \([^)]*\) must be a constant", message)
        if m and m.group(1) in inputs and m.group(1) not in frozen:
            # Freeze that graph input into an initializer with the test value.
            name = m.group(1)
            frozen.append(name)
            shapes.pop(name, None)
            # Below IR 4 an initializer is also listed as a graph input.
            if model.ir_version >= 4:
                graph_inputs = [i for i in model.graph.input
                                if i.name != name]
                del model.graph.input[:]
                model.graph.input.extend(graph_inputs)
            model.graph.initializer.append(
                numpy_helper.from_array(inputs.pop(name), name))
            model_path = os.path.join(work, "frozen.onnx")
            onnx.save(model, model_path)
            continue
        # A dynamic dimension: fix it to the test data's, as a user would.
        m = re.search(r"graph input '([^']+)' has (a dynamic dimension|no "
                      r"shape)", message)
        if m and m.group(1) in inputs and m.group(1) not in shapes:
            shapes[m.group(1)] = inputs[m.group(1)].shape
            continue
        reason = reason_of(message)
        if reason is None:
            raise RuntimeError(f"import failed: {message}")
        raise Skip(reason)
    in_path = os.path.join(work, "in.safetensors")
    if inputs:
        write_safetensors(in_path, inputs, onnx_types)
    input_flags = ["--inputs", in_path] if inputs else []
    if os.path.exists(mlir + ".weights"):
        input_flags += ["--weights", mlir + ".weights"]
    out_path = os.path.join(work, "out.safetensors")
    run([args.run, "--reference", "--precision", "f64", mlir, "--out",
         out_path] + input_flags, "parc-run")
    check_outputs(model, data_set, safetensors_file.read(out_path), "")
    if args.compile:
        compiled = os.path.join(work, "compiled")
        shutil.rmtree(compiled, ignore_errors=True)
        run([args.compile, mlir, "-o", compiled], "parc-compile")
        run([os.path.join(compiled, "launch.sh"), "--out", out_path] +
            input_flags, "the compiled program")
        check_outputs(model, data_set, safetensors_file.read(out_path),
                      "compiled: ")
    return frozen


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--translate", required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--compile", default=None,
                        help="parc-compile: also run each test as a 1-rank "
                             "compiled program")
    parser.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    parser.add_argument("--work", default=None)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="parc-node-tests-")
    os.makedirs(work, exist_ok=True)

    counts = collections.OrderedDict()
    reasons = collections.defaultdict(collections.Counter)
    failures = []
    for group, test_dir in find_tests(args.data):
        c = counts.setdefault(group, collections.Counter())
        name = os.path.basename(test_dir)
        data_sets = sorted(glob.glob(os.path.join(test_dir, "test_data_set_*")))
        try:
            frozen = []
            for data_set in data_sets:
                frozen = run_case(args, test_dir, data_set, work)
            c["passed"] += 1
            if args.verbose:
                print(f"  PASS {name}" +
                      (f" (frozen: {', '.join(frozen)})" if frozen else ""))
        except Skip as skip:
            c["skipped"] += 1
            reasons[group][str(skip)] += 1
            if args.verbose:
                print(f"  SKIP {name}: {skip}")
        except Exception as error:  # a failure of a supported test
            if name in XFAIL:
                c["xfail"] += 1
                print(f"  XFAIL {name}: {XFAIL[name]}")
                continue
            c["failed"] += 1
            failures.append(f"{name}: {error}")
            print(f"  FAIL {name}: {error}")

    total = collections.Counter()
    for group, c in counts.items():
        total.update(c)
        line = (f"{group}: {c['passed']} passed, {c['failed']} failed, "
                f"{c['skipped']} skipped")
        if c["xfail"]:
            line += f", {c['xfail']} expected failure"
        if reasons[group]:
            line += " (unsupported: " + "; ".join(
                f"{r} x{n}" if n > 1 else r
                for r, n in reasons[group].items()) + ")"
        print(line)
    print(f"TOTAL: {total['passed']} passed, {total['failed']} failed, "
          f"{total['skipped']} skipped, {total['xfail']} expected failure")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if total["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
