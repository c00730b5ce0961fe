//===- FactorSharding.cpp - between tensor and factor shardings -----------===//

#include "parc/Transforms/FactorSharding.h"

using namespace mlir;
using namespace mlir::parc;

FactorAxes mlir::parc::projectOntoFactors(const ShardingRule &rule,
                                          const TensorFactors &tensor,
                                          const TensorSharding &sharding,
                                          dist::MeshOp mesh) {
  FactorAxes factors(rule.getFactors().size());
  for (auto [dimFactors, axes] : llvm::zip_equal(tensor, sharding.dims)) {
    // Fill the dimension's factors major to minor: an axis goes to the
    // current factor while it divides what is left of it.
    size_t current = 0;
    int64_t remaining =
        dimFactors.empty() ? 1 : rule.getFactors()[dimFactors[0]].size;
    for (StringAttr axis : axes) {
      int64_t size = mesh.getAxisSize(axis.getValue()).value_or(1);
      while (remaining == 1 && current + 1 < dimFactors.size())
        remaining = rule.getFactors()[dimFactors[++current]].size;
      if (dimFactors.empty() || remaining % size != 0)
        break;
      factors[dimFactors[current]].push_back(axis);
      remaining /= size;
    }
  }
  return factors;
}

SmallVector<FactorClaim>
mlir::parc::collectFactorClaims(const ShardingRule &rule,
                                ArrayRef<const TensorSharding *> shardings,
                                dist::MeshOp mesh) {
  SmallVector<FactorClaim> claims;
  SmallVector<const TensorFactors *> tensors = rule.getTensors();
  for (auto [index, sharding] : llvm::enumerate(shardings)) {
    if (!sharding)
      continue;
    FactorAxes projected =
        projectOntoFactors(rule, *tensors[index], *sharding, mesh);
    for (const DimFactors &dim : *tensors[index])
      for (int64_t factor : dim)
        claims.push_back(
            {factor, static_cast<unsigned>(index), projected[factor]});
  }
  return claims;
}

TensorSharding mlir::parc::deriveTensorSharding(const ShardingRule &rule,
                                                const TensorFactors &tensor,
                                                const FactorAxes &factors,
                                                bool isResult) {
  TensorSharding sharding = TensorSharding::replicated(tensor.size());
  for (auto [dim, dimFactors] : llvm::enumerate(tensor))
    for (int64_t factor : dimFactors)
      llvm::append_range(sharding.dims[dim], factors[factor]);
  if (!isResult)
    return sharding;
  // A result sums over the reduction factors it does not span (a matmul's
  // k; the rows of a layer-norm gradient's dgamma, not of its dx).
  llvm::SmallDenseSet<int64_t> spanned;
  for (const DimFactors &dimFactors : tensor)
    spanned.insert(dimFactors.begin(), dimFactors.end());
  for (auto [factor, axes] : llvm::enumerate(factors))
    if (rule.getFactors()[factor].kind == FactorKind::Reduction &&
        !spanned.contains(factor))
      llvm::append_range(sharding.partial, axes);
  return sharding;
}

void mlir::parc::legalizeFactorAxes(const ShardingRule &rule,
                                    FactorAxes &factors, dist::MeshOp mesh) {
  ArrayRef<Factor> info = rule.getFactors();
  llvm::SmallDenseSet<StringAttr> used;
  for (auto [factor, axes] : llvm::enumerate(factors)) {
    if (info[factor].kind == FactorKind::Replicated) {
      axes.clear();
      continue;
    }
    AxisList kept;
    int64_t product = 1;
    for (StringAttr axis : axes) {
      std::optional<int64_t> size = mesh.getAxisSize(axis.getValue());
      if (!size || used.contains(axis) || info[factor].size % (product * *size))
        break;
      product *= *size;
      kept.push_back(axis);
      used.insert(axis);
    }
    axes = kept;
  }
  // A minor factor of a compound dimension may be split only when all the
  // factors before it are split completely.
  for (const TensorFactors *tensor : rule.getTensors())
    for (const DimFactors &dimFactors : *tensor) {
      bool majorComplete = true;
      for (int64_t factor : dimFactors) {
        if (!majorComplete)
          factors[factor].clear();
        majorComplete = mesh.getGroupSize(factors[factor]) == info[factor].size;
      }
    }
}
