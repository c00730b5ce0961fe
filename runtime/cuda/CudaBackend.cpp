//===- CudaBackend.cpp - the cuda backend of libparcrt --------------------===//
//
// One GPU per rank (local rank -> device, modulo the device count). The
// arena lives in device memory; every op is queued on one compute stream:
// cuBLAS for matmul, the kernels of Kernels.cu for everything else, and
// NCCL on a communication stream for collectives (NcclCommunicator).
//
// Math is f32: the entry points hand the math ops f32 copies of f16/bf16
// tensors (core/Widening.h) and cast converts between every dtype; layout
// ops (reshape, transpose, slice, concat, constant, embedding, take,
// broadcast_to, slice_grad) and collectives move any dtype. Ids, labels and
// shard indices are i32 or i64; an id out of range (without a shard) is
// reported by the next synchronize() or fromArena(), kernels being
// asynchronous.
//
//===----------------------------------------------------------------------===//

#include "CudaSupport.h"
#include "Kernels.h"
#include "NcclCommunicator.h"
#include "core/Fatal.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

using namespace parcrt;
using namespace parcrt::cuda;

//===----------------------------------------------------------------------===//
// Support
//===----------------------------------------------------------------------===//

void parcrt::cuda::fatal(const char *format, ...) {
  char message[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  parcrt::fatal(std::string("cuda backend: ") + message);
}

void parcrt::cuda::check(cudaError_t status, const char *what) {
  if (status != cudaSuccess)
    fatal("%s: %s (CUDA error %d)", what, cudaGetErrorString(status),
          static_cast<int>(status));
}

Scratch::~Scratch() {
  if (data)
    cudaFree(data);
}

void *Scratch::get(size_t bytes) {
  if (bytes <= capacity && data)
    return data;
  // Queued work may still use the old buffer.
  check(cudaDeviceSynchronize(), "synchronize before growing scratch memory");
  if (data)
    check(cudaFree(data), "cudaFree (scratch)");
  data = nullptr;
  size_t grown = std::max<size_t>(bytes, 2 * capacity);
  grown = std::max<size_t>(grown, 1 << 20);
  cudaError_t status = cudaMalloc(&data, grown);
  if (status != cudaSuccess)
    fatal("cannot allocate %zu bytes of scratch memory: %s", grown,
          cudaGetErrorString(status));
  capacity = grown;
  return data;
}

namespace {

const char *cublasMessage(cublasStatus_t status) {
  return cublasGetStatusString(status);
}

void checkBlas(cublasStatus_t status, const char *what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    fatal("%s: %s", what, cublasMessage(status));
}

bool envFlag(const char *name) {
  const char *value = std::getenv(name);
  return value && *value && std::strcmp(value, "0") != 0;
}

int toInt(int64_t value, const char *what) {
  if (value < 0 || value > INT_MAX)
    fatal("matmul: %s = %lld does not fit cuBLAS's int", what,
          static_cast<long long>(value));
  return static_cast<int>(value);
}

//===----------------------------------------------------------------------===//
// The backend
//===----------------------------------------------------------------------===//

class CudaBackend final : public Backend {
public:
  CudaBackend(const MeshInfo &mesh, int device) : mesh(mesh), device(device) {}
  ~CudaBackend() override;

  /// Creates the streams, the cuBLAS handle and the communicator; false
  /// with `error` set when one fails.
  bool initialize(std::string *error);

  const char *name() const override { return "cuda"; }

  void *allocate(size_t bytes) override;
  void release(void *memory) override;
  void toArena(void *dst, const void *src, size_t bytes) override;
  void fromArena(void *dst, const void *src, size_t bytes) override;
  void synchronize() override;
  Communicator &communicator() override { return *comms; }
  // cublasGemmEx: bf16/f16 operands, f32 accumulation, one rounding.
  bool hasHalfFloatGemm() const override { return true; }

  // Every compute method (parcrt/BackendOps.def), defined below.
#define PARCRT_BACKEND_OP(method, parameters, arguments)                       \
  void method parameters override;
#include "parcrt/BackendOps.def"

  void allSlice(const std::vector<int> &axes, int64_t dim,
                const TensorRef *t) override {
    comms->allSlice(axes, dim, t);
  }
  void axisIndex(const std::vector<int> &axes,
                 const TensorRef &result) override {
    comms->axisIndex(axes, result);
  }

private:
  /// fatal() unless every tensor of `t[0, count)` is f32.
  void requireF32(const char *op, const TensorRef *t, int count) const;
  void matmulContractingBatch(const TensorRef *t, bool transposeLhs,
                              bool transposeRhs);
  /// One column-major GEMM (or `count` strided ones) of matmul's dtype.
  struct Gemm;
  void launchGemm(const Gemm &gemm, const void *a, const void *b, void *c,
                  bool accumulate);
  /// Which of conv2d's three products to compute (the others are its
  /// operands): the output, the input's gradient or the weight's.
  enum class ConvolutionPass { Forward, InputGrad, WeightGrad };
  void convolve(ConvolutionPass pass, const ConvolutionShape &shape,
                float *input, float *weight, float *output);
  /// fatal() unless `t` holds indices (i32 or i64).
  void requireIndices(const char *op, const char *what,
                      const TensorRef &t) const;
  /// fatal() if a kernel has met an index the reference evaluator rejects;
  /// waits for the compute stream.
  void checkIndexErrors();

  /// One constant's values in device memory, re-uploaded if the host
  /// values change.
  struct DeviceConstant {
    std::vector<double> host;
    double *device = nullptr;
  };

  const MeshInfo &mesh;
  int device;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  Scratch scratch;
  int *errors = nullptr; // device word of k*Error bits (Kernels.h)
  std::unique_ptr<NcclCommunicator> comms;
  std::map<std::pair<const double *, int64_t>, DeviceConstant> constants;
};

} // namespace

CudaBackend::~CudaBackend() {
  if (stream)
    cudaStreamSynchronize(stream);
  comms.reset();
  for (auto &entry : constants)
    cudaFree(entry.second.device);
  if (errors)
    cudaFree(errors);
  if (blas)
    cublasDestroy(blas);
  if (stream)
    cudaStreamDestroy(stream);
}

bool CudaBackend::initialize(std::string *error) {
  auto fail = [&](const std::string &message) {
    if (error)
      *error = message;
    return false;
  };
  cudaError_t status = cudaSetDevice(device);
  if (status == cudaSuccess)
    status = cudaFree(nullptr); // creates the context: reports busy devices
  if (status != cudaSuccess)
    return fail("cannot use CUDA device " + std::to_string(device) + ": " +
                cudaGetErrorString(status));
  status = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (status == cudaSuccess)
    status = cudaMalloc(&errors, sizeof(int));
  if (status == cudaSuccess)
    status = cudaMemset(errors, 0, sizeof(int));
  if (status != cudaSuccess)
    return fail(std::string("cannot create the compute stream: ") +
                cudaGetErrorString(status));
  cublasStatus_t blasStatus = cublasCreate(&blas);
  if (blasStatus == CUBLAS_STATUS_SUCCESS)
    blasStatus = cublasSetStream(blas, stream);
  // f32 GEMMs stay f32 unless asked: TF32 changes results at the 1e-3 level.
  if (blasStatus == CUBLAS_STATUS_SUCCESS)
    blasStatus = cublasSetMathMode(blas, envFlag("PARCRT_CUDA_TF32")
                                             ? CUBLAS_TF32_TENSOR_OP_MATH
                                             : CUBLAS_DEFAULT_MATH);
  if (blasStatus != CUBLAS_STATUS_SUCCESS)
    return fail(std::string("cannot initialize cuBLAS: ") +
                cublasMessage(blasStatus));
  comms = std::make_unique<NcclCommunicator>(
      mesh, stream, scratch, envFlag("PARCRT_CUDA_ALWAYS_NCCL"));
  return comms->initialize(error);
}

void CudaBackend::requireF32(const char *op, const TensorRef *t,
                             int count) const {
  for (int i = 0; i < count; ++i)
    if (t[i].dtype != PARCRT_F32)
      fatal("%s: tensor %d has dtype %s; the cuda backend computes in f32 "
            "only",
            op, i, dtypeName(t[i].dtype));
}

void CudaBackend::requireIndices(const char *op, const char *what,
                                 const TensorRef &t) const {
  if (t.dtype != PARCRT_I32 && t.dtype != PARCRT_I64)
    fatal("%s: %s have dtype %s, expected i32 or i64", op, what,
          dtypeName(t.dtype));
}

void CudaBackend::checkIndexErrors() {
  int found = 0;
  check(cudaMemcpyAsync(&found, errors, sizeof(int), cudaMemcpyDeviceToHost,
                        stream),
        "reading the error word");
  check(cudaStreamSynchronize(stream), "compute stream");
  if (found & kEmbeddingIdError)
    fatal("embedding: an id is outside the table's rows");
  if (found & kTakeIndexError)
    fatal("take: an index is outside [0, classes)");
  if (found & kCrossEntropyLabelError)
    fatal("cross_entropy: a label is outside [0, classes)");
  if (found & kEmbeddingGradIdError)
    fatal("embedding_grad: an id is outside the table's rows");
  if (found & kCrossEntropyGradLabelError)
    fatal("cross_entropy_grad: a label is outside [0, classes)");
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

void *CudaBackend::allocate(size_t bytes) {
  void *memory = nullptr;
  cudaError_t status = cudaMalloc(&memory, bytes ? bytes : 1);
  if (status != cudaSuccess)
    fatal("cannot allocate %zu bytes on CUDA device %d: %s", bytes, device,
          cudaGetErrorString(status));
  return memory;
}

void CudaBackend::release(void *memory) {
  if (!memory)
    return;
  check(cudaStreamSynchronize(stream), "synchronize before cudaFree");
  check(cudaFree(memory), "cudaFree");
}

void CudaBackend::toArena(void *dst, const void *src, size_t bytes) {
  if (!bytes)
    return;
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream),
        "copy to the arena");
  check(cudaStreamSynchronize(stream), "copy to the arena");
}

void CudaBackend::fromArena(void *dst, const void *src, size_t bytes) {
  if (!bytes)
    return;
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream),
        "copy from the arena");
  checkIndexErrors();
}

void CudaBackend::synchronize() {
  checkIndexErrors();
  comms->synchronize(nullptr);
}

//===----------------------------------------------------------------------===//
// Elementwise, normalization, lookups
//===----------------------------------------------------------------------===//

void CudaBackend::binary(char op, const TensorRef *t) {
  parcrt_dtype dtype = t[2].dtype;
  if (t[0].dtype != dtype || t[1].dtype != dtype)
    fatal("binary '%c': operands %s and %s, result %s: dtypes must match", op,
          dtypeName(t[0].dtype), dtypeName(t[1].dtype), dtypeName(dtype));
  if (dtype != PARCRT_F32 && dtype != PARCRT_I32 && dtype != PARCRT_I64)
    fatal("binary '%c': dtype %s is not supported by the cuda backend yet "
          "(f32, i32, i64)",
          op, dtypeName(dtype));
  if (t[0].rank > t[2].rank || t[1].rank > t[2].rank)
    fatal("binary '%c': an operand has a higher rank than the result", op);
  check(launchBinary(op, t, stream), "binary kernel");
}

void CudaBackend::unary(Unary op, const TensorRef *t) {
  requireF32("unary", t, 2);
  check(launchUnary(op, t, stream), "unary kernel");
}

void CudaBackend::select(const TensorRef *t) {
  if (t[0].dtype != PARCRT_I32 && t[0].dtype != PARCRT_I64 &&
      t[0].dtype != PARCRT_F32)
    fatal("select: the condition must be i32, i64 or f32, not %s",
          dtypeName(t[0].dtype));
  if (t[1].dtype != t[3].dtype || t[2].dtype != t[3].dtype)
    fatal("select: operands %s and %s, result %s: dtypes must match",
          dtypeName(t[1].dtype), dtypeName(t[2].dtype), dtypeName(t[3].dtype));
  check(launchSelect(t, stream), "select kernel");
}

void CudaBackend::compare(const TensorRef *t, Comparison predicate) {
  if (t[0].dtype != t[1].dtype || t[2].dtype != PARCRT_I32 ||
      (t[0].dtype != PARCRT_F32 && t[0].dtype != PARCRT_I32 &&
       t[0].dtype != PARCRT_I64))
    fatal("compare: operands %s and %s, result %s: the operands must share "
          "one of f32, i32, i64 and the result must be i32",
          dtypeName(t[0].dtype), dtypeName(t[1].dtype), dtypeName(t[2].dtype));
  check(launchCompare(t, predicate, stream), "compare kernel");
}

void CudaBackend::cast(const TensorRef *t) {
  check(launchCast(t, stream), "cast kernel");
}

void CudaBackend::softmax(const TensorRef *t, int64_t axis) {
  requireF32("softmax", t, 2);
  if (axis < 0)
    axis += t[0].rank;
  if (axis < 0 || axis >= t[0].rank)
    fatal("softmax: axis %lld out of range", static_cast<long long>(axis));
  check(launchSoftmax(t, axis, stream), "softmax kernel");
}

void CudaBackend::layerNorm(const TensorRef *t, double epsilon) {
  requireF32("layer_norm", t, 4);
  check(launchLayerNorm(t, epsilon, stream), "layer_norm kernel");
}

void CudaBackend::rmsNorm(const TensorRef *t, double epsilon) {
  requireF32("rms_norm", t, 3);
  check(launchRmsNorm(t, epsilon, stream), "rms_norm kernel");
}

void CudaBackend::embedding(const TensorRef *t, bool hasShard) {
  if (t[0].dtype != t[hasShard ? 3 : 2].dtype)
    fatal("embedding: the table and the result have different dtypes");
  requireIndices("embedding", "ids", t[1]);
  if (hasShard)
    requireIndices("embedding", "shard index", t[2]);
  if (t[0].rank != 2)
    fatal("embedding: the table must have rank 2");
  check(launchEmbedding(t, hasShard, errors, stream), "embedding kernel");
}

void CudaBackend::take(const TensorRef *t, bool hasShard) {
  if (t[0].dtype != t[hasShard ? 3 : 2].dtype)
    fatal("take: the input and the result have different dtypes");
  requireIndices("take", "indices", t[1]);
  if (hasShard)
    requireIndices("take", "shard index", t[2]);
  if (t[0].rank < 1)
    fatal("take: the input must have rank >= 1");
  check(launchTake(t, hasShard, errors, stream), "take kernel");
}

/// fatal() unless flash attention's tiles fit the device's shared memory
/// at the head dimensions of q and v (t[0], t[2]).
static void requireAttentionFits(const char *op, const TensorRef *t) {
  if (!attentionFitsSharedMemory(t[0].shape[3], t[2].shape[3]))
    fatal("%s: head dimensions %lld (queries, keys) and %lld (values) leave "
          "no room for one row of flash attention's tiles in the device's "
          "shared memory",
          op, static_cast<long long>(t[0].shape[3]),
          static_cast<long long>(t[2].shape[3]));
}

void CudaBackend::attention(const TensorRef *t, bool causal, bool hasMask,
                            double scale) {
  int count = hasMask ? 5 : 4;
  requireF32("attention", t, count);
  for (int i = 0; i < count; ++i)
    if (t[i].rank != 4)
      fatal("attention: tensor %d must have rank 4 ([B, H, S, D])", i);
  requireAttentionFits("attention", t);
  check(launchAttention(t, causal, hasMask, scale, stream),
        "attention kernel");
}

void CudaBackend::crossEntropy(const TensorRef *t) {
  requireF32("cross_entropy", t, 1);
  requireF32("cross_entropy", &t[2], 1);
  requireIndices("cross_entropy", "labels", t[1]);
  int64_t rows = t[1].numElements();
  float *losses = static_cast<float *>(
      scratch.get(std::max<int64_t>(rows, 1) * sizeof(float)));
  check(launchCrossEntropy(t, losses, errors, stream), "cross_entropy kernel");
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

namespace {
/// The element offset of each batch index of one matmul operand: its
/// matrices' strides aligned to the result's batch dimensions (0 where the
/// operand is broadcast).
std::vector<int64_t> batchStrides(const TensorRef &operand, int batchRank) {
  std::vector<int64_t> strides(batchRank, 0);
  int operandBatch = operand.rank - 2;
  int64_t stride =
      operand.shape[operand.rank - 2] * operand.shape[operand.rank - 1];
  for (int d = operandBatch - 1; d >= 0; --d) {
    if (operand.shape[d] != 1)
      strides[batchRank - operandBatch + d] = stride;
    stride *= operand.shape[d];
  }
  return strides;
}

/// Whether batch dimensions [first, end) of an operand advance by one
/// constant `step` per linear index over `batch[first, end)`.
bool linearSuffix(const std::vector<int64_t> &strides,
                  const std::vector<int64_t> &batch, int first, int64_t &step) {
  int64_t inner = 1;
  bool known = false;
  step = 0;
  for (int d = static_cast<int>(batch.size()) - 1; d >= first; --d) {
    if (batch[d] != 1) {
      if (!known) {
        if (strides[d] % inner != 0)
          return false;
        step = strides[d] / inner;
        known = true;
      } else if (strides[d] != step * inner) {
        return false;
      }
    }
    inner *= batch[d];
  }
  return true;
}
} // namespace

/// The cuBLAS type of a matmul tensor's elements: f32, bf16 or f16.
static cudaDataType_t gemmType(const TensorRef &t) {
  switch (t.dtype) {
  case PARCRT_F32:
    return CUDA_R_32F;
  case PARCRT_BF16:
    return CUDA_R_16BF;
  case PARCRT_F16:
    return CUDA_R_16F;
  default:
    fatal("matmul: dtype %s; the cuda backend multiplies f32, bf16 and f16",
          dtypeName(t.dtype));
  }
}

/// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLAS
/// gets the operands swapped. A row-major matrix's leading dimension is its
/// last size, transposed or not. Strides count elements.
struct CudaBackend::Gemm {
  cublasOperation_t opA, opB;
  int m, n, k, lda, ldb, ldc;
  cudaDataType_t inputType, resultType;
  int count = 1;
  int64_t strideA = 0, strideB = 0, strideC = 0;
};

void CudaBackend::launchGemm(const Gemm &g, const void *a, const void *b,
                             void *c, bool accumulate) {
  const float one = 1.0f, zero = 0.0f;
  const float *beta = accumulate ? &one : &zero;
  if (g.count == 1)
    checkBlas(cublasGemmEx(blas, g.opB, g.opA, g.m, g.n, g.k, &one, b,
                           g.inputType, g.ldb, a, g.inputType, g.lda, beta, c,
                           g.resultType, g.ldc, CUBLAS_COMPUTE_32F,
                           CUBLAS_GEMM_DEFAULT),
              "cublasGemmEx");
  else
    checkBlas(cublasGemmStridedBatchedEx(
                  blas, g.opB, g.opA, g.m, g.n, g.k, &one, b, g.inputType,
                  g.ldb, g.strideB, a, g.inputType, g.lda, g.strideA, beta, c,
                  g.resultType, g.ldc, g.strideC, g.count, CUBLAS_COMPUTE_32F,
                  CUBLAS_GEMM_DEFAULT),
              "cublasGemmStridedBatchedEx");
}

/// The element `index` of `t`'s data.
static const char *elementAt(const TensorRef &t, int64_t index) {
  return static_cast<const char *>(t.data) + index * dtypeBytes(t.dtype);
}

/// contract_batch: every batch's product adds into the one result matrix
/// (beta = 1 after the first); a transposed lhs with a plain rhs is one
/// GEMM whose depth runs over batch and rows together. A 16-bit result
/// summed over several GEMMs is summed in f32 scratch and rounded once.
void CudaBackend::matmulContractingBatch(const TensorRef *t, bool transposeLhs,
                                         bool transposeRhs) {
  const TensorRef &lhs = t[0], &rhs = t[1], &result = t[2];
  int64_t batches = 1;
  for (int d = 0; d < lhs.rank - 2; ++d)
    batches *= lhs.shape[d];
  int64_t lhsMatrix = lhs.shape[lhs.rank - 2] * lhs.shape[lhs.rank - 1];
  int64_t rhsMatrix = rhs.shape[rhs.rank - 2] * rhs.shape[rhs.rank - 1];
  int64_t depth =
      transposeLhs ? lhs.shape[lhs.rank - 2] : lhs.shape[lhs.rank - 1];
  if (result.shape[0] == 0 || result.shape[1] == 0)
    return;
  if (batches * depth == 0) {
    check(cudaMemsetAsync(result.data, 0, result.bytes(), stream),
          "matmul (empty depth)");
    return;
  }
  bool oneGemm = transposeLhs && !transposeRhs;
  Gemm gemm{transposeLhs ? CUBLAS_OP_T : CUBLAS_OP_N,
            transposeRhs ? CUBLAS_OP_T : CUBLAS_OP_N,
            toInt(result.shape[1], "columns"),
            toInt(result.shape[0], "rows"),
            toInt(oneGemm ? batches * depth : depth, "depth"),
            toInt(lhs.shape[lhs.rank - 1], "lhs leading dimension"),
            toInt(rhs.shape[rhs.rank - 1], "rhs leading dimension"),
            toInt(result.shape[1], "columns"),
            gemmType(lhs),
            gemmType(result)};
  if (oneGemm)
    return launchGemm(gemm, lhs.data, rhs.data, result.data, false);
  TensorRef sum = result;
  if (result.dtype != PARCRT_F32) {
    sum.dtype = PARCRT_F32;
    sum.data = scratch.get(sum.bytes());
    gemm.resultType = CUDA_R_32F;
  }
  for (int64_t batch = 0; batch < batches; ++batch)
    launchGemm(gemm, elementAt(lhs, batch * lhsMatrix),
               elementAt(rhs, batch * rhsMatrix), sum.data, batch > 0);
  if (sum.data != result.data) {
    TensorRef round[] = {sum, result};
    check(launchCast(round, stream), "matmul (rounding the sum)");
  }
}

void CudaBackend::matmul(const TensorRef *t, bool transposeLhs,
                         bool transposeRhs, bool contractBatch) {
  const TensorRef &lhs = t[0], &rhs = t[1], &result = t[2];
  if (lhs.dtype != rhs.dtype || lhs.dtype != result.dtype)
    fatal("matmul: operands and result have dtypes %s, %s and %s; they must "
          "share one",
          dtypeName(lhs.dtype), dtypeName(rhs.dtype), dtypeName(result.dtype));
  if (lhs.rank < 2 || rhs.rank < 2 || result.rank < 2)
    fatal("matmul: operands and result must have rank >= 2");
  if (contractBatch)
    return matmulContractingBatch(t, transposeLhs, transposeRhs);
  int batchRank = result.rank - 2;
  int64_t rows = result.shape[result.rank - 2];
  int64_t columns = result.shape[result.rank - 1];
  int64_t depth =
      transposeLhs ? lhs.shape[lhs.rank - 2] : lhs.shape[lhs.rank - 1];
  std::vector<int64_t> batch(result.shape, result.shape + batchRank);
  int64_t batchCount = 1;
  for (int64_t size : batch)
    batchCount *= size;
  if (rows == 0 || columns == 0 || batchCount == 0)
    return;
  if (depth == 0) {
    check(cudaMemsetAsync(result.data, 0, result.bytes(), stream),
          "matmul (empty depth)");
    return;
  }
  std::vector<int64_t> lhsStrides = batchStrides(lhs, batchRank);
  std::vector<int64_t> rhsStrides = batchStrides(rhs, batchRank);
  // The longest suffix of batch dimensions that one strided-batched GEMM
  // covers; the dimensions before it are looped over.
  int first = 0;
  int64_t lhsStep = 0, rhsStep = 0;
  while (!(linearSuffix(lhsStrides, batch, first, lhsStep) &&
           linearSuffix(rhsStrides, batch, first, rhsStep)))
    ++first;
  int64_t inner = 1;
  for (int d = first; d < batchRank; ++d)
    inner *= batch[d];
  int64_t outer = batchCount / inner;
  int64_t matrix = rows * columns;
  Gemm gemm{transposeLhs ? CUBLAS_OP_T : CUBLAS_OP_N,
            transposeRhs ? CUBLAS_OP_T : CUBLAS_OP_N,
            toInt(columns, "columns"),
            toInt(rows, "rows"),
            toInt(depth, "depth"),
            toInt(lhs.shape[lhs.rank - 1], "lhs leading dimension"),
            toInt(rhs.shape[rhs.rank - 1], "rhs leading dimension"),
            toInt(columns, "columns"),
            gemmType(lhs),
            gemmType(result),
            toInt(inner, "batch count"),
            lhsStep,
            rhsStep,
            matrix};
  for (int64_t o = 0; o < outer; ++o) {
    int64_t lhsBase = 0, rhsBase = 0, rest = o;
    for (int d = first - 1; d >= 0; --d) {
      int64_t index = rest % batch[d];
      rest /= batch[d];
      lhsBase += index * lhsStrides[d];
      rhsBase += index * rhsStrides[d];
    }
    launchGemm(gemm, elementAt(lhs, lhsBase), elementAt(rhs, rhsBase),
               const_cast<char *>(elementAt(result, o * inner * matrix)),
               false);
  }
}

//===----------------------------------------------------------------------===//
// Layout
//===----------------------------------------------------------------------===//

void CudaBackend::copy(const TensorRef *t) {
  size_t bytes = t[1].bytes();
  if (t[0].bytes() != bytes)
    fatal("reshape: %zu bytes into %zu", t[0].bytes(), bytes);
  if (bytes && t[0].data != t[1].data)
    check(cudaMemcpyAsync(t[1].data, t[0].data, bytes, cudaMemcpyDeviceToDevice,
                          stream),
          "reshape copy");
}

void CudaBackend::transpose(const TensorRef *t, const int64_t *perm) {
  if (t[0].dtype != t[1].dtype)
    fatal("transpose: dtypes differ");
  check(launchPermute(t[1].data, t[0].data, dtypeBytes(t[0].dtype), t[0].rank,
                      t[0].shape, perm, stream),
        "transpose kernel");
}

void CudaBackend::reduce(Reduce op, const TensorRef *t, const int64_t *axes,
                         int numAxes) {
  requireF32("reduce", t, 2);
  int64_t normalized[PARCRT_MAX_RANK];
  if (numAxes > t[0].rank)
    fatal("reduce: %d axes for rank %d", numAxes, t[0].rank);
  for (int a = 0; a < numAxes; ++a) {
    normalized[a] = axes[a] < 0 ? axes[a] + t[0].rank : axes[a];
    if (normalized[a] < 0 || normalized[a] >= t[0].rank)
      fatal("reduce: axis %lld out of range", static_cast<long long>(axes[a]));
  }
  check(launchReduce(op, t, normalized, numAxes, stream), "reduce kernel");
}

void CudaBackend::concat(const TensorRef *inputs, int numInputs,
                         const TensorRef &result, int64_t axis) {
  size_t size = dtypeBytes(result.dtype);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d)
    outer *= result.shape[d];
  for (int d = axis + 1; d < result.rank; ++d)
    inner *= result.shape[d];
  int64_t pitch = result.shape[axis] * inner, start = 0;
  for (int i = 0; i < numInputs; ++i) {
    if (inputs[i].dtype != result.dtype)
      fatal("concat: input %d has dtype %s, the result %s", i,
            dtypeName(inputs[i].dtype), dtypeName(result.dtype));
    int64_t width = inputs[i].shape[axis] * inner;
    check(launchCopy2D(static_cast<char *>(result.data) + start * size, pitch,
                       inputs[i].data, width, width, outer, size, stream),
          "concat kernel");
    start += width;
  }
}

void CudaBackend::slice(const TensorRef *t, const int64_t *offsets,
                        const int64_t *strides) {
  if (t[0].dtype != t[1].dtype)
    fatal("slice: dtypes differ");
  check(launchSlice(t, offsets, strides, stream), "slice kernel");
}

void CudaBackend::constant(const TensorRef &result, const double *values,
                           int64_t numValues) {
  int64_t count = result.numElements();
  if (numValues == 1 || count == 0) {
    check(launchFill(result.data, result.dtype, count, nullptr,
                     numValues ? values[0] : 0.0, stream),
          "constant kernel");
    return;
  }
  if (numValues != count)
    fatal("constant: %lld values for %lld elements",
          static_cast<long long>(numValues), static_cast<long long>(count));
  // The values are static data of the program: upload them once, and again
  // only if they change (a caller reusing its buffer).
  DeviceConstant &cached = constants[{values, numValues}];
  size_t bytes = numValues * sizeof(double);
  if (!cached.device) {
    cudaError_t status = cudaMalloc(&cached.device, bytes);
    if (status != cudaSuccess)
      fatal("cannot allocate %zu bytes for a constant: %s", bytes,
            cudaGetErrorString(status));
  }
  if (cached.host.empty() ||
      std::memcmp(cached.host.data(), values, bytes) != 0) {
    cached.host.assign(values, values + numValues);
    check(cudaMemcpyAsync(cached.device, cached.host.data(), bytes,
                          cudaMemcpyHostToDevice, stream),
          "constant upload");
  }
  check(
      launchFill(result.data, result.dtype, count, cached.device, 0.0, stream),
      "constant kernel");
}

//===----------------------------------------------------------------------===//
// Gradients and optimizers
//===----------------------------------------------------------------------===//

namespace {
/// fatal() unless `a` and `b` have the same number of elements.
void requireSameCount(const char *op, const char *what, const TensorRef &a,
                      const TensorRef &b) {
  if (a.numElements() != b.numElements())
    fatal("%s: %s: %lld elements, expected %lld", op, what,
          static_cast<long long>(b.numElements()),
          static_cast<long long>(a.numElements()));
}
} // namespace

void CudaBackend::broadcastTo(const TensorRef *t) {
  if (t[0].dtype != t[1].dtype)
    fatal("broadcast_to: dtypes differ");
  if (t[0].rank > t[1].rank)
    fatal("broadcast_to: the operand has a higher rank than the result");
  int offset = t[1].rank - t[0].rank;
  for (int d = 0; d < t[0].rank; ++d)
    if (t[0].shape[d] != 1 && t[0].shape[d] != t[1].shape[offset + d])
      fatal("broadcast_to: operand dimension %d (%lld) does not broadcast to "
            "%lld",
            d, static_cast<long long>(t[0].shape[d]),
            static_cast<long long>(t[1].shape[offset + d]));
  check(launchBroadcastTo(t, stream), "broadcast_to kernel");
}

void CudaBackend::sliceGrad(const TensorRef *t, const int64_t *offsets,
                            const int64_t *strides) {
  if (t[0].dtype != t[1].dtype)
    fatal("slice_grad: dtypes differ");
  if (t[0].rank != t[1].rank)
    fatal("slice_grad: operand rank %d, result rank %d", t[0].rank,
          t[1].rank);
  for (int d = 0; d < t[0].rank; ++d)
    if (t[0].shape[d] > 0 &&
        (offsets[d] < 0 || strides[d] < 1 ||
         offsets[d] + (t[0].shape[d] - 1) * strides[d] >= t[1].shape[d]))
      fatal("slice_grad: dimension %d leaves the result", d);
  check(launchSliceGrad(t, offsets, strides, stream), "slice_grad kernel");
}

void CudaBackend::activationGrad(Activation kind, const TensorRef *t) {
  requireF32("activation_grad", t, 3);
  requireSameCount("activation_grad", "g", t[0], t[1]);
  requireSameCount("activation_grad", "result", t[0], t[2]);
  check(launchActivationGrad(kind, t, stream), "activation_grad kernel");
}

void CudaBackend::softmaxGrad(const TensorRef *t, int64_t axis) {
  requireF32("softmax_grad", t, 3);
  if (axis < 0)
    axis += t[0].rank;
  if (axis < 0 || axis >= t[0].rank)
    fatal("softmax_grad: axis %lld out of range", static_cast<long long>(axis));
  requireSameCount("softmax_grad", "g", t[0], t[1]);
  requireSameCount("softmax_grad", "result", t[0], t[2]);
  check(launchSoftmaxGrad(t, axis, stream), "softmax_grad kernel");
}

void CudaBackend::layerNormGrad(const TensorRef *t, double epsilon) {
  requireF32("layer_norm_grad", t, 6);
  if (t[0].rank < 1)
    fatal("layer_norm_grad: x must have rank >= 1");
  int64_t features = t[0].shape[t[0].rank - 1];
  int64_t rows = features ? t[0].numElements() / features : 0;
  for (int i : {1, 4, 5})
    if (t[i].numElements() != features)
      fatal("layer_norm_grad: tensor %d must hold %lld elements", i,
            static_cast<long long>(features));
  float *stats = static_cast<float *>(
      scratch.get(std::max<int64_t>(2 * rows, 1) * sizeof(float)));
  check(launchLayerNormGrad(t, epsilon, stats, stream),
        "layer_norm_grad kernel");
}

void CudaBackend::rmsNormGrad(const TensorRef *t, double epsilon) {
  requireF32("rms_norm_grad", t, 5);
  if (t[0].rank < 1)
    fatal("rms_norm_grad: x must have rank >= 1");
  int64_t features = t[0].shape[t[0].rank - 1];
  int64_t rows = features ? t[0].numElements() / features : 0;
  for (int i : {1, 4})
    if (t[i].numElements() != features)
      fatal("rms_norm_grad: tensor %d must hold %lld elements", i,
            static_cast<long long>(features));
  float *stats = static_cast<float *>(
      scratch.get(std::max<int64_t>(2 * rows, 1) * sizeof(float)));
  check(launchRmsNormGrad(t, epsilon, stats, stream), "rms_norm_grad kernel");
}

void CudaBackend::embeddingGrad(const TensorRef *t, bool hasShard) {
  const TensorRef &table = t[hasShard ? 3 : 2];
  requireIndices("embedding_grad", "ids", t[0]);
  if (hasShard)
    requireIndices("embedding_grad", "shard index", t[2]);
  requireF32("embedding_grad", &t[1], 1);
  requireF32("embedding_grad", &table, 1);
  if (table.rank != 2)
    fatal("embedding_grad: the result must have rank 2");
  if (t[1].numElements() != t[0].numElements() * table.shape[1])
    fatal("embedding_grad: g must hold one row of %lld per id",
          static_cast<long long>(table.shape[1]));
  check(launchEmbeddingGrad(t, hasShard, errors, stream),
        "embedding_grad kernel");
}

void CudaBackend::attentionGrad(const TensorRef *t, bool causal, bool hasMask,
                                double scale) {
  int count = hasMask ? 8 : 7;
  requireF32("attention_grad", t, count);
  for (int i = 0; i < count; ++i)
    if (t[i].rank != 4)
      fatal("attention_grad: tensor %d must have rank 4 ([B, H, S, D])", i);
  requireAttentionFits("attention_grad", t);
  int64_t rows = t[0].shape[0] * t[0].shape[1] * t[0].shape[2];
  float *stats = static_cast<float *>(
      scratch.get(std::max<int64_t>(2 * rows, 1) * sizeof(float)));
  check(launchAttentionGrad(t, causal, hasMask, scale, stats, stream),
        "attention_grad kernel");
}

void CudaBackend::crossEntropyGrad(const TensorRef *t, int64_t count,
                                   bool hasShard) {
  const TensorRef &result = t[hasShard ? 5 : 3];
  requireF32("cross_entropy_grad", t, 1);
  requireIndices("cross_entropy_grad", "labels", t[1]);
  requireF32("cross_entropy_grad", &t[2], 1);
  requireF32("cross_entropy_grad", &result, 1);
  if (t[2].numElements() != 1)
    fatal("cross_entropy_grad: g must be a scalar");
  if (hasShard) {
    requireF32("cross_entropy_grad", &t[3], 1);
    requireSameCount("cross_entropy_grad", "normalizer", t[1], t[3]);
    requireIndices("cross_entropy_grad", "shard index", t[4]);
  }
  requireSameCount("cross_entropy_grad", "result", t[0], result);
  if (t[0].rank < 1)
    fatal("cross_entropy_grad: logits must have rank >= 1");
  if (t[1].numElements() * t[0].shape[t[0].rank - 1] != t[0].numElements())
    fatal("cross_entropy_grad: labels must have one element per row");
  check(launchCrossEntropyGrad(t, count, hasShard, errors, stream),
        "cross_entropy_grad kernel");
}

void CudaBackend::adamwUpdate(const TensorRef *t, bool skippable, double lr,
                              double beta1, double beta2, double epsilon,
                              double weightDecay) {
  int operands = skippable ? 6 : 5;
  requireF32("adamw_update", t, operands + 3);
  for (int i : {1, 2, 3, operands, operands + 1, operands + 2})
    requireSameCount("adamw_update", "a state or result", t[0], t[i]);
  if (t[4].numElements() != 1 || (skippable && t[5].numElements() != 1))
    fatal("adamw_update: step and skip must be scalars");
  check(launchAdamwUpdate(t, skippable, lr, beta1, beta2, epsilon, weightDecay,
                          stream),
        "adamw_update kernel");
}

void CudaBackend::sgdUpdate(const TensorRef *t, bool skippable, double lr,
                            double momentum) {
  int operands = skippable ? 4 : 3;
  requireF32("sgd_update", t, operands + 2);
  for (int i : {1, 2, operands, operands + 1})
    requireSameCount("sgd_update", "a state or result", t[0], t[i]);
  if (skippable && t[3].numElements() != 1)
    fatal("sgd_update: skip must be a scalar");
  check(launchSgdUpdate(t, skippable, lr, momentum, stream),
        "sgd_update kernel");
}

void CudaBackend::clipCoefficient(const TensorRef *t, double maxNorm) {
  requireF32("clip_coefficient", t, 2);
  if (t[0].numElements() != 1 || t[1].numElements() != 1)
    fatal("clip_coefficient: operand and result must be scalars");
  check(launchClipCoefficient(t, maxNorm, stream), "clip_coefficient kernel");
}

// conv2d as GEMMs over im2col columns, one image and one group at a time
// (row-major [depth = C/groups x KH x KW, positions = OH x OW] columns in
// scratch): output = weight . columns; the weight's gradient sums
// output' . columns^T over the images; the input's gradient folds
// weight^T . output' back with col2im. cuDNN would be faster; it is not on
// every machine the cuda backend runs on, cuBLAS is.
void CudaBackend::convolve(ConvolutionPass pass, const ConvolutionShape &c,
                           float *input, float *weight, float *output) {
  Window2d w = c.getWindow();
  int64_t groups = c.groups, groupChannels = c.weight[1];
  int64_t groupFilters = c.weight[0] / groups;
  int64_t depth = groupChannels * c.weight[2] * c.weight[3];
  int64_t positions = c.output[2] * c.output[3];
  int64_t inputPlane = c.input[2] * c.input[3];
  float *written = pass == ConvolutionPass::Forward     ? output
                   : pass == ConvolutionPass::InputGrad ? input
                                                        : weight;
  int64_t writtenElements = pass == ConvolutionPass::Forward
                                ? c.output[0] * c.output[1] * positions
                            : pass == ConvolutionPass::InputGrad
                                ? c.input[0] * c.input[1] * inputPlane
                                : c.weight[0] * depth;
  if (depth * positions * c.input[0] * groupFilters == 0) {
    check(cudaMemsetAsync(written, 0, writtenElements * sizeof(float), stream),
          "conv2d (empty product)");
    return;
  }
  auto *columns = static_cast<float *>(scratch.get(depth * positions * 4));
  int m = toInt(positions, "positions"), k = toInt(depth, "depth"),
      filters = toInt(groupFilters, "filters");
  Gemm forward{CUBLAS_OP_N, CUBLAS_OP_N, m, filters,    k,
               k,           m,           m, CUDA_R_32F, CUDA_R_32F};
  Gemm weightGrad{CUBLAS_OP_N, CUBLAS_OP_T, k, filters,    m,
                  m,           m,           k, CUDA_R_32F, CUDA_R_32F};
  Gemm inputGrad{CUBLAS_OP_T, CUBLAS_OP_N, m, k,          filters,
                 k,           m,           m, CUDA_R_32F, CUDA_R_32F};
  for (int64_t n = 0; n < c.input[0]; ++n)
    for (int64_t g = 0; g < groups; ++g) {
      float *image = input + (n * c.input[1] + g * groupChannels) * inputPlane;
      float *result = output + (n * c.output[1] + g * groupFilters) * positions;
      float *filter = weight + g * groupFilters * depth;
      switch (pass) {
      case ConvolutionPass::Forward:
        check(launchIm2col(image, columns, w, groupChannels, stream),
              "conv2d (im2col)");
        launchGemm(forward, filter, columns, result, false);
        break;
      case ConvolutionPass::WeightGrad:
        check(launchIm2col(image, columns, w, groupChannels, stream),
              "conv2d_weight_grad (im2col)");
        launchGemm(weightGrad, result, columns, filter, n > 0);
        break;
      case ConvolutionPass::InputGrad:
        launchGemm(inputGrad, filter, result, columns, false);
        check(launchCol2im(columns, image, w, groupChannels, stream),
              "conv2d_input_grad (col2im)");
        break;
      }
    }
}

void CudaBackend::conv2d(const TensorRef *t, const int64_t *geometry) {
  requireF32("conv2d", t, 3);
  ConvolutionShape c = readConvolution("conv2d", t[0], t[1], t[2], geometry);
  convolve(ConvolutionPass::Forward, c, static_cast<float *>(t[0].data),
           static_cast<float *>(t[1].data), static_cast<float *>(t[2].data));
}

void CudaBackend::conv2dInputGrad(const TensorRef *t, const int64_t *geometry) {
  requireF32("conv2d_input_grad", t, 3);
  ConvolutionShape c =
      readConvolution("conv2d_input_grad", t[2], t[0], t[1], geometry);
  convolve(ConvolutionPass::InputGrad, c, static_cast<float *>(t[2].data),
           static_cast<float *>(t[0].data), static_cast<float *>(t[1].data));
}

void CudaBackend::conv2dWeightGrad(const TensorRef *t,
                                   const int64_t *geometry) {
  requireF32("conv2d_weight_grad", t, 3);
  ConvolutionShape c =
      readConvolution("conv2d_weight_grad", t[0], t[2], t[1], geometry);
  convolve(ConvolutionPass::WeightGrad, c, static_cast<float *>(t[0].data),
           static_cast<float *>(t[2].data), static_cast<float *>(t[1].data));
}

void CudaBackend::maxPool2d(const TensorRef *t, const int64_t *window) {
  requireF32("max_pool2d", t, 2);
  check(launchMaxPool2d(t, readPoolingWindow("max_pool2d", t[0], t[1], window),
                        stream),
        "max_pool2d kernel");
}

void CudaBackend::maxPool2dGrad(const TensorRef *t, const int64_t *window) {
  requireF32("max_pool2d_grad", t, 3);
  check(
      launchMaxPool2dGrad(
          t, readPoolingWindow("max_pool2d_grad", t[0], t[1], window), stream),
      "max_pool2d_grad kernel");
}

void CudaBackend::avgPool2d(const TensorRef *t, const int64_t *window,
                            bool countIncludePad) {
  requireF32("avg_pool2d", t, 2);
  check(launchAvgPool2d(t, readPoolingWindow("avg_pool2d", t[0], t[1], window),
                        countIncludePad, stream),
        "avg_pool2d kernel");
}

void CudaBackend::avgPool2dGrad(const TensorRef *t, const int64_t *window,
                                bool countIncludePad) {
  requireF32("avg_pool2d_grad", t, 2);
  check(launchAvgPool2dGrad(
            t, readPoolingWindow("avg_pool2d_grad", t[1], t[0], window),
            countIncludePad, stream),
        "avg_pool2d_grad kernel");
}

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

std::unique_ptr<Backend> parcrt::createCudaBackend(const MeshInfo &mesh,
                                                   int localRank,
                                                   std::string *error) {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    if (error) {
      if (status == cudaSuccess)
        *error = "no CUDA device: cudaGetDeviceCount found none";
      else
        *error = std::string(status == cudaErrorInsufficientDriver
                                 ? "no CUDA driver"
                                 : "no usable CUDA device") +
                 ": cudaGetDeviceCount returned error " +
                 std::to_string(static_cast<int>(status)) + " (" +
                 cudaGetErrorString(status) + ")";
    }
    cudaGetLastError(); // clear the error for later calls
    return nullptr;
  }
  int device = (localRank < 0 ? 0 : localRank) % count;
  auto backend = std::make_unique<CudaBackend>(mesh, device);
  if (!backend->initialize(error))
    return nullptr;
  return backend;
}
