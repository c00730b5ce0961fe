//===- StageMeshes.cpp - the ranks of stage functions ---------------------===//

#include "parc/Transforms/StageMeshes.h"

#include "dist/IR/DistOps.h"
#include "parc/IR/ModelConvention.h"

using namespace mlir;

FailureOr<::parc::StagedMeshes>
mlir::parc::getStagedMeshes(ArrayRef<func::FuncOp> stages) {
  SmallVector<dist::MeshOp> meshes;
  for (func::FuncOp stage : stages) {
    auto name = stage->getAttrOfType<FlatSymbolRefAttr>("dist.mesh");
    dist::MeshOp mesh = name ? dist::lookupMesh(stage, name) : nullptr;
    if (!mesh)
      return stage.emitError("is a stage function but names no mesh");
    meshes.push_back(mesh);
  }
  auto sameShape = [&](dist::MeshOp mesh) {
    return mesh.getAxisNames() == meshes.front().getAxisNames() &&
           mesh.getAxisSizes() == meshes.front().getAxisSizes();
  };
  if (llvm::all_of(meshes, sameShape))
    return ::parc::StagedMeshes();
  std::vector<::parc::MeshShape> shapes;
  for (auto [index, mesh] : llvm::enumerate(meshes)) {
    func::FuncOp stage = stages[index];
    StringAttr axis = getStageAxis(stage);
    if (mesh.getAxisNames() != meshes.front().getAxisNames() || !axis ||
        mesh.getAxisNames().empty() || mesh.getAxisNames()[0] != axis ||
        mesh.getAxisSizes()[0] != int64_t(stages.size()))
      return stage.emitError("runs on mesh @")
             << mesh.getSymName()
             << ", which differs from the other stages' meshes in more than "
                "sizes: stages on meshes of their own need the same axes, "
                "the stage axis first with one coordinate per stage";
    shapes.emplace_back(std::vector<int64_t>(mesh.getAxisSizes().begin(),
                                             mesh.getAxisSizes().end()));
  }
  return ::parc::StagedMeshes(std::move(shapes));
}
