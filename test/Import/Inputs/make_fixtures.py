#!/usr/bin/python3
"""Writes the tiny ONNX fixtures of test/Import and test/tools/parc-translate
(run with Debian's /usr/bin/python3, which has onnx 1.12):

  /usr/bin/python3 test/Import/Inputs/make_fixtures.py test/Import/Inputs
"""
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__)
rng = np.random.default_rng(0)


def save(model, name, check=True):
    model.ir_version = 8
    if check:
        onnx.checker.check_model(model)
    with open(os.path.join(out, name), "wb") as f:
        f.write(model.SerializeToString())


def save_newer(model, name, ir_version):
    model.ir_version = ir_version
    with open(os.path.join(out, name), "wb") as f:
        f.write(model.SerializeToString())


def model_of(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def init(name, array):
    return numpy_helper.from_array(array.astype(np.float32), name)


# An MLP that ends in its loss: Gemm, Relu, Gemm, then mean cross-entropy
# written as LogSoftmax and a one-hot product (labels given one-hot).
mlp = model_of(
    [helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"],
                      transB=1, name="fc1"),
     helper.make_node("Relu", ["h"], ["a"], name="relu"),
     helper.make_node("Gemm", ["a", "fc2.weight", "fc2.bias"], ["logits"],
                      transB=1, name="fc2")],
    [f32("x", [4, 8])], [f32("logits", [4, 3])],
    [init("fc1.weight", rng.normal(0, 0.3, (16, 8))),
     init("fc1.bias", np.zeros(16)),
     init("fc2.weight", rng.normal(0, 0.3, (3, 16))),
     init("fc2.bias", np.zeros(3))])
save(mlp, "mlp.onnx")

# The same MLP ending in its loss: SoftmaxCrossEntropyLoss (mean) against
# integer labels, which imports as parc.cross_entropy.
mlp.graph.node.append(helper.make_node(
    "SoftmaxCrossEntropyLoss", ["logits", "labels"], ["loss"], name="loss"))
mlp.graph.input.append(
    helper.make_tensor_value_info("labels", TensorProto.INT64, [4]))
del mlp.graph.output[:]
mlp.graph.output.extend([f32("loss", [])])
save(mlp, "mlp-loss.onnx")

# GELU (erf form) and layer norm as PyTorch exports them, unfused.
c = lambda name, v: helper.make_node(
    "Constant", [], [name], value=numpy_helper.from_array(
        np.array(v, dtype=np.float32), name + "_value"))
axes = helper.make_node("Constant", [], ["axes"], value=numpy_helper.from_array(
    np.array([-1], dtype=np.int64), "axes_value"))
patterns = model_of(
    [c("sqrt2", 1.4142135381698608), c("one", 1.0), c("half", 0.5),
     c("two", 2.0), c("eps", 1e-5),
     helper.make_node("Div", ["x", "sqrt2"], ["d"]),
     helper.make_node("Erf", ["d"], ["e"]),
     helper.make_node("Add", ["e", "one"], ["a"]),
     helper.make_node("Mul", ["x", "a"], ["m"]),
     helper.make_node("Mul", ["m", "half"], ["g"]),
     helper.make_node("ReduceMean", ["g"], ["mean"], axes=[-1]),
     helper.make_node("Sub", ["g", "mean"], ["centered"]),
     helper.make_node("Pow", ["centered", "two"], ["sq"]),
     helper.make_node("ReduceMean", ["sq"], ["var"], axes=[-1]),
     helper.make_node("Add", ["var", "eps"], ["ve"]),
     helper.make_node("Sqrt", ["ve"], ["std"]),
     helper.make_node("Div", ["centered", "std"], ["n"]),
     helper.make_node("Mul", ["n", "ln.weight"], ["scaled"]),
     helper.make_node("Add", ["scaled", "ln.bias"], ["y"])],
    [f32("x", [2, 8])], [f32("y", [2, 8])],
    [init("ln.weight", np.ones(8)), init("ln.bias", np.zeros(8))])
save(patterns, "patterns.onnx")

# A dynamic batch dimension.
dynamic = model_of([helper.make_node("Relu", ["x"], ["y"])],
                   [f32("x", ["batch", 8])], [f32("y", ["batch", 8])])
save(dynamic, "dynamic.onnx")

# An op parc does not import.
lrn = model_of([helper.make_node("LRN", ["x"], ["y"], name="lrn1", size=3)],
               [f32("x", [1, 4, 4, 4])], [f32("y", [1, 4, 4, 4])])
save(lrn, "unsupported-op.onnx")

# A zero stride, which libonnx's shape inference would divide by.
zero_stride = model_of(
    [helper.make_node("Conv", ["x", "w"], ["y"], name="conv1",
                      strides=[0, 1])],
    [f32("x", [1, 1, 4, 4])], [f32("y", [1, 1, 2, 2])],
    [init("w", np.ones((1, 1, 3, 3)))])
save(zero_stride, "conv-zero-stride.onnx")

# Training-mode BatchNormalization over one value per channel, which has no
# unbiased variance: parc.batch_norm's check, made at import.
one_value = model_of(
    [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"],
                      ["y", "rm", "rv"], name="bn1", training_mode=1)],
    [f32("x", [1, 3])], [f32("y", [1, 3]), f32("rm", [3]), f32("rv", [3])],
    [init(name, np.ones(3)) for name in ["s", "b", "m", "v"]])
save(one_value, "batchnorm-one-value.onnx")

# Groups that do not divide the channels; a pooling window larger than the
# image: parc's verifiers say so.
conv_groups = model_of(
    [helper.make_node("Conv", ["x", "w"], ["y"], name="conv1", group=3)],
    [f32("x", [1, 4, 5, 5])], [f32("y", [1, 3, 3, 3])],
    [init("w", np.ones((3, 1, 3, 3)))])
save(conv_groups, "conv-groups.onnx")
pool_window = model_of(
    [helper.make_node("MaxPool", ["x"], ["y"], name="pool1",
                      kernel_shape=[5, 5])],
    [f32("x", [1, 1, 3, 3])], [f32("y", ["n", "c", "h", "w"])])
save(pool_window, "pool-window.onnx")

# Opset 11: below the supported range.
old = model_of([helper.make_node("Relu", ["x"], ["y"])], [f32("x", [2])],
               [f32("y", [2])], opset=11)
save(old, "opset11.onnx")

# The checker rejects it: a node reads a value nothing defines.
bad = model_of([helper.make_node("Relu", ["nowhere"], ["y"])],
               [f32("x", [2])], [f32("y", [2])])
save(bad, "checker-fails.onnx", check=False)

# Truncated: the first half of the MLP's bytes.
raw = mlp.SerializeToString()
with open(os.path.join(out, "truncated.onnx"), "wb") as f:
    f.write(raw[:len(raw) // 2])

# Not ONNX at all.
with open(os.path.join(out, "not-onnx.onnx"), "w") as f:
    f.write("module {\n  func.func @forward() {\n    return\n  }\n}\n")

# Shapes that do not fit: the checker accepts it, strict shape inference
# does not ([2, 3] + [4] cannot broadcast).
mismatch = model_of([helper.make_node("Add", ["a", "b"], ["c"], name="add")],
                    [f32("a", [2, 3]), f32("b", [4])], [f32("c", [2, 3])])
save(mismatch, "shape-mismatch.onnx")

# Shapes ONNX's shape inference lets through but parc's ops do not: Gemm
# with different contracting sizes (found by byte-mutation fuzzing of
# mlp.onnx), where the output's declared shape is all ONNX checks.
contract = model_of([helper.make_node("Gemm", ["a", "b"], ["c"], name="gemm",
                                      transB=1)],
                    [f32("a", [2, 3]), f32("b", [4, 5])], [f32("c", [2, 4])])
save(contract, "gemm-mismatch.onnx")

# x[:, 1:] as torch exports it: the end is INT64_MAX (it read as an empty
# slice when the integer went through double and overflowed).
tail = model_of([helper.make_node("Slice", ["x", "starts", "ends", "axes"],
                                  ["y"], name="tail")],
                [f32("x", [2, 5])], [f32("y", [2, 4])],
                [numpy_helper.from_array(np.array([1], np.int64), "starts"),
                 numpy_helper.from_array(
                     np.array([np.iinfo(np.int64).max], np.int64), "ends"),
                 numpy_helper.from_array(np.array([1], np.int64), "axes")])
save(tail, "slice-to-end.onnx")

# ReduceLogSumExp over the last axis (kept) and over the first and last
# (dropped), with numpy's values as the expected outputs; one row holds
# values near 1000, where an unshifted exp overflows.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", ".."))
import safetensors_file  # noqa: E402

lse = model_of(
    [helper.make_node("ReduceLogSumExp", ["x"], ["last"], axes=[-1],
                      keepdims=1, name="last"),
     helper.make_node("ReduceLogSumExp", ["x"], ["outer"], axes=[0, 2],
                      keepdims=0, name="outer")],
    [f32("x", [2, 3, 4])], [f32("last", [2, 3, 1]), f32("outer", [3])])
save(lse, "log-sum-exp.onnx")
x = rng.normal(0, 3, (2, 3, 4)).astype(np.float32)
x[1, 2] += 1000


def log_sum_exp(values, axes, keepdims):
    shift = values.max(axis=axes, keepdims=True)
    total = np.log(np.exp(values - shift).sum(axis=axes, keepdims=True)) + shift
    return total if keepdims else total.squeeze(axis=axes)


safetensors_file.write(os.path.join(out, "log-sum-exp.inputs.safetensors"),
                       {"x": x})
x64 = x.astype(np.float64)
safetensors_file.write(
    os.path.join(out, "log-sum-exp.outputs.safetensors"),
    {"last": log_sum_exp(x64, (2,), True).astype(np.float32),
     "outer": log_sum_exp(x64, (0, 2), False).astype(np.float32)})

# Shape arithmetic as exporters leave it, all evaluated at import
# (lib/Import/OnnxFolding.cpp): a reshape to [batch, seq, 2, 4] built from
# Shape, Gather, Unsqueeze and Concat; a causal mask from Range, Less,
# ConstantOfShape and Where; x[..., 1:] with INT64_MAX as Slice's end; an
# int64 beyond 2^53 that must stay exact. No float initializers: float
# initializers are parameters, which folding leaves alone.
def i64(name, values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


def constant(name, array):
    return helper.make_node("Constant", [], [name],
                            value=numpy_helper.from_array(array, name))


exact = 2**53 + 1
shapes = model_of(
    [helper.make_node("Shape", ["x"], ["shape"]),
     helper.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
     helper.make_node("Gather", ["shape", "one"], ["seq"], axis=0),
     helper.make_node("Unsqueeze", ["batch", "axis0"], ["batch1"]),
     helper.make_node("Unsqueeze", ["seq", "axis0"], ["seq1"]),
     helper.make_node("Concat", ["batch1", "seq1", "heads", "head_dim"],
                      ["split_shape"], axis=0),
     helper.make_node("Reshape", ["x", "split_shape"], ["heads_out"]),
     helper.make_node("Range", ["zero", "seq", "one"], ["positions"]),
     helper.make_node("Unsqueeze", ["positions", "axis1"], ["rows"]),
     helper.make_node("Unsqueeze", ["positions", "axis0"], ["columns"]),
     helper.make_node("Less", ["rows", "columns"], ["future"]),
     helper.make_node("Concat", ["seq1", "seq1"], ["square"], axis=0),
     helper.make_node("ConstantOfShape", ["square"], ["zeros"],
                      value=numpy_helper.from_array(
                          np.array([0], np.float32))),
     constant("minus_inf", np.array(-np.inf, np.float32)),
     helper.make_node("Where", ["future", "minus_inf", "zeros"], ["mask"]),
     helper.make_node("Slice", ["x", "one1", "end", "axis2"], ["tail"]),
     helper.make_node("ConstantOfShape", ["one1"], ["big"],
                      value=numpy_helper.from_array(
                          np.array([exact], np.int64))),
     helper.make_node("Add", ["big", "one1"], ["bigger"])],
    [f32("x", [2, 6, 8])],
    [f32("heads_out", [2, 6, 2, 4]), f32("mask", [6, 6]), f32("tail", [2, 6, 7]),
     helper.make_tensor_value_info("bigger", TensorProto.INT64, [1])],
    [i64("zero", 0), i64("one", 1), i64("one1", [1]), i64("axis0", [0]),
     i64("axis1", [1]), i64("axis2", [2]), i64("heads", [2]),
     i64("head_dim", [4]), i64("end", [np.iinfo(np.int64).max])])
save(shapes, "shape-arithmetic.onnx")
x = rng.normal(0, 1, (2, 6, 8)).astype(np.float32)
positions = np.arange(6)
safetensors_file.write(os.path.join(out, "shape-arithmetic.inputs.safetensors"),
                       {"x": x})
safetensors_file.write(
    os.path.join(out, "shape-arithmetic.outputs.safetensors"),
    {"heads_out": x.reshape(2, 6, 2, 4),
     "mask": np.where(positions[:, None] < positions[None, :], -np.inf,
                      0).astype(np.float32),
     "tail": x[..., 1:], "bigger": np.array([exact + 1], np.int64)})

# Shape arithmetic that cannot be evaluated: an index past the shape, an
# integer division by zero, and a fold-only op over computed values.
for name, node, extra, result in [
        ("fold-index.onnx", helper.make_node("Gather", ["shape", "five"], ["y"]),
         [i64("five", 5)], (TensorProto.INT64, [])),
        ("fold-divide.onnx", helper.make_node("Div", ["shape", "nought"], ["y"]),
         [i64("nought", [0, 0, 0])], (TensorProto.INT64, [3])),
        ("fold-computed.onnx",
         helper.make_node("Floor", ["x"], ["y"]), [],
         (TensorProto.FLOAT, [2, 6, 8]))]:
    save(model_of([helper.make_node("Shape", ["x"], ["shape"]), node],
                  [f32("x", [2, 6, 8])],
                  [helper.make_tensor_value_info("y", *result)], extra), name)

# Opset 9: Unsqueeze's axes are an attribute there (an input from opset 13);
# libonnx's version converter upgrades the model on import.
unsqueeze9 = model_of([helper.make_node("Unsqueeze", ["x"], ["y"], axes=[0])],
                      [f32("x", [2, 3])], [f32("y", [1, 2, 3])], opset=9)
save(unsqueeze9, "opset9-unsqueeze.onnx")

# Weights as external data (how the dynamo exporter writes models over
# 2 GB): the bytes of w lie in external-data.onnx.data; and two models whose
# data is missing or lies outside the model's directory.
from onnx import external_data_helper  # noqa: E402

w = rng.normal(0, 1, (3, 4)).astype(np.float32)


def external_model(location):
    model = model_of([helper.make_node("MatMul", ["x", "w"], ["y"])],
                     [f32("x", [2, 3])], [f32("y", [2, 4])], [init("w", w)])
    external_data_helper.convert_model_to_external_data(
        model, all_tensors_to_one_file=True, location=location,
        size_threshold=0)
    return model


model = external_model("external-data.onnx.data")
external_data_helper.write_external_data_tensors(model, out)
save(model, "external-data.onnx", check=False)
safetensors_file.write(os.path.join(out, "external-data.weights.safetensors"),
                       {"w": w})
# Their data is written elsewhere (a temporary directory), so that the
# models name files that are not next to them.
with tempfile.TemporaryDirectory() as elsewhere:
    for location, name in [("missing.onnx.data", "external-missing.onnx"),
                           ("../outside.data", "external-outside.onnx")]:
        model = external_model(location)
        nested = os.path.join(elsewhere, "nested")
        os.makedirs(nested, exist_ok=True)
        external_data_helper.write_external_data_tensors(model, nested)
        # IR 10, as the dynamo exporter writes: parc reads the data itself
        # (libonnx's checker, for IR 8, says as much of a missing file).
        save_newer(model, name, 10)

# IR 10 and opset 20, newer than libonnx 1.12 knows (parc checks the graph
# itself): opset 18's Split by num_outputs (7 into 3, 3, 1) and ReduceMean
# with its axes as an input, opset 20's Gelu; numpy's values as expected.
newer = model_of(
    [helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3),
     helper.make_node("ReduceMean", ["x", "last"], ["mean"], keepdims=0),
     helper.make_node("Gelu", ["x"], ["gelu"]),
     helper.make_node("Gelu", ["x"], ["gelu_tanh"], approximate="tanh")],
    [f32("x", [2, 7])],
    [f32("a", [2, 3]), f32("b", [2, 3]), f32("c", [2, 1]), f32("mean", [2]),
     f32("gelu", [2, 7]), f32("gelu_tanh", [2, 7])],
    [i64("last", [-1])], opset=20)
save_newer(newer, "opset20-ir10.onnx", 10)
x = rng.normal(0, 1, (2, 7)).astype(np.float32)
x64 = x.astype(np.float64)
erf = np.vectorize(__import__("math").erf)
safetensors_file.write(os.path.join(out, "opset20-ir10.inputs.safetensors"),
                       {"x": x})
safetensors_file.write(
    os.path.join(out, "opset20-ir10.outputs.safetensors"),
    {"a": x[:, :3], "b": x[:, 3:6], "c": x[:, 6:],
     "mean": x64.mean(axis=1).astype(np.float32),
     "gelu": (0.5 * x64 * (1 + erf(x64 / np.sqrt(2)))).astype(np.float32),
     "gelu_tanh": (0.5 * x64 * (1 + np.tanh(np.sqrt(2 / np.pi) * (
         x64 + 0.044715 * x64**3)))).astype(np.float32)})
relu = model_of([helper.make_node("Relu", ["x"], ["y"])], [f32("x", [2])],
                [f32("y", [2])], opset=18)
save_newer(relu, "ir11.onnx", 11)
save_newer(model_of([helper.make_node("Relu", ["x"], ["y"])], [f32("x", [2])],
                    [f32("y", [2])], opset=22), "opset22.onnx", 10)
save_newer(model_of([helper.make_node("Relu", ["nowhere"], ["y"])],
                    [f32("x", [2])], [f32("y", [2])], opset=18),
           "opset18-undefined.onnx", 10)

# TorchScript's naming: weights it transposed are onnx::MatMul_N, the nodes
# reading them /module/path/Op. Renamed: q's weight and bias (Add); kept: a
# weight two nodes read, one whose module name is taken, a non-exporter name.
hidden = 4
module_paths = model_of(
    [helper.make_node("MatMul", ["x", "onnx::MatMul_1"], ["q"],
                      name="/blk/q/MatMul"),
     helper.make_node("Add", ["q", "onnx::Add_2"], ["qb"], name="/blk/q/Add"),
     helper.make_node("MatMul", ["qb", "onnx::MatMul_3"], ["s1"],
                      name="/blk/shared/MatMul"),
     helper.make_node("MatMul", ["s1", "onnx::MatMul_3"], ["s2"],
                      name="/blk/shared/MatMul_1"),
     helper.make_node("MatMul", ["s2", "onnx::MatMul_4"], ["t"],
                      name="/blk/taken/MatMul"),
     helper.make_node("MatMul", ["t", "blk.taken.weight"], ["u"],
                      name="/blk/other/MatMul"),
     helper.make_node("MatMul", ["u", "w"], ["y"], name="/blk/out/MatMul")],
    [f32("x", [2, hidden])], [f32("y", [2, hidden])],
    [init(name, rng.normal(0, 0.5, (hidden, hidden)))
     for name in ["onnx::MatMul_1", "onnx::MatMul_3", "onnx::MatMul_4",
                  "blk.taken.weight", "w"]] +
    [init("onnx::Add_2", rng.normal(0, 0.5, hidden))])
save(module_paths, "module-paths.onnx")

# Attention whose additive mask is a constant of rank 1 (one row of keys,
# key 2 hidden): not the causal mask, so it stays a mask.
attention_heads, attention_seq, attention_dim = 2, 4, 8
rank1_mask = model_of(
    [helper.make_node("Constant", [], ["mask"], value=numpy_helper.from_array(
        np.array([0, 0, -np.inf, 0], np.float32))),
     helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
     helper.make_node("MatMul", ["q", "kt"], ["scores"]),
     helper.make_node("Add", ["scores", "mask"], ["masked"]),
     helper.make_node("Softmax", ["masked"], ["p"], axis=-1),
     helper.make_node("MatMul", ["p", "v"], ["y"])],
    [f32(name, [1, attention_heads, attention_seq, attention_dim])
     for name in "qkv"],
    [f32("y", [1, attention_heads, attention_seq, attention_dim])])
save(rank1_mask, "attention-rank1-mask.onnx")


# A padding mask as transformers builds it from attention_mask, computed at
# run time (lib/Import/BooleanOps.cpp): Cast to bool, Equal, GatherND and
# Gather with constant indices on run-time data (the identity and a
# rotation), Not, And, Or, Xor, Expand of booleans, and Where into an
# additive mask over scores.
batch, keys = 2, 4
nd_indices = np.stack(np.meshgrid(np.arange(batch), np.arange(keys),
                                  indexing="ij"), -1).reshape(batch, 1, 1,
                                                              keys, 2)
causal = np.tril(np.ones((keys, keys), bool))[None, None]
padding_mask = model_of(
    [helper.make_node("Cast", ["attention_mask"], ["keep"],
                      to=TensorProto.BOOL),
     helper.make_node("GatherND", ["keep", "nd_indices"], ["kept"]),
     helper.make_node("Equal", ["attention_mask", "zero"], ["padded"]),
     helper.make_node("Gather", ["attention_mask", "rotation"], ["rotated"],
                      axis=1),
     helper.make_node("Greater", ["rotated", "zero"], ["rotated_keep"]),
     helper.make_node("Not", ["padded"], ["not_padded"]),
     helper.make_node("Xor", ["not_padded", "rotated_keep"], ["moved"]),
     helper.make_node("Unsqueeze", ["moved", "axes12"], ["moved4"]),
     constant("causal", causal),
     helper.make_node("And", ["causal", "kept"], ["visible"]),
     helper.make_node("Expand", ["moved4", "mask_shape"], ["moved_full"]),
     helper.make_node("Or", ["visible", "moved_full"], ["full"]),
     constant("nought", np.array(0, np.float32)),
     constant("hidden", np.array(-np.inf, np.float32)),
     helper.make_node("Where", ["full", "nought", "hidden"], ["additive"]),
     helper.make_node("Add", ["scores", "additive"], ["masked"])],
    [helper.make_tensor_value_info("attention_mask", TensorProto.INT64,
                                   [batch, keys]),
     f32("scores", [batch, 1, keys, keys])],
    [f32("masked", [batch, 1, keys, keys])],
    [i64("zero", 0), i64("nd_indices", nd_indices),
     i64("rotation", [3, 0, 1, 2]), i64("axes12", [1, 2]),
     i64("mask_shape", [batch, 1, keys, keys])])
save(padding_mask, "padding-mask.onnx")
attention_mask = np.array([[1, 1, 1, 1], [0, 0, 1, 1]], np.int64)
scores = rng.normal(0, 1, (batch, 1, keys, keys)).astype(np.float32)
keep = attention_mask != 0
moved = keep ^ (attention_mask[:, [3, 0, 1, 2]] > 0)
either = (causal & keep[:, None, None, :]) | moved[:, None, None, :]
safetensors_file.write(os.path.join(out, "padding-mask.inputs.safetensors"),
                       {"attention_mask": attention_mask, "scores": scores})
safetensors_file.write(
    os.path.join(out, "padding-mask.outputs.safetensors"),
    {"masked": np.where(either, scores, -np.inf).astype(np.float32)})

# GatherND that parc does not import: indices computed by the graph,
# batch_dims, an index past the data.
for name, indices, attributes, extra, shape in [
        ("gathernd-computed.onnx", "x_indices", {}, [], [1]),
        ("gathernd-batch-dims.onnx", "pairs", {"batch_dims": 1},
         [i64("pairs", [[[0]], [[1]]])], [2, 1]),
        ("gathernd-range.onnx", "pairs", {},
         [i64("pairs", [[0, 5]])], [1])]:
    nodes = [helper.make_node("GatherND", ["x", indices], ["y"],
                              **attributes)]
    inputs = [f32("x", [2, 3])]
    if indices == "x_indices":
        inputs.append(helper.make_tensor_value_info(
            "x_indices", TensorProto.INT64, [1, 2]))
    save(model_of(nodes, inputs, [helper.make_tensor_value_info(
        "y", TensorProto.FLOAT, shape)], extra), name)

# RMS normalization as PyTorch exports it (lib/Import/OnnxPatterns.cpp):
# Llama's RMSNorm, x * Reciprocal(Sqrt(ReduceMean(Pow(x, 2)) + eps)) times
# a weight, and an unscaled x / Sqrt(ReduceMean(x * x) + eps).
rms_x = rng.normal(0, 1, (2, 3, 8)).astype(np.float32)
rms_weight = rng.normal(1, 0.1, 8).astype(np.float32)
rms = model_of(
    [helper.make_node("Pow", ["x", "two"], ["square"]),
     helper.make_node("ReduceMean", ["square"], ["mean_square"], axes=[-1]),
     helper.make_node("Add", ["mean_square", "eps"], ["shifted"]),
     helper.make_node("Sqrt", ["shifted"], ["root"]),
     helper.make_node("Reciprocal", ["root"], ["inverse"]),
     helper.make_node("Mul", ["x", "inverse"], ["normalized"]),
     helper.make_node("Mul", ["norm.weight", "normalized"], ["y"]),
     helper.make_node("Mul", ["y", "y"], ["y_square"]),
     helper.make_node("ReduceMean", ["y_square"], ["y_mean_square"],
                      axes=[-1]),
     helper.make_node("Add", ["eps", "y_mean_square"], ["y_shifted"]),
     helper.make_node("Sqrt", ["y_shifted"], ["y_root"]),
     helper.make_node("Div", ["y", "y_root"], ["z"])],
    [f32("x", [2, 3, 8])], [f32("z", [2, 3, 8])],
    [init("norm.weight", rms_weight), init("two", np.array(2.0)),
     init("eps", np.array(1e-6))])
save(rms, "rms-norm.onnx")


def rms_norm(values, weight=1.0):
    values = values.astype(np.float64)
    return values / np.sqrt((values**2).mean(-1, keepdims=True) + 1e-6) * weight


safetensors_file.write(os.path.join(out, "rms-norm.inputs.safetensors"),
                       {"x": rms_x})
safetensors_file.write(
    os.path.join(out, "rms-norm.outputs.safetensors"),
    {"z": rms_norm(rms_norm(rms_x, rms_weight)).astype(np.float32)})
