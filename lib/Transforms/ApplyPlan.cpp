//===- ApplyPlan.cpp - attaches a plan's mesh and shardings ---------------===//

#include "dist/IR/DistOps.h"
#include "parc/IR/ParcDialect.h"
#include "parc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/MemoryBuffer.h"

#include <nlohmann/json.hpp>

namespace mlir::parc {
#define GEN_PASS_DEF_APPLYPLANPASS
#include "parc/Transforms/Passes.h.inc"
} // namespace mlir::parc

using namespace mlir;
using namespace mlir::parc;
// Mesh axes keep the order the plan lists them in.
using Json = nlohmann::ordered_json;

namespace {

/// Records where a JSON text stops being JSON.
struct SyntaxErrorFinder : nlohmann::json_sax<Json> {
  size_t position = 0;
  std::string token;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t &) override { return true; }
  bool string(string_t &) override { return true; }
  bool binary(binary_t &) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t &) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t at, const std::string &last,
                   const nlohmann::detail::exception &) override {
    position = at;
    token = last;
    return false;
  }
};

/// "line:column" of byte `position` in `text`.
std::string lineColumn(StringRef text, size_t position) {
  StringRef before = text.take_front(position);
  size_t line = before.count('\n') + 1;
  size_t lastNewline = before.rfind('\n');
  size_t column =
      lastNewline == StringRef::npos ? position : position - lastNewline - 1;
  return std::to_string(line) + ":" + std::to_string(column + 1);
}

struct ApplyPlanPass : public parc::impl::ApplyPlanPassBase<ApplyPlanPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(apply()))
      signalPassFailure();
  }

  InFlightDiagnostic error() {
    return emitError(getOperation().getLoc()) << planFile << ": ";
  }

  LogicalResult apply();
  FailureOr<dist::MeshOp> createMesh(const Json &axes);
  LogicalResult applySharding(const std::string &name, const Json &dims,
                              dist::MeshOp mesh);
  LogicalResult shardOptimizerState(dist::MeshOp mesh);
};

} // namespace

LogicalResult ApplyPlanPass::apply() {
  if (planFile.empty())
    return emitError(getOperation().getLoc())
           << "no plan file given: --parc-apply-plan=plan=FILE";
  auto buffer = llvm::MemoryBuffer::getFile(planFile);
  if (!buffer)
    return error() << "cannot read the plan: " << buffer.getError().message();
  StringRef text = (*buffer)->getBuffer();
  Json plan = Json::parse(text.begin(), text.end(), nullptr,
                          /*allow_exceptions=*/false);
  if (plan.is_discarded()) {
    SyntaxErrorFinder finder;
    Json::sax_parse(text.begin(), text.end(), &finder);
    return error() << lineColumn(text, finder.position)
                   << ": not valid JSON near '" << finder.token << "'";
  }
  if (!plan.is_object())
    return error() << "a plan is a JSON object";
  auto mesh = plan.find("mesh");
  if (mesh == plan.end())
    return error() << "the plan has no \"mesh\"";
  FailureOr<dist::MeshOp> meshOp = createMesh(*mesh);
  if (failed(meshOp))
    return failure();
  auto shardings = plan.find("shardings");
  if (shardings != plan.end()) {
    if (!shardings->is_object())
      return error() << "\"shardings\" must map names to shardings";
    for (auto &[name, dims] : shardings->items())
      if (failed(applySharding(name, dims, *meshOp)))
        return failure();
  }
  auto zero = plan.find("zero");
  if (zero == plan.end())
    return success();
  if (!zero->is_number_integer() ||
      (zero->get<int64_t>() != 0 && zero->get<int64_t>() != 1))
    return error() << "\"zero\" must be 0 or 1 (ZeRO stage)";
  return zero->get<int64_t>() == 1 ? shardOptimizerState(*meshOp) : success();
}

// ZeRO-1: every optimizer state tensor is split over dp on its first
// dimension that dp divides, parameters stay whole; the update then needs its
// gradient only as this rank's shard (a reduce_scatter) and gathers the new
// parameter.
LogicalResult ApplyPlanPass::shardOptimizerState(dist::MeshOp mesh) {
  std::optional<int64_t> dp = mesh.getAxisSize("dp");
  if (!dp)
    return error() << "\"zero\": 1 shards optimizer state over the mesh "
                      "axis 'dp', which the mesh does not have";
  Builder builder(&getContext());
  auto meshRef = FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  for (auto func : getOperation().getOps<func::FuncOp>())
    for (unsigned index = 0; index < func.getNumArguments(); ++index) {
      auto role =
          func.getArgAttrOfType<StringAttr>(index, ParcDialect::kRoleAttrName);
      auto type = cast<ShapedType>(func.getArgument(index).getType());
      if (!role ||
          func.getArgAttr(index, dist::DistDialect::kPlanShardingAttrName))
        continue;
      SmallVector<Attribute> dims(type.getRank(), builder.getArrayAttr({}));
      // Parameters stay whole (ZeRO-1, not -3): pinning them keeps the
      // state's split from spreading to them.
      if (role.getValue() == "optstate") {
        // The first dimension that dp divides holds the split.
        auto dim = llvm::find_if(type.getShape(),
                                 [&](int64_t size) { return size % *dp == 0; });
        if (dim == type.getShape().end())
          continue;
        dims[dim - type.getShape().begin()] =
            builder.getArrayAttr({builder.getStringAttr("dp")});
      } else if (role.getValue() != "param") {
        continue;
      }
      func.setArgAttr(index, dist::DistDialect::kPlanShardingAttrName,
                      dist::ShardingAttr::get(&getContext(), meshRef,
                                              builder.getArrayAttr(dims),
                                              builder.getArrayAttr({})));
    }
  return success();
}

FailureOr<dist::MeshOp> ApplyPlanPass::createMesh(const Json &axes) {
  if (!axes.is_object() || axes.empty())
    return error() << "\"mesh\" must map axis names to sizes, e.g. "
                      "{\"dp\": 2, \"tp\": 2}";
  OpBuilder builder(&getContext());
  SmallVector<Attribute> names;
  SmallVector<int64_t> sizes;
  for (auto &[name, size] : axes.items()) {
    if (!size.is_number_integer() || size.get<int64_t>() < 1)
      return error() << "mesh axis '" << name
                     << "' needs a positive integer size";
    names.push_back(builder.getStringAttr(name));
    sizes.push_back(size.get<int64_t>());
  }
  ModuleOp module = getOperation();
  if (auto existing = module.lookupSymbol<dist::MeshOp>("mesh")) {
    if (existing.getAxisNames() != builder.getArrayAttr(names) ||
        existing.getAxisSizes() != ArrayRef<int64_t>(sizes))
      return error() << "the module already has a different @mesh";
    return existing;
  }
  builder.setInsertionPointToStart(module.getBody());
  return dist::MeshOp::create(builder, module.getLoc(), "mesh",
                              builder.getArrayAttr(names),
                              builder.getDenseI64ArrayAttr(sizes));
}

LogicalResult ApplyPlanPass::applySharding(const std::string &name,
                                           const Json &dims,
                                           dist::MeshOp mesh) {
  Builder builder(&getContext());
  if (!dims.is_array())
    return error() << "the sharding of '" << name
                   << "' must list the axes of each dimension, e.g. "
                      "[[\"dp\"], []]";
  SmallVector<Attribute> dimAttrs;
  for (const Json &axes : dims) {
    if (!axes.is_array())
      return error() << "the sharding of '" << name
                     << "' must list each dimension's axes as an array";
    SmallVector<Attribute> axisAttrs;
    for (const Json &axis : axes) {
      if (!axis.is_string())
        return error() << "the sharding of '" << name
                       << "' names axes with strings";
      std::string axisName = axis.get<std::string>();
      if (!mesh.getAxisSize(axisName))
        return error() << "the sharding of '" << name << "' uses axis '"
                       << axisName << "', which the mesh does not have";
      axisAttrs.push_back(builder.getStringAttr(axisName));
    }
    dimAttrs.push_back(builder.getArrayAttr(axisAttrs));
  }
  auto meshRef = FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  dist::ShardingAttr sharding = dist::ShardingAttr::getChecked(
      [&] { return error() << "the sharding of '" << name << "': "; },
      &getContext(), meshRef, builder.getArrayAttr(dimAttrs),
      builder.getArrayAttr({}));
  if (!sharding)
    return failure();

  bool found = false;
  SmallVector<Operation *> namedOps;
  getOperation().walk([&](Operation *op) {
    auto opName = op->getAttrOfType<StringAttr>(ParcDialect::kNameAttrName);
    if (opName && opName.getValue() == name && op->getNumResults() > 0)
      namedOps.push_back(op);
  });
  for (Operation *op : namedOps) {
    found = true;
    Value value = op->getResult(0);
    if (failed(dist::verifyShardingForType(
            sharding, cast<ShapedType>(value.getType()), mesh,
            "'" + name + "'", [&] { return error(); })))
      return failure();
    OpBuilder builder(op->getContext());
    builder.setInsertionPointAfter(op);
    auto pinned =
        dist::ConstraintOp::create(builder, op->getLoc(), value, sharding);
    pinned->setAttr(dist::DistDialect::kFromPlanAttrName,
                    builder.getUnitAttr());
    value.replaceAllUsesExcept(pinned, pinned);
  }
  for (auto func : getOperation().getOps<func::FuncOp>())
    for (unsigned index = 0; index < func.getNumArguments(); ++index) {
      auto argName =
          func.getArgAttrOfType<StringAttr>(index, ParcDialect::kNameAttrName);
      if (!argName || argName.getValue() != name)
        continue;
      found = true;
      auto type = cast<ShapedType>(func.getArgument(index).getType());
      if (failed(dist::verifyShardingForType(
              sharding, type, mesh, "'" + name + "'",
              [&] { return error(); })))
        return failure();
      func.setArgAttr(index, dist::DistDialect::kPlanShardingAttrName,
                      sharding);
    }
  if (!found)
    return error() << "the plan shards '" << name
                   << "', which names no argument or op (parc.name)";
  return success();
}
