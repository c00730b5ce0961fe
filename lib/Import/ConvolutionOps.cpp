//===- ConvolutionOps.cpp - ONNX convolutions, poolings and batch norm ----===//
//
// Conv (with its bias), MaxPool and AveragePool over 2-D images become
// parc.conv2d, max_pool2d and avg_pool2d; auto_pad's SAME_UPPER, SAME_LOWER
// and VALID become explicit padding. GlobalAveragePool is a reduce_mean
// over the spatial axes. BatchNormalization in inference mode (what
// torch.onnx exports from eval()) is (x - mean) * scale / sqrt(var + eps) +
// bias per channel; training mode, which also outputs the running
// statistics, is refused.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "parc/IR/ParcOps.h"

using namespace mlir;
using namespace mlir::parc;
using namespace mlir::parc::onnx_import;

static RankedTensorType typeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// `value` ([N, C, L] or [N, C, H, W]) as an image: a 1-D signal gains a
/// unit height, so parc's 2-D ops serve 1-D nodes too.
static SmallVector<int64_t> imageShape(RankedTensorType type) {
  SmallVector<int64_t> shape(type.getShape());
  if (shape.size() == 3)
    shape.insert(shape.begin() + 2, 1);
  return shape;
}

/// An image result back at the node's rank (dropping the unit height).
Value Importer::fromImage(Value image, int64_t rank) {
  SmallVector<int64_t> shape(typeOf(image).getShape());
  if (rank == 3)
    shape.erase(shape.begin() + 2);
  return reshape(image, shape);
}

FailureOr<Importer::Window> Importer::importWindow(const onnx::NodeProto &node,
                                                   Value input,
                                                   ArrayRef<int64_t> kernel) {
  RankedTensorType type = typeOf(input);
  int64_t spatial = type.getRank() - 2;
  if (spatial != 1 && spatial != 2)
    return unsupported(node, "a " + Twine(spatial) +
                                 "-D window; parc has 1-D and 2-D ones");
  auto values = [&](StringRef name, int64_t fill,
                    size_t count) -> FailureOr<SmallVector<int64_t>> {
    SmallVector<int64_t> given =
        intsAttr(node, name).value_or(SmallVector<int64_t>(count, fill));
    if (given.size() != count) {
      nodeError(node) << name << " has " << given.size() << " values for "
                      << spatial << " spatial axes";
      return failure();
    }
    return given;
  };
  FailureOr<SmallVector<int64_t>> strides = values("strides", 1, spatial);
  FailureOr<SmallVector<int64_t>> dilations = values("dilations", 1, spatial);
  if (failed(strides) || failed(dilations))
    return failure();
  if (kernel.size() != static_cast<size_t>(spatial))
    return nodeError(node) << "kernel_shape has " << kernel.size()
                           << " values for " << spatial << " spatial axes";
  // Strides are positive: load() checks them before shape inference.
  std::string autoPad = "NOTSET";
  if (const onnx::AttributeProto *attr = attribute(node, "auto_pad"))
    autoPad = attr->s();
  // ONNX's pads: the begins of every spatial axis, then the ends.
  SmallVector<int64_t> pads(2 * spatial, 0);
  if (autoPad == "NOTSET") {
    FailureOr<SmallVector<int64_t>> given = values("pads", 0, 2 * spatial);
    if (failed(given))
      return failure();
    pads = *given;
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    // The output keeps ceil(in / stride) positions; the odd pad goes after
    // (SAME_UPPER) or before (SAME_LOWER).
    for (int64_t dim = 0; dim < spatial; ++dim) {
      int64_t in = type.getDimSize(dim + 2), stride = (*strides)[dim];
      int64_t out = (in + stride - 1) / stride;
      int64_t span = (kernel[dim] - 1) * (*dilations)[dim] + 1;
      int64_t total = std::max<int64_t>(0, (out - 1) * stride + span - in);
      int64_t smaller = total / 2;
      bool upper = autoPad == "SAME_UPPER";
      pads[dim] = upper ? smaller : total - smaller;
      pads[dim + spatial] = upper ? total - smaller : smaller;
    }
  } else if (autoPad != "VALID") {
    return nodeError(node) << "auto_pad must be NOTSET, SAME_UPPER, "
                              "SAME_LOWER or VALID, not '"
                           << autoPad << "'";
  }
  Window window;
  window.kernel.assign(kernel.begin(), kernel.end());
  window.strides = *strides;
  window.dilations = *dilations;
  window.padding = pads;
  if (spatial == 1) {
    window.kernel.insert(window.kernel.begin(), 1);
    window.strides.insert(window.strides.begin(), 1);
    window.dilations.insert(window.dilations.begin(), 1);
    window.padding = {0, pads[0], 0, pads[1]};
  }
  SmallVector<int64_t> image = imageShape(type);
  if (intAttr(node, "ceil_mode", 0) != 0) {
    // Rounding up changes nothing when every window fits exactly.
    for (int dim = 0; dim < 2; ++dim) {
      int64_t span = (window.kernel[dim] - 1) * window.dilations[dim] + 1;
      int64_t room =
          image[dim + 2] + window.padding[dim] + window.padding[dim + 2] - span;
      if (room < 0 || room % window.strides[dim])
        return unsupported(node, "ceil_mode = 1 where it adds a window");
    }
  }
  return window;
}

LogicalResult Importer::importConvolution(const onnx::NodeProto &node) {
  FailureOr<Value> input = operand(node, 0);
  if (failed(input))
    return failure();
  FailureOr<Value> weight = operand(node, 1);
  if (failed(weight) || failed(requireFloat(node, *input, "input")))
    return failure();
  RankedTensorType inputType = typeOf(*input), weightType = typeOf(*weight);
  if (weightType.getRank() != inputType.getRank())
    return nodeError(node) << "weight " << weightType << " and input "
                           << inputType << " differ in rank";
  SmallVector<int64_t> kernel(weightType.getShape().drop_front(2));
  if (auto given = intsAttr(node, "kernel_shape"); given && *given != kernel)
    return nodeError(node) << "kernel_shape disagrees with the weight's "
                           << weightType;
  FailureOr<Window> window = importWindow(node, *input, kernel);
  if (failed(window))
    return failure();
  Location loc = nodeLoc(node);
  FailureOr<Value> result =
      create<Conv2dOp>(loc, reshape(*input, imageShape(inputType)),
                       reshape(*weight, imageShape(weightType)),
                       builder.getDenseI64ArrayAttr(window->strides),
                       builder.getDenseI64ArrayAttr(window->padding),
                       builder.getDenseI64ArrayAttr(window->dilations),
                       builder.getI64IntegerAttr(intAttr(node, "group", 1)));
  if (failed(result))
    return failure();
  int64_t filters = weightType.getDimSize(0);
  if (hasOperand(node, 2)) {
    FailureOr<Value> bias = operand(node, 2);
    if (failed(bias))
      return failure();
    RankedTensorType biasType = typeOf(*bias);
    if (biasType.getRank() != 1 || biasType.getDimSize(0) != filters)
      return nodeError(node)
             << "bias is " << biasType << ", not [" << filters << "]";
    result = create<AddOp>(loc, *result, reshape(*bias, {filters, 1, 1}));
    if (failed(result))
      return failure();
  }
  define(node, 0, fromImage(*result, inputType.getRank()));
  return success();
}

LogicalResult Importer::importPooling(const onnx::NodeProto &node) {
  bool max = node.op_type() == "MaxPool";
  if (max && node.output_size() > 1 && !node.output(1).empty())
    return unsupported(node, "MaxPool's Indices output");
  if (intAttr(node, "storage_order", 0) != 0)
    return unsupported(node, "storage_order = 1");
  FailureOr<Value> input = operand(node, 0);
  if (failed(input) || failed(requireFloat(node, *input, "input")))
    return failure();
  std::optional<SmallVector<int64_t>> kernel = intsAttr(node, "kernel_shape");
  if (!kernel)
    return nodeError(node) << "has no kernel_shape";
  FailureOr<Window> window = importWindow(node, *input, *kernel);
  if (failed(window))
    return failure();
  // parc's bound, PyTorch's too: no window lies in the padding alone.
  for (int dim = 0; dim < 2; ++dim)
    if (2 * std::max(window->padding[dim], window->padding[dim + 2]) >
        window->kernel[dim])
      return unsupported(node, "padding of more than half the window");
  bool countPadding = !max && intAttr(node, "count_include_pad", 0) != 0;
  if (countPadding &&
      llvm::any_of(window->dilations, [](int64_t d) { return d != 1; }))
    return unsupported(node, "count_include_pad with dilations");
  Location loc = nodeLoc(node);
  auto attr = [&](ArrayRef<int64_t> values) {
    return builder.getDenseI64ArrayAttr(values);
  };
  RankedTensorType inputType = typeOf(*input);
  Value image = reshape(*input, imageShape(inputType));
  FailureOr<Value> result =
      max ? create<MaxPool2dOp>(loc, image, attr(window->kernel),
                                attr(window->strides), attr(window->padding),
                                attr(window->dilations))
          : create<AvgPool2dOp>(
                loc, image, attr(window->kernel), attr(window->strides),
                attr(window->padding), attr(window->dilations),
                countPadding ? builder.getUnitAttr() : UnitAttr());
  if (failed(result))
    return failure();
  define(node, 0, fromImage(*result, inputType.getRank()));
  return success();
}

LogicalResult Importer::importGlobalAveragePool(const onnx::NodeProto &node) {
  FailureOr<Value> input = operand(node, 0);
  if (failed(input) || failed(requireFloat(node, *input, "input")))
    return failure();
  int64_t rank = typeOf(*input).getRank();
  if (rank < 3)
    return nodeError(node) << "input has rank " << rank
                           << "; it needs batch, channels and a spatial axis";
  SmallVector<int64_t> spatial = llvm::to_vector(llvm::seq<int64_t>(2, rank));
  return define(node, 0,
                create<ReduceMeanOp>(nodeLoc(node), *input, spatial,
                                     /*keepdims=*/true));
}

LogicalResult Importer::importBatchNorm(const onnx::NodeProto &node) {
  bool training = intAttr(node, "training_mode", 0) != 0;
  if (!training && node.output_size() > 1)
    return unsupported(node, "running-statistics outputs outside training "
                             "mode");
  SmallVector<Value> operands;
  for (int index = 0; index < 5; ++index) {
    FailureOr<Value> value = operand(node, index);
    if (failed(value))
      return failure();
    operands.push_back(*value);
  }
  Value x = operands[0];
  if (failed(requireFloat(node, x, "input")))
    return failure();
  RankedTensorType type = typeOf(x);
  if (type.getRank() < 2)
    return nodeError(node) << "input has rank " << type.getRank()
                           << "; it needs batch and channels";
  int64_t channels = type.getDimSize(1);
  static const char *const kRoles[] = {"scale", "B", "input_mean", "input_var"};
  for (int index = 1; index < 5; ++index) {
    RankedTensorType vector = typeOf(operands[index]);
    if (vector.getRank() != 1 || vector.getDimSize(0) != channels)
      return nodeError(node) << kRoles[index - 1] << " is " << vector
                             << ", not [" << channels << "]";
    if (vector.getElementType() != type.getElementType())
      return nodeError(node)
             << kRoles[index - 1] << " is " << vector
             << "; the input's elements are " << type.getElementType();
  }
  Location loc = nodeLoc(node);
  double epsilon = floatAttr(node, "epsilon", 1e-5f);
  if (training)
    return importTrainingBatchNorm(node, operands, epsilon);
  // Each per-channel vector as [C, 1, ...], broadcasting over the axes
  // after the channels.
  SmallVector<int64_t> perChannel(type.getRank() - 1, 1);
  perChannel[0] = channels;
  for (int index = 1; index < 5; ++index)
    operands[index] = reshape(operands[index], perChannel);
  // The operands' shapes are checked: the ops' builders cannot fail.
  Value deviation = SqrtOp::create(
      builder, loc,
      AddOp::create(builder, loc, operands[4],
                    scalarConstant(type.getElementType(), epsilon)));
  Value factor = DivOp::create(builder, loc, operands[1], deviation);
  Value centered = SubOp::create(builder, loc, x, operands[3]);
  Value scaled = MulOp::create(builder, loc, centered, factor);
  define(node, 0, AddOp::create(builder, loc, scaled, operands[2]));
  return success();
}

// ONNX's training mode: the batch's mean and biased variance normalize, and
// the running statistics' next values are input * momentum + current *
// (1 - momentum), with the biased variance (ONNX's ReduceVar; PyTorch's
// own update uses the unbiased one).
LogicalResult Importer::importTrainingBatchNorm(const onnx::NodeProto &node,
                                                ArrayRef<Value> operands,
                                                double epsilon) {
  Value x = operands[0];
  RankedTensorType type = typeOf(x);
  int64_t channels = type.getDimSize(1);
  // The other operand checks are done; this is parc.batch_norm's last.
  if (channels == 0 || type.getNumElements() / channels < 2)
    return nodeError(node) << "training mode needs at least 2 values per "
                              "channel; the input is "
                           << type;
  Location loc = nodeLoc(node);
  auto batchNorm = BatchNormOp::create(
      builder, loc, x, operands[1], operands[2],
      builder.getF64FloatAttr(epsilon), builder.getI64IntegerAttr(1));
  define(node, 0, batchNorm.getResult());
  double momentum = floatAttr(node, "momentum", 0.9f);
  Type element = type.getElementType();
  auto running = [&](Value input, Value current) {
    return AddOp::create(
        builder, loc,
        MulOp::create(builder, loc, input, scalarConstant(element, momentum)),
        MulOp::create(builder, loc, current,
                      scalarConstant(element, 1.0 - momentum)));
  };
  if (node.output_size() > 1 && !node.output(1).empty())
    define(node, 1, running(operands[3], batchNorm.getMean()));
  if (node.output_size() > 2 && !node.output(2).empty()) {
    double count = double(type.getNumElements()) / channels;
    Value biased = MulOp::create(builder, loc, batchNorm.getVariance(),
                                 scalarConstant(element, (count - 1) / count));
    define(node, 2, running(operands[4], biased));
  }
  return success();
}

// libonnx 1.12's shape inference of Conv, MaxPool and AveragePool divides by
// the strides, and takes a Conv's kernel rank from its weight when
// kernel_shape is absent, then indexes the input's axes, pads and dilations
// by it: a weight of another rank than the input crashes it (found by
// scripts/fuzz.sh), and so would a zero stride. Conv's kernel_shape is written
// from the weight here, so that libonnx compares its rank with the input's.
LogicalResult Importer::prepareWindowForInference(onnx::NodeProto &node) {
  StringRef op = node.op_type();
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return success();
  if (op != "Conv" && op != "MaxPool" && op != "AveragePool")
    return success();
  if (std::optional<SmallVector<int64_t>> strides = intsAttr(node, "strides"))
    if (llvm::any_of(*strides, [](int64_t s) { return s < 1; }))
      return nodeError(node) << "strides must be positive";
  if (op != "Conv" || attribute(node, "kernel_shape") || node.input_size() < 2)
    return success();
  const std::string &weight = node.input(1);
  SmallVector<int64_t> dims;
  auto initializer = llvm::find_if(
      model.graph().initializer(),
      [&](const onnx::TensorProto &tensor) { return tensor.name() == weight; });
  if (initializer != model.graph().initializer().end()) {
    dims.assign(initializer->dims().begin(), initializer->dims().end());
  } else {
    auto input = llvm::find_if(model.graph().input(),
                               [&](const onnx::ValueInfoProto &value) {
                                 return value.name() == weight;
                               });
    if (input == model.graph().input().end())
      return unsupported(node, "a weight computed by the graph without "
                               "kernel_shape");
    for (const onnx::TensorShapeProto::Dimension &dim :
         input->type().tensor_type().shape().dim()) {
      // libonnx infers nothing from a weight with an unknown spatial size.
      if (!dim.has_dim_value())
        return success();
      dims.push_back(dim.dim_value());
    }
  }
  onnx::AttributeProto *kernel = node.add_attribute();
  kernel->set_name("kernel_shape");
  kernel->set_type(onnx::AttributeProto::INTS);
  for (size_t index = 2; index < dims.size(); ++index)
    kernel->add_ints(dims[index]);
  return success();
}
