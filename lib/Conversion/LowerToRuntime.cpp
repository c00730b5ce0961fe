//===- LowerToRuntime.cpp - rank programs as libparcrt calls --------------===//

#include "ProgramDescription.h"
#include "parc/Conversion/Passes.h"
#include "parc/Conversion/RuntimeCallOpInterface.h"
#include "parc/IR/ModelConvention.h"
#include "parc/Transforms/MemoryPlan.h"
#include "parcrt/parcrt.h"

#include "dist/IR/DistOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::parc {
#define GEN_PASS_DEF_LOWERTORUNTIMEPASS
#include "parc/Conversion/Passes.h.inc"
} // namespace mlir::parc

using namespace mlir;
using namespace mlir::parc;

/// The runtime's descriptor layout (parcrt.h).
static constexpr int64_t kMaxRank = PARCRT_MAX_RANK;
static constexpr int64_t kTensorWords = PARCRT_TENSOR_WORDS;

/// The dtype codes of parcrt.h.
static std::optional<int64_t> dtypeCode(Type type) {
  Type element = getElementTypeOrSelf(type);
  if (element.isF32())
    return PARCRT_F32;
  if (element.isF16())
    return PARCRT_F16;
  if (element.isBF16())
    return PARCRT_BF16;
  if (element.isSignlessInteger(32))
    return PARCRT_I32;
  if (element.isSignlessInteger(64))
    return PARCRT_I64;
  return std::nullopt;
}

namespace {

/// Lowers one function to `<symbols>_json` and `<symbols>_step`.
class RuntimeLowering {
public:
  RuntimeLowering(ModuleOp module, func::FuncOp func, dist::MeshOp mesh,
                  StringRef symbols)
      : module(module), func(func), mesh(mesh), symbols(symbols),
        builder(module.getContext()),
        pointer(LLVM::LLVMPointerType::get(module.getContext())) {}

  LogicalResult run();

private:
  /// A constant global holding `values`; the null pointer when empty.
  Value constantArray(Location loc, StringRef prefix, ArrayRef<int64_t> ints,
                      ArrayRef<double> floats);
  LLVM::LLVMFuncOp declareCallee(StringRef name);
  LogicalResult appendDescriptor(Operation *op, Value value,
                                 SmallVectorImpl<int64_t> &words);

  ModuleOp module;
  func::FuncOp func;
  dist::MeshOp mesh;
  std::string symbols;
  OpBuilder builder;
  Type pointer;
  OpBuilder::InsertPoint globalsPoint;
  unsigned numGlobals = 0;
};

} // namespace

LLVM::LLVMFuncOp RuntimeLowering::declareCallee(StringRef name) {
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(module.getBody());
  auto type = LLVM::LLVMFunctionType::get(
      LLVM::LLVMVoidType::get(module.getContext()),
      {pointer, pointer, pointer, pointer});
  return LLVM::LLVMFuncOp::create(builder, module.getLoc(), name, type);
}

Value RuntimeLowering::constantArray(Location loc, StringRef prefix,
                                     ArrayRef<int64_t> ints,
                                     ArrayRef<double> floats) {
  if (ints.empty() && floats.empty())
    return LLVM::ZeroOp::create(builder, loc, pointer);
  Type element = ints.empty() ? Type(builder.getF64Type())
                              : Type(builder.getI64Type());
  int64_t size = ints.empty() ? floats.size() : ints.size();
  auto shape = RankedTensorType::get({size}, element);
  Attribute value = ints.empty() ? DenseElementsAttr::get(shape, floats)
                                 : DenseElementsAttr::get(shape, ints);
  std::string name =
      ("__" + symbols + "_" + prefix + std::to_string(numGlobals++)).str();
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(module.getBody());
    LLVM::GlobalOp::create(builder, loc,
                           LLVM::LLVMArrayType::get(element, size),
                           /*isConstant=*/true, LLVM::Linkage::Internal, name,
                           value);
  }
  return LLVM::AddressOfOp::create(builder, loc, pointer, name);
}

LogicalResult RuntimeLowering::appendDescriptor(Operation *op, Value value,
                                                SmallVectorImpl<int64_t> &words) {
  auto type = cast<RankedTensorType>(value.getType());
  std::optional<int64_t> offset = getArenaOffset(value);
  std::optional<int64_t> dtype = dtypeCode(type);
  if (!offset)
    return op->emitOpError("uses a tensor without an arena offset; run "
                           "--parc-plan-memory first");
  if (!dtype || type.getRank() > kMaxRank)
    return op->emitOpError("uses ")
           << type << ", which the runtime cannot hold (rank <= " << kMaxRank
           << ", f32/f16/bf16/i32/i64)";
  words.append({*offset, *dtype, type.getRank()});
  llvm::append_range(words, type.getShape());
  words.append(kMaxRank - type.getRank(), 0);
  return success();
}

LogicalResult RuntimeLowering::run() {
  FailureOr<std::string> description = describeProgram(func, mesh);
  if (failed(description))
    return failure();
  SmallVector<StringRef> meshAxes;
  if (mesh)
    meshAxes = llvm::to_vector(mesh.getAxisNames().getAsValueRange<StringAttr>());

  MLIRContext *context = module.getContext();
  Location loc = func.getLoc();
  builder.setInsertionPointToEnd(module.getBody());
  std::string json = *description;
  json.push_back('\0');
  LLVM::GlobalOp::create(
      builder, loc,
      LLVM::LLVMArrayType::get(IntegerType::get(context, 8), json.size()),
      /*isConstant=*/true, LLVM::Linkage::External, symbols + "_json",
      builder.getStringAttr(json));

  auto stepType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                              {pointer});
  auto step =
      LLVM::LLVMFuncOp::create(builder, loc, symbols + "_step", stepType);
  Block *entry = step.addEntryBlock(builder);
  builder.setInsertionPointToStart(entry);
  Value runtimeContext = entry->getArgument(0);

  for (Operation &op : func.getBody().front()) {
    if (isa<func::ReturnOp>(op))
      break;
    auto call = dyn_cast<RuntimeCallOpInterface>(op);
    if (!call)
      return op.emitOpError("has no runtime call");
    SmallVector<int64_t> ints;
    SmallVector<double> floats;
    FailureOr<StringRef> callee = call.getRuntimeCall(meshAxes, ints, floats);
    if (failed(callee))
      return failure();
    SmallVector<int64_t> descriptors;
    for (Value value : llvm::concat<Value>(op.getOperands(), op.getResults()))
      if (failed(appendDescriptor(&op, value, descriptors)))
        return failure();
    Value tensors = constantArray(op.getLoc(), "tensors", descriptors, {});
    Value intArgs = constantArray(op.getLoc(), "ints", ints, {});
    Value floatArgs = constantArray(op.getLoc(), "floats", {}, floats);
    LLVM::CallOp::create(builder, op.getLoc(), declareCallee(*callee),
                         ValueRange{runtimeContext, tensors, intArgs,
                                    floatArgs});
  }
  LLVM::ReturnOp::create(builder, loc, ValueRange());
  return success();
}

namespace {
struct LowerToRuntimePass
    : public parc::impl::LowerToRuntimePassBase<LowerToRuntimePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp func = findModelFunction(module, functionName);
    if (!func) {
      module.emitError("no model function to lower (@")
          << (functionName.empty() ? StringRef("forward")
                                   : StringRef(functionName))
          << ", or a single function)";
      return signalPassFailure();
    }
    dist::MeshOp mesh;
    if (auto meshName = func->getAttrOfType<FlatSymbolRefAttr>("dist.mesh"))
      mesh = dist::lookupMesh(func, meshName);
    if (func->hasAttr("dist.mesh") && !func->hasAttr("dist.partitioned")) {
      func.emitError("is sharded but not partitioned; run --parc-partition");
      return signalPassFailure();
    }
    // A stage of an asynchronous pipeline carries its prologue, which the
    // runtime runs once before the first step.
    func::FuncOp prologue = getPrologue(func);
    if (failed(RuntimeLowering(module, func, mesh, "parc_program").run()) ||
        (prologue &&
         failed(
             RuntimeLowering(module, prologue, mesh, "parc_prologue").run())))
      return signalPassFailure();
    // Only the LLVM dialect form remains.
    for (Operation &op : llvm::make_early_inc_range(*module.getBody()))
      if (isa<func::FuncOp, dist::MeshOp>(op))
        op.erase();
  }
};
} // namespace
