//===- DistOps.cpp - mesh, annotations and collectives --------------------===//

#include "dist/IR/DistOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::dist;

//===----------------------------------------------------------------------===//
// MeshOp
//===----------------------------------------------------------------------===//

// axes = [dp = 2, tp = 4]
static ParseResult parseMeshAxes(OpAsmParser &parser, ArrayAttr &names,
                                 DenseI64ArrayAttr &sizes) {
  SmallVector<Attribute> nameList;
  SmallVector<int64_t> sizeList;
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, [&] {
        std::string name;
        int64_t size;
        if (parser.parseKeywordOrString(&name) || parser.parseEqual() ||
            parser.parseInteger(size))
          return failure();
        nameList.push_back(parser.getBuilder().getStringAttr(name));
        sizeList.push_back(size);
        return success();
      }))
    return failure();
  names = parser.getBuilder().getArrayAttr(nameList);
  sizes = parser.getBuilder().getDenseI64ArrayAttr(sizeList);
  return success();
}

/// `[name = value, ...]`, each name a keyword where it can be (a mesh's
/// axes) or always quoted (a peer's, as before peers had several axes).
static void printAxisValues(OpAsmPrinter &printer, ArrayAttr names,
                            DenseI64ArrayAttr values, bool quoted) {
  printer << "[";
  llvm::interleaveComma(llvm::zip_equal(names, values.asArrayRef()), printer,
                        [&](auto pair) {
                          StringRef name =
                              cast<StringAttr>(std::get<0>(pair)).getValue();
                          if (quoted)
                            printer.printString(name);
                          else
                            printer.printKeywordOrString(name);
                          printer << " = " << std::get<1>(pair);
                        });
  printer << "]";
}

static void printMeshAxes(OpAsmPrinter &printer, MeshOp, ArrayAttr names,
                          DenseI64ArrayAttr sizes) {
  printAxisValues(printer, names, sizes, /*quoted=*/false);
}

/// `["pp" = 1]`, `["ps" = 1, "dp" = 0]`: a peer's coordinates on the axes
/// where it differs from this rank.
static ParseResult parsePeerCoordinates(OpAsmParser &parser, ArrayAttr &axes,
                                        DenseI64ArrayAttr &peer) {
  return parseMeshAxes(parser, axes, peer);
}

static void printPeerCoordinates(OpAsmPrinter &printer, Operation *,
                                 ArrayAttr axes, DenseI64ArrayAttr peer) {
  printAxisValues(printer, axes, peer, /*quoted=*/true);
}

LogicalResult MeshOp::verify() {
  if (getAxisNames().size() != getAxisSizes().size())
    return emitOpError("has ") << getAxisNames().size() << " axis names but "
                               << getAxisSizes().size() << " sizes";
  llvm::StringSet<> seen;
  // Ranks are MPI ranks (int) and products of sizes must not wrap.
  constexpr int64_t kMaxRanks = int64_t(1) << 31;
  int64_t ranks = 1;
  for (auto [name, size] :
       llvm::zip_equal(getAxisNames().getAsValueRange<StringAttr>(),
                       getAxisSizes())) {
    if (!seen.insert(name).second)
      return emitOpError("names axis '") << name << "' twice";
    if (size < 1)
      return emitOpError("axis '") << name << "' has size " << size
                                   << "; sizes must be >= 1";
    if (size > kMaxRanks / ranks)
      return emitOpError("has more than 2^31 ranks (")
             << ranks << " before axis '" << name << "' of size " << size
             << ")";
    ranks *= size;
  }
  return success();
}

int64_t MeshOp::getNumRanks() {
  int64_t ranks = 1;
  for (int64_t size : getAxisSizes())
    ranks *= size;
  return ranks;
}

std::optional<int64_t> MeshOp::getAxisSize(StringRef axis) {
  for (auto [name, size] :
       llvm::zip_equal(getAxisNames().getAsValueRange<StringAttr>(),
                       getAxisSizes()))
    if (name == axis)
      return size;
  return std::nullopt;
}

int64_t MeshOp::getGroupSize(ArrayRef<StringAttr> axes) {
  int64_t size = 1;
  for (StringAttr axis : axes)
    size *= getAxisSize(axis.getValue()).value_or(1);
  return size;
}

MeshOp mlir::dist::lookupMesh(Operation *from, FlatSymbolRefAttr name) {
  return SymbolTable::lookupNearestSymbolFrom<MeshOp>(from, name);
}

LogicalResult
mlir::dist::verifyShardingForType(ShardingAttr sharding, ShapedType type,
                                  MeshOp mesh, StringRef what,
                                  function_ref<InFlightDiagnostic()> emitError) {
  if (sharding.getRank() != type.getRank())
    return emitError() << what << " has rank " << type.getRank()
                       << " but its sharding lists " << sharding.getRank()
                       << " dimensions";
  auto checkAxis = [&](StringAttr axis) -> std::optional<int64_t> {
    std::optional<int64_t> size = mesh.getAxisSize(axis.getValue());
    if (!size)
      emitError() << what << ": unknown axis '" << axis.getValue()
                  << "' of mesh @" << mesh.getSymName();
    return size;
  };
  for (unsigned dim = 0; dim < sharding.getRank(); ++dim) {
    int64_t product = 1;
    for (StringAttr axis : sharding.getDimAxes(dim)) {
      std::optional<int64_t> size = checkAxis(axis);
      if (!size)
        return failure();
      product *= *size;
      if (type.getDimSize(dim) % product != 0)
        return emitError() << what << ": dimension " << dim << " of size "
                           << type.getDimSize(dim)
                           << " cannot be split over mesh axis '"
                           << axis.getValue() << "' (" << product
                           << " shards do not divide it)";
    }
  }
  for (StringAttr axis : sharding.getPartialAxes())
    if (!checkAxis(axis))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// ConstraintOp
//===----------------------------------------------------------------------===//

LogicalResult ConstraintOp::verify() {
  MeshOp mesh = lookupMesh(*this, getSharding().getMesh());
  if (!mesh)
    return emitOpError("refers to unknown mesh ") << getSharding().getMesh();
  return verifyShardingForType(getSharding(), getInput().getType(), mesh,
                               "operand", [&] { return emitOpError(); });
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// Checks the mesh and axes of a collective; returns the group size.
static FailureOr<int64_t> verifyGroup(Operation *op, FlatSymbolRefAttr meshName,
                                      ArrayAttr axes) {
  MeshOp mesh = lookupMesh(op, meshName);
  if (!mesh)
    return op->emitOpError("refers to unknown mesh ") << meshName;
  llvm::StringSet<> seen;
  int64_t size = 1;
  for (StringRef axis : axes.getAsValueRange<StringAttr>()) {
    std::optional<int64_t> axisSize = mesh.getAxisSize(axis);
    if (!axisSize)
      return op->emitOpError("unknown axis '")
             << axis << "' of mesh @" << mesh.getSymName();
    if (!seen.insert(axis).second)
      return op->emitOpError("lists axis '") << axis << "' twice";
    size *= *axisSize;
  }
  return size;
}

/// Checks that `result` is `input` with dimension `dim` multiplied by
/// `grow` and divided by `shrink`, all other dimensions equal.
static LogicalResult verifyResizedDim(Operation *op, RankedTensorType input,
                                      RankedTensorType result, int64_t dim,
                                      int64_t grow, int64_t shrink) {
  if (input.getElementType() != result.getElementType())
    return op->emitOpError("changes the element type");
  if (input.getRank() != result.getRank())
    return op->emitOpError("changes the rank from ")
           << input.getRank() << " to " << result.getRank();
  if (dim < 0 || dim >= input.getRank())
    return op->emitOpError("dimension ")
           << dim << " is out of range for rank " << input.getRank();
  for (int64_t d = 0; d < input.getRank(); ++d) {
    int64_t expected = input.getDimSize(d);
    if (d == dim) {
      if (expected % shrink != 0)
        return op->emitOpError("dimension ")
               << d << " of size " << expected << " cannot be split into "
               << shrink << " chunks";
      expected = expected / shrink * grow;
    }
    if (result.getDimSize(d) != expected)
      return op->emitOpError("result dimension ")
             << d << " has size " << result.getDimSize(d) << ", expected "
             << expected << " for a group of "
             << std::max(grow, shrink) << " ranks";
  }
  return success();
}

LogicalResult AllReduceOp::verify() {
  return verifyGroup(*this, getMeshAttr(), getAxes());
}

LogicalResult AllGatherOp::verify() {
  FailureOr<int64_t> group = verifyGroup(*this, getMeshAttr(), getAxes());
  if (failed(group))
    return failure();
  return verifyResizedDim(*this, getInput().getType(), getType(), getDim(),
                          *group, 1);
}

LogicalResult ReduceScatterOp::verify() {
  FailureOr<int64_t> group = verifyGroup(*this, getMeshAttr(), getAxes());
  if (failed(group))
    return failure();
  return verifyResizedDim(*this, getInput().getType(), getType(), getDim(), 1,
                          *group);
}

LogicalResult AllSliceOp::verify() {
  FailureOr<int64_t> group = verifyGroup(*this, getMeshAttr(), getAxes());
  if (failed(group))
    return failure();
  return verifyResizedDim(*this, getInput().getType(), getType(), getDim(), 1,
                          *group);
}

LogicalResult AllToAllOp::verify() {
  FailureOr<int64_t> group = verifyGroup(*this, getMeshAttr(), getAxes());
  if (failed(group))
    return failure();
  RankedTensorType input = getInput().getType(), result = getType();
  if (getSplitDim() == getConcatDim())
    return verifyResizedDim(*this, input, result, getSplitDim(), 1, 1);
  // Split `split_dim` first, then grow `concat_dim`.
  auto split = RankedTensorType::get(input.getShape(), input.getElementType());
  SmallVector<int64_t> shape(input.getShape());
  if (getSplitDim() < 0 || getSplitDim() >= input.getRank())
    return emitOpError("split dimension ")
           << getSplitDim() << " is out of range for rank " << input.getRank();
  if (shape[getSplitDim()] % *group != 0)
    return emitOpError("dimension ")
           << getSplitDim() << " of size " << shape[getSplitDim()]
           << " cannot be split into " << *group << " chunks";
  shape[getSplitDim()] /= *group;
  split = RankedTensorType::get(shape, input.getElementType());
  return verifyResizedDim(*this, split, result, getConcatDim(), *group, 1);
}

LogicalResult AxisIndexOp::verify() {
  return verifyGroup(*this, getMeshAttr(), getAxes());
}

/// A point-to-point op names at least one axis, each once, and its peer's
/// coordinate on each lies on it.
static LogicalResult verifyPointToPoint(Operation *op, FlatSymbolRefAttr meshName,
                                        ArrayAttr axes, ArrayRef<int64_t> peer,
                                        int64_t channel) {
  MeshOp mesh = lookupMesh(op, meshName);
  if (!mesh)
    return op->emitOpError("refers to unknown mesh ") << meshName;
  if (axes.empty() || axes.size() != peer.size())
    return op->emitOpError("needs one peer coordinate per axis and at least "
                           "one axis, got ")
           << axes.size() << " axes and " << peer.size() << " coordinates";
  llvm::StringSet<> seen;
  for (auto [axisAttr, coordinate] : llvm::zip_equal(axes, peer)) {
    StringRef axis = cast<StringAttr>(axisAttr).getValue();
    if (!seen.insert(axis).second)
      return op->emitOpError("names axis '") << axis << "' twice";
    std::optional<int64_t> size = mesh.getAxisSize(axis);
    if (!size)
      return op->emitOpError("unknown axis '")
             << axis << "' of mesh @" << mesh.getSymName();
    if (coordinate < 0 || coordinate >= *size)
      return op->emitOpError("peer coordinate ")
             << coordinate << " is outside axis '" << axis << "' of size "
             << *size;
  }
  if (channel < 0 || channel > std::numeric_limits<int32_t>::max())
    return op->emitOpError("channel ") << channel << " is not in [0, 2^31)";
  return success();
}

LogicalResult SendOp::verify() {
  return verifyPointToPoint(*this, getMeshAttr(), getAxes(), getPeer(),
                            getChannel());
}

LogicalResult RecvOp::verify() {
  return verifyPointToPoint(*this, getMeshAttr(), getAxes(), getPeer(),
                            getChannel());
}

//===----------------------------------------------------------------------===//
// CommunicationOpInterface
//===----------------------------------------------------------------------===//

static int64_t bytesOf(Type type) {
  auto shaped = cast<ShapedType>(type);
  return shaped.getNumElements() *
         std::max<int64_t>(1, shaped.getElementTypeBitWidth() / 8);
}

double dist::getRingTrafficBytes(CollectiveKind kind, int64_t bufferBytes,
                                 int64_t groupSize) {
  // Every rank needs the other ranks' parts: (n - 1) / n of the buffer.
  double othersShare =
      groupSize > 0 ? double(groupSize - 1) / groupSize : 0.0;
  switch (kind) {
  case CollectiveKind::AllReduce:
    return 2 * othersShare * bufferBytes;
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::AllToAll:
  case CollectiveKind::AllGather:
    return othersShare * bufferBytes;
  case CollectiveKind::AllSlice:
    return 0;
  }
  llvm_unreachable("unknown collective");
}

int64_t AllReduceOp::getBufferBytes() { return bytesOf(getType()); }
double AllReduceOp::getTrafficBytes(int64_t groupSize) {
  return getRingTrafficBytes(CollectiveKind::AllReduce, getBufferBytes(),
                             groupSize);
}

int64_t AllGatherOp::getBufferBytes() { return bytesOf(getType()); }
double AllGatherOp::getTrafficBytes(int64_t groupSize) {
  return getRingTrafficBytes(CollectiveKind::AllGather, getBufferBytes(),
                             groupSize);
}

int64_t ReduceScatterOp::getBufferBytes() {
  return bytesOf(getInput().getType());
}
double ReduceScatterOp::getTrafficBytes(int64_t groupSize) {
  return getRingTrafficBytes(CollectiveKind::ReduceScatter, getBufferBytes(),
                             groupSize);
}

int64_t AllToAllOp::getBufferBytes() { return bytesOf(getInput().getType()); }
double AllToAllOp::getTrafficBytes(int64_t groupSize) {
  return getRingTrafficBytes(CollectiveKind::AllToAll, getBufferBytes(),
                             groupSize);
}

// Slicing and reading coordinates move nothing.
int64_t AllSliceOp::getBufferBytes() { return 0; }
double AllSliceOp::getTrafficBytes(int64_t) { return 0; }
int64_t AxisIndexOp::getBufferBytes() { return 0; }
double AxisIndexOp::getTrafficBytes(int64_t) { return 0; }

// A message crosses the link once: the send counts it, the receive not.
ArrayAttr SendOp::getGroupAxes() { return getAxes(); }
int64_t SendOp::getBufferBytes() { return bytesOf(getInput().getType()); }
double SendOp::getTrafficBytes(int64_t) { return getBufferBytes(); }
ArrayAttr RecvOp::getGroupAxes() { return getAxes(); }
int64_t RecvOp::getBufferBytes() { return bytesOf(getType()); }
double RecvOp::getTrafficBytes(int64_t) { return 0; }

#include "dist/IR/DistInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "dist/IR/DistOps.cpp.inc"
