//===- CpuBackend.cpp - the cpu backend: OpenBLAS kernels, MPI ------------===//

#include "cpu/Blocks.h"
#include "cpu/Kernels.h"
#include "cpu/MpiCommunicator.h"

#include <cstdlib>
#include <cstring>

using namespace parcrt;

namespace {
class CpuBackend final : public Backend {
public:
  explicit CpuBackend(const MeshInfo &mesh) : mesh(mesh), comms(mesh) {}

  const char *name() const override { return "cpu"; }

  void *allocate(size_t bytes) override {
    // Cache-line aligned and zeroed, so an unwritten byte reads as 0 on
    // every rank.
    size_t rounded = (bytes + 63) / 64 * 64;
    void *memory = std::aligned_alloc(64, rounded ? rounded : 64);
    if (memory)
      std::memset(memory, 0, rounded);
    return memory;
  }
  void release(void *memory) override { std::free(memory); }
  void toArena(void *dst, const void *src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void fromArena(void *dst, const void *src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void synchronize() override { comms.synchronize(nullptr); }
  Communicator &communicator() override { return comms; }

  void binary(char op, const TensorRef *t) override { cpu::binary(op, t); }
  void unary(Unary op, const TensorRef *t) override { cpu::unary(op, t); }
  void select(const TensorRef *t) override { cpu::select(t); }
  void cast(const TensorRef *t) override { cpu::cast(t); }
  void matmul(const TensorRef *t, bool transposeLhs,
              bool transposeRhs) override {
    cpu::matmul(t, transposeLhs, transposeRhs);
  }
  void softmax(const TensorRef *t, int64_t axis) override {
    cpu::softmax(t, axis);
  }
  void layerNorm(const TensorRef *t, double epsilon) override {
    cpu::layerNorm(t, epsilon);
  }
  void rmsNorm(const TensorRef *t, double epsilon) override {
    cpu::rmsNorm(t, epsilon);
  }
  void embedding(const TensorRef *t, bool hasShard) override {
    cpu::embedding(t, hasShard);
  }
  void take(const TensorRef *t, bool hasShard) override {
    cpu::take(t, hasShard);
  }
  void attention(const TensorRef *t, bool causal, double scale) override {
    cpu::attention(t, causal, scale);
  }
  void crossEntropy(const TensorRef *t) override { cpu::crossEntropy(t); }

  void copy(const TensorRef *t) override { cpu::copy(t); }
  void transpose(const TensorRef *t, const int64_t *perm) override {
    cpu::transpose(t, perm);
  }
  void reduce(Reduce op, const TensorRef *t, const int64_t *axes,
              int numAxes) override {
    cpu::reduce(op, t, axes, numAxes);
  }
  void concat(const TensorRef *inputs, int numInputs, const TensorRef &result,
              int64_t axis) override {
    cpu::concat(inputs, numInputs, result, axis);
  }
  void slice(const TensorRef *t, const int64_t *offsets,
             const int64_t *strides) override {
    cpu::slice(t, offsets, strides);
  }
  void constant(const TensorRef &result, const double *values,
                int64_t numValues) override {
    cpu::constant(result, values, numValues);
  }

  void broadcastTo(const TensorRef *t) override { cpu::broadcastTo(t); }
  void sliceGrad(const TensorRef *t, const int64_t *offsets,
                 const int64_t *strides) override {
    cpu::sliceGrad(t, offsets, strides);
  }
  void activationGrad(Activation kind, const TensorRef *t) override {
    cpu::activationGrad(kind, t);
  }
  void softmaxGrad(const TensorRef *t, int64_t axis) override {
    cpu::softmaxGrad(t, axis);
  }
  void layerNormGrad(const TensorRef *t, double epsilon) override {
    cpu::layerNormGrad(t, epsilon);
  }
  void rmsNormGrad(const TensorRef *t, double epsilon) override {
    cpu::rmsNormGrad(t, epsilon);
  }
  void embeddingGrad(const TensorRef *t, bool hasShard) override {
    cpu::embeddingGrad(t, hasShard);
  }
  void attentionGrad(const TensorRef *t, bool causal, double scale) override {
    cpu::attentionGrad(t, causal, scale);
  }
  void crossEntropyGrad(const TensorRef *t, int64_t count) override {
    cpu::crossEntropyGrad(t, count);
  }
  void adamwUpdate(const TensorRef *t, double lr, double beta1, double beta2,
                   double epsilon, double weightDecay) override {
    cpu::adamwUpdate(t, lr, beta1, beta2, epsilon, weightDecay);
  }
  void sgdUpdate(const TensorRef *t, double lr, double momentum) override {
    cpu::sgdUpdate(t, lr, momentum);
  }
  void clipCoefficient(const TensorRef *t, double maxNorm) override {
    cpu::clipCoefficient(t, maxNorm);
  }

  /// This rank's chunk along `dim`: local, no communication.
  void allSlice(const std::vector<int> &axes, int64_t dim,
                const TensorRef *t) override {
    int64_t length = t[1].shape[dim];
    cpu::copyAlongDim(t[0].data, t[0].shape[dim],
                      mesh.indexInGroup(axes) * length, t[1].data, length, 0,
                      length, cpu::outerCount(t[0], dim),
                      cpu::innerBytes(t[0], dim));
  }
  void axisIndex(const std::vector<int> &axes,
                 const TensorRef &result) override {
    cpu::requireInteger("axis_index", "the result", result);
    int64_t index = mesh.indexInGroup(axes);
    if (result.dtype == PARCRT_I32)
      *static_cast<int32_t *>(result.data) = static_cast<int32_t>(index);
    else
      *static_cast<int64_t *>(result.data) = index;
  }

private:
  const MeshInfo &mesh;
  cpu::MpiCommunicator comms;
};
} // namespace

std::unique_ptr<Backend> parcrt::createCpuBackend(const MeshInfo &mesh) {
  return std::make_unique<CpuBackend>(mesh);
}
