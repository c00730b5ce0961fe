//===- CudaBackendCheck.cpp - the cuda backend against the cpu backend ----===//
//
// Runs every Backend op on tiny inputs through createCudaBackend and
// createCpuBackend (one-rank mesh) and compares the results: one line
// `PASS op` or `FAIL op (max error ..)` per case, exit status 1 on any
// failure. Without a usable GPU it prints `SKIP: <reason>` and exits 0.
// Collectives run twice: as local copies (one-rank groups) and, with
// PARCRT_CUDA_ALWAYS_NCCL=1, through NCCL communicators of one rank.
//
//===----------------------------------------------------------------------===//

#include "core/Widening.h"
#include "parcrt/Backend.h"
#include "parcrt/Safetensors.h"

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace parcrt;

namespace {

using Shape = std::vector<int64_t>;

/// A tensor in host memory, in its dtype's bytes.
struct HostTensor {
  parcrt_dtype dtype = PARCRT_F32;
  Shape shape;
  std::vector<unsigned char> bytes;

  int64_t count() const {
    int64_t n = 1;
    for (int64_t size : shape)
      n *= size;
    return n;
  }
  double at(int64_t i) const {
    switch (dtype) {
    case PARCRT_F32: {
      float v;
      std::memcpy(&v, &bytes[i * 4], 4);
      return v;
    }
    case PARCRT_I32: {
      int32_t v;
      std::memcpy(&v, &bytes[i * 4], 4);
      return v;
    }
    case PARCRT_I64: {
      int64_t v;
      std::memcpy(&v, &bytes[i * 8], 8);
      return static_cast<double>(v);
    }
    case PARCRT_BF16:
    case PARCRT_F16: {
      uint16_t v;
      std::memcpy(&v, &bytes[i * 2], 2);
      return dtype == PARCRT_BF16 ? bfloat16ToFloat(v) : halfToFloat(v);
    }
    default:
      return NAN;
    }
  }
};

size_t sizeOf(parcrt_dtype dtype) {
  return dtype == PARCRT_I64                             ? 8
         : (dtype == PARCRT_F16 || dtype == PARCRT_BF16) ? 2
                                                         : 4;
}

/// Deterministic uniform values in [low, high).
uint64_t seed = 0x9e3779b97f4a7c15ull;
float uniform(float low, float high) {
  seed = seed * 6364136223846793005ull + 1442695040888963407ull;
  double unit = static_cast<double>(seed >> 11) / 9007199254740992.0;
  return static_cast<float>(low + (high - low) * unit);
}

HostTensor f32(Shape shape, float low = -1.0f, float high = 1.0f) {
  HostTensor t{PARCRT_F32, std::move(shape), {}};
  t.bytes.resize(t.count() * 4);
  for (int64_t i = 0; i < t.count(); ++i) {
    float v = uniform(low, high);
    std::memcpy(&t.bytes[i * 4], &v, 4);
  }
  return t;
}

HostTensor i64(Shape shape, const std::vector<int64_t> &values) {
  HostTensor t{PARCRT_I64, std::move(shape), {}};
  t.bytes.resize(t.count() * 8);
  for (int64_t i = 0; i < t.count(); ++i)
    std::memcpy(&t.bytes[i * 8], &values[i % values.size()], 8);
  return t;
}

HostTensor i32(Shape shape, const std::vector<int64_t> &values) {
  HostTensor t{PARCRT_I32, std::move(shape), {}};
  t.bytes.resize(t.count() * 4);
  for (int64_t i = 0; i < t.count(); ++i) {
    int32_t v = static_cast<int32_t>(values[i % values.size()]);
    std::memcpy(&t.bytes[i * 4], &v, 4);
  }
  return t;
}

HostTensor f32Values(Shape shape, const std::vector<float> &values) {
  HostTensor t{PARCRT_F32, std::move(shape), {}};
  t.bytes.resize(t.count() * 4);
  for (int64_t i = 0; i < t.count(); ++i)
    std::memcpy(&t.bytes[i * 4], &values[i % values.size()], 4);
  return t;
}

/// An attention shape checked forward and backward.
struct AttentionCase {
  const char *name;
  int64_t batch, heads, kvHeads, queries, keys, headDim, valueDim;
  /// The additive mask's shape; empty for none.
  Shape mask;
  /// Its values, cycled; -inf hides a key.
  std::vector<float> maskValues;

  Shape queryShape() const { return {batch, heads, queries, headDim}; }
  Shape keyShape(int64_t features) const {
    return {batch, kvHeads, keys, features};
  }
  Shape resultShape() const { return {batch, heads, queries, valueDim}; }
  HostTensor maskTensor() const {
    return mask.empty() ? HostTensor{} : f32Values(mask, maskValues);
  }
  double scale() const { return 1.0 / std::sqrt(static_cast<double>(headDim)); }
};

/// Causal and not (each case runs both), fewer and more queries than keys,
/// more keys, queries and value dims than one tile or thread block covers,
/// grouped-query and multi-query heads, masks broadcast over batch, heads
/// or queries, and rows whose every key is masked.
const std::vector<AttentionCase> &attentionCases() {
  const float hidden = -INFINITY;
  static const std::vector<AttentionCase> cases = {
      {"square", 2, 2, 2, 4, 4, 8, 8, {}, {}},
      {"decode", 1, 2, 2, 3, 7, 4, 6, {}, {}},
      {"more-queries", 1, 1, 1, 5, 3, 4, 4, {}, {}},
      {"long", 1, 2, 2, 7, 300, 16, 200, {}, {}},
      {"many-queries", 1, 1, 1, 200, 150, 8, 140, {}, {}},
      // GPT's head dimensions: several flash attention tiles each way,
      // the second past the default 48 KiB of shared memory.
      {"gpt-heads", 1, 4, 4, 200, 200, 64, 64, {}, {}},
      {"wide-heads", 1, 2, 1, 130, 130, 128, 128, {}, {}},
      {"grouped", 2, 4, 2, 5, 6, 8, 4, {}, {}},
      {"multi-query", 1, 3, 1, 4, 9, 4, 4, {}, {}},
      {"padding-mask", 2, 4, 2, 5, 6, 8, 8, {2, 1, 1, 6},
       {0, 0, 0, 0, hidden, hidden, 0, 0, 0, 0, 0, hidden}},
      {"full-mask", 1, 2, 2, 4, 5, 4, 4, {1, 2, 4, 5},
       {0.5f, -1.0f, hidden, 0, 2.0f, 0.25f, hidden}},
      {"masked-rows", 1, 2, 1, 3, 4, 4, 4, {1, 1, 3, 4},
       {hidden, hidden, hidden, hidden, 0, hidden, 1.0f, 0}},
  };
  return cases;
}

/// Buffers of one backend for one case, released at the end.
class Buffers {
public:
  explicit Buffers(Backend &backend) : backend(backend) {}
  ~Buffers() {
    for (void *memory : allocations)
      backend.release(memory);
  }

  TensorRef input(const HostTensor &host) {
    TensorRef t = describe(host.dtype, host.shape);
    backend.toArena(t.data, host.bytes.data(), host.bytes.size());
    return t;
  }

  /// A result, pre-filled with 0xff bytes (NaN for f32) so that elements a
  /// kernel does not write show up.
  TensorRef output(parcrt_dtype dtype, const Shape &shape) {
    TensorRef t = describe(dtype, shape);
    size_t bytes = count(shape) * sizeOf(dtype);
    std::vector<unsigned char> fill(bytes, 0xff);
    backend.toArena(t.data, fill.data(), bytes);
    return t;
  }

  HostTensor read(const TensorRef &t) {
    backend.synchronize();
    HostTensor host{t.dtype, Shape(t.shape, t.shape + t.rank), {}};
    host.bytes.resize(host.count() * sizeOf(t.dtype));
    backend.fromArena(host.bytes.data(), t.data, host.bytes.size());
    return host;
  }

private:
  static int64_t count(const Shape &shape) {
    int64_t n = 1;
    for (int64_t size : shape)
      n *= size;
    return n;
  }

  TensorRef describe(parcrt_dtype dtype, const Shape &shape) {
    TensorRef t;
    t.dtype = dtype;
    t.rank = static_cast<int>(shape.size());
    for (size_t d = 0; d < shape.size(); ++d)
      t.shape[d] = shape[d];
    t.data =
        backend.allocate(std::max<size_t>(count(shape) * sizeOf(dtype), 1));
    allocations.push_back(t.data);
    return t;
  }

  Backend &backend;
  std::vector<void *> allocations;
};

using Case = std::function<HostTensor(Backend &, Buffers &)>;

int failures = 0, passes = 0;

/// Runs `body` on both backends and compares the results.
void compare(const std::string &name, Backend &cuda, Backend &cpu,
             const Case &body, double tolerance = 1e-4) {
  HostTensor expected, actual;
  {
    Buffers buffers(cpu);
    expected = body(cpu, buffers);
  }
  {
    Buffers buffers(cuda);
    actual = body(cuda, buffers);
  }
  double maxError = 0;
  int64_t worst = -1;
  bool mismatch =
      expected.shape != actual.shape || expected.dtype != actual.dtype;
  for (int64_t i = 0; !mismatch && i < expected.count(); ++i) {
    double want = expected.at(i), got = actual.at(i);
    if (std::isnan(want) && std::isnan(got))
      continue;
    double error = std::fabs(want - got) / (1.0 + std::fabs(want));
    if (!(error <= maxError)) { // NaN on one side counts as infinite
      maxError = std::isnan(error) ? INFINITY : error;
      worst = i;
    }
  }
  if (!mismatch && maxError <= tolerance) {
    ++passes;
    std::printf("PASS %s\n", name.c_str());
  } else {
    ++failures;
    if (mismatch)
      std::printf("FAIL %s (result shape or dtype differs)\n", name.c_str());
    else
      std::printf("FAIL %s (max error %.3g at element %lld: cuda %.8g, cpu "
                  "%.8g)\n",
                  name.c_str(), maxError, static_cast<long long>(worst),
                  actual.at(worst), expected.at(worst));
  }
  std::fflush(stdout);
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

void checkCompute(Backend &cuda, Backend &cpu) {
  // Elementwise with numpy broadcasting.
  struct BinaryCase {
    const char *name;
    Shape lhs, rhs, result;
  };
  const BinaryCase binaryCases[] = {
      {"same", {2, 3, 4}, {2, 3, 4}, {2, 3, 4}},
      {"bcast-col", {2, 3, 4}, {3, 1}, {2, 3, 4}},
      {"bcast-row", {4}, {2, 3, 4}, {2, 3, 4}},
      {"bcast-both", {2, 1, 4}, {3, 1}, {2, 3, 4}},
      {"scalar", {}, {5, 2}, {5, 2}},
  };
  for (char op : {'+', '-', '*', '/'})
    for (const BinaryCase &c : binaryCases) {
      HostTensor lhs = f32(c.lhs), rhs = f32(c.rhs, 0.5f, 2.0f);
      compare(std::string("binary ") + op + " " + c.name, cuda, cpu,
              [&](Backend &b, Buffers &m) {
                TensorRef t[] = {m.input(lhs), m.input(rhs),
                                 m.output(PARCRT_F32, c.result)};
                b.binary(op, t);
                return m.read(t[2]);
              });
    }

  // Mixed precision's conversions (core/Widening.h): f32 to bf16 and f16
  // rounds to nearest even, and back is exact, on both backends alike.
  for (parcrt_dtype half : {PARCRT_BF16, PARCRT_F16}) {
    HostTensor x = f32({5, 7}, -3.0f, 3.0f);
    const char *name = half == PARCRT_BF16 ? "bf16" : "f16";
    compare(
        std::string("cast f32 -> ") + name, cuda, cpu,
        [&](Backend &b, Buffers &m) {
          TensorRef t[] = {m.input(x), m.output(half, {5, 7})};
          b.cast(t);
          return m.read(t[1]);
        },
        0);
    compare(
        std::string("cast f32 -> ") + name + " -> f32", cuda, cpu,
        [&](Backend &b, Buffers &m) {
          TensorRef narrow[] = {m.input(x), m.output(half, {5, 7})};
          b.cast(narrow);
          TensorRef wide[] = {narrow[1], m.output(PARCRT_F32, {5, 7})};
          b.cast(wide);
          return m.read(wide[1]);
        },
        0);
  }

  const std::pair<Backend::Unary, const char *> unaries[] = {
      {Backend::Unary::Neg, "neg"},
      {Backend::Unary::Exp, "exp"},
      {Backend::Unary::Log, "log"},
      {Backend::Unary::Tanh, "tanh"},
      {Backend::Unary::Relu, "relu"},
      {Backend::Unary::Sigmoid, "sigmoid"},
      {Backend::Unary::Silu, "silu"},
      {Backend::Unary::GeluErf, "gelu"},
      {Backend::Unary::GeluTanh, "gelu-tanh"},
  };
  for (auto [op, name] : unaries) {
    HostTensor x = op == Backend::Unary::Log ? f32({3, 7}, 0.1f, 3.0f)
                                             : f32({3, 7}, -3.0f, 3.0f);
    compare(std::string("unary ") + name, cuda, cpu,
            [&](Backend &b, Buffers &m) {
              TensorRef t[] = {m.input(x), m.output(PARCRT_F32, {3, 7})};
              b.unary(op, t);
              return m.read(t[1]);
            });
  }

  // Matmul: transposes, batches, batch broadcasting.
  struct MatmulCase {
    const char *name;
    Shape lhs, rhs, result;
    bool transposeLhs, transposeRhs, contractBatch = false;
  };
  const MatmulCase matmulCases[] = {
      {"2d", {3, 4}, {4, 5}, {3, 5}, false, false},
      {"2d-tl", {4, 3}, {4, 5}, {3, 5}, true, false},
      {"2d-tr", {3, 4}, {5, 4}, {3, 5}, false, true},
      {"2d-tl-tr", {4, 3}, {5, 4}, {3, 5}, true, true},
      {"batched", {2, 3, 4}, {2, 4, 5}, {2, 3, 5}, false, false},
      {"batched-tr", {2, 3, 4}, {2, 5, 4}, {2, 3, 5}, false, true},
      {"rhs-shared", {2, 3, 3, 4}, {4, 5}, {2, 3, 3, 5}, false, false},
      {"lhs-shared", {3, 4}, {2, 4, 5}, {2, 3, 5}, false, false},
      {"bcast-mixed", {2, 1, 3, 4}, {3, 4, 5}, {2, 3, 3, 5}, false, false},
      {"bcast-inner", {2, 3, 3, 4}, {2, 1, 4, 5}, {2, 3, 3, 5}, false, false},
      {"bcast-tl-tr", {1, 2, 4, 3}, {3, 1, 5, 4}, {3, 2, 3, 5}, true, true},
      {"larger", {64, 96}, {96, 80}, {64, 80}, false, false},
      // Summed over the batch: one GEMM (tl), or one per batch.
      {"contract-tl", {2, 3, 7, 4}, {2, 3, 7, 5}, {4, 5}, true, false, true},
      {"contract", {2, 4, 7}, {2, 7, 5}, {4, 5}, false, false, true},
      {"contract-tr", {3, 5, 7}, {3, 4, 7}, {5, 4}, false, true, true},
      {"contract-tl-tr", {3, 7, 5}, {3, 4, 7}, {5, 4}, true, true, true},
  };
  for (const MatmulCase &c : matmulCases) {
    HostTensor lhs = f32(c.lhs), rhs = f32(c.rhs);
    compare(std::string("matmul ") + c.name, cuda, cpu,
            [&](Backend &b, Buffers &m) {
              TensorRef t[] = {m.input(lhs), m.input(rhs),
                               m.output(PARCRT_F32, c.result)};
              b.matmul(t, c.transposeLhs, c.transposeRhs, c.contractBatch);
              return m.read(t[2]);
            });
  }

  // 16-bit GEMMs as the entry points run them (core/Widening.h): cuBLAS
  // takes bf16/f16 operands (f32 accumulation, one rounding), the cpu
  // widens them. Both round f32 sums of the same products, which differ in
  // order only: at most one 16-bit unit apart.
  for (parcrt_dtype half : {PARCRT_BF16, PARCRT_F16})
    for (const MatmulCase &c : matmulCases) {
      HostTensor lhs = f32(c.lhs), rhs = f32(c.rhs);
      compare(
          std::string("matmul ") + (half == PARCRT_BF16 ? "bf16 " : "f16 ") +
              c.name,
          cuda, cpu,
          [&](Backend &b, Buffers &m) {
            TensorRef narrowLhs[] = {m.input(lhs), m.output(half, c.lhs)};
            TensorRef narrowRhs[] = {m.input(rhs), m.output(half, c.rhs)};
            b.cast(narrowLhs);
            b.cast(narrowRhs);
            TensorRef t[] = {narrowLhs[1], narrowRhs[1],
                             m.output(half, c.result)};
            std::shared_ptr<WideningScratch> scratch;
            runGemm(b, scratch, t, 3, 1, [&](TensorRef *refs) {
              b.matmul(refs, c.transposeLhs, c.transposeRhs, c.contractBatch);
            });
            TensorRef wide[] = {t[2], m.output(PARCRT_F32, c.result)};
            b.cast(wide);
            return m.read(wide[1]);
          },
          half == PARCRT_BF16 ? 8e-3 : 1e-3);
    }

  for (int64_t axis : {0, 1, 2}) {
    HostTensor x = f32({3, 4, 5}, -4.0f, 4.0f);
    compare("softmax axis " + std::to_string(axis), cuda, cpu,
            [&](Backend &b, Buffers &m) {
              TensorRef t[] = {m.input(x), m.output(PARCRT_F32, {3, 4, 5})};
              b.softmax(t, axis);
              return m.read(t[1]);
            });
  }
  {
    HostTensor x = f32({2, 1000}, -4.0f, 4.0f);
    compare("softmax long rows", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(x), m.output(PARCRT_F32, {2, 1000})};
      b.softmax(t, 1);
      return m.read(t[1]);
    });
  }
  {
    // Row 0 is all -inf (zeros), row 1 partly.
    const float hidden = -INFINITY;
    HostTensor x = f32Values({2, 4}, {hidden, hidden, hidden, hidden, 1.0f,
                                      hidden, -2.0f, 0.5f});
    compare("softmax masked rows", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(x), m.output(PARCRT_F32, {2, 4})};
      b.softmax(t, 1);
      return m.read(t[1]);
    });
  }

  for (int64_t features : {8, 600}) {
    HostTensor x = f32({2, 3, features}, -2.0f, 3.0f), gamma = f32({features}),
               beta = f32({features});
    std::string suffix = " features " + std::to_string(features);
    compare("layer_norm" + suffix, cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(x), m.input(gamma), m.input(beta),
                       m.output(PARCRT_F32, {2, 3, features})};
      b.layerNorm(t, 1e-5);
      return m.read(t[3]);
    });
    compare("rms_norm" + suffix, cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(x), m.input(gamma),
                       m.output(PARCRT_F32, {2, 3, features})};
      b.rmsNorm(t, 1e-6);
      return m.read(t[2]);
    });
  }

  // Lookups, with and without a shard index.
  {
    HostTensor table = f32({10, 4});
    HostTensor ids = i64({2, 3}, {0, 9, 3, 3, 7, 1});
    compare("embedding", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(table), m.input(ids),
                       m.output(PARCRT_F32, {2, 3, 4})};
      b.embedding(t, false);
      return m.read(t[2]);
    });
    HostTensor ids32 = i32({2, 3}, {0, 9, 3, 3, 7, 1});
    compare("embedding i32 ids", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(table), m.input(ids32),
                       m.output(PARCRT_F32, {2, 3, 4})};
      b.embedding(t, false);
      return m.read(t[2]);
    });
    HostTensor globalIds = i64({2, 3}, {0, 19, 13, 10, 7, 25});
    HostTensor shard = i64({}, {1});
    compare("embedding sharded", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(table), m.input(globalIds), m.input(shard),
                       m.output(PARCRT_F32, {2, 3, 4})};
      b.embedding(t, true);
      return m.read(t[3]);
    });
    HostTensor x = f32({2, 3, 5});
    HostTensor indices = i64({2, 3}, {0, 4, 2, 1, 3, 0});
    compare("take", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(x), m.input(indices),
                       m.output(PARCRT_F32, {2, 3})};
      b.take(t, false);
      return m.read(t[2]);
    });
    HostTensor globalIndices = i64({2, 3}, {0, 9, 5, 7, 4, 12});
    compare("take sharded", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(x), m.input(globalIndices), m.input(shard),
                       m.output(PARCRT_F32, {2, 3})};
      b.take(t, true);
      return m.read(t[3]);
    });
  }

  for (const AttentionCase &c : attentionCases())
    for (bool causal : {false, true}) {
      HostTensor q = f32(c.queryShape()), k = f32(c.keyShape(c.headDim)),
                 v = f32(c.keyShape(c.valueDim)), mask = c.maskTensor();
      bool hasMask = !c.mask.empty();
      compare(std::string("attention ") + c.name + (causal ? " causal" : ""),
              cuda, cpu, [&](Backend &b, Buffers &m) {
                std::vector<TensorRef> t = {m.input(q), m.input(k),
                                            m.input(v)};
                if (hasMask)
                  t.push_back(m.input(mask));
                t.push_back(m.output(PARCRT_F32, c.resultShape()));
                b.attention(t.data(), causal, hasMask, c.scale());
                return m.read(t.back());
              });
    }

  {
    HostTensor logits = f32({2, 3, 7}, -3.0f, 3.0f);
    HostTensor labels = i64({2, 3}, {0, 6, 2, 5, 1, 3});
    compare("cross_entropy", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(logits), m.input(labels),
                       m.output(PARCRT_F32, {})};
      b.crossEntropy(t);
      return m.read(t[2]);
    });
    HostTensor wide = f32({5, 3000}, -3.0f, 3.0f);
    HostTensor wideLabels = i64({5}, {0, 2999, 17, 1500, 4});
    compare("cross_entropy wide", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(wide), m.input(wideLabels),
                       m.output(PARCRT_F32, {})};
      b.crossEntropy(t);
      return m.read(t[2]);
    });
  }
}

void checkLayout(Backend &cuda, Backend &cpu) {
  HostTensor x = f32({2, 3, 4});
  compare("reshape", cuda, cpu, [&](Backend &b, Buffers &m) {
    TensorRef t[] = {m.input(x), m.output(PARCRT_F32, {6, 4})};
    b.copy(t);
    return m.read(t[1]);
  });
  {
    const int64_t perm[] = {2, 0, 1};
    compare("transpose 3d", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(x), m.output(PARCRT_F32, {4, 2, 3})};
      b.transpose(t, perm);
      return m.read(t[1]);
    });
    HostTensor ids = i64({2, 3, 4}, {5, -3, 11, 0, 7, 1 << 20, 2});
    compare("transpose i64", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(ids), m.output(PARCRT_I64, {4, 2, 3})};
      b.transpose(t, perm);
      return m.read(t[1]);
    });
    HostTensor y = f32({2, 3, 4, 5});
    const int64_t perm4[] = {0, 2, 1, 3};
    compare("transpose 4d", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(y), m.output(PARCRT_F32, {2, 4, 3, 5})};
      b.transpose(t, perm4);
      return m.read(t[1]);
    });
  }

  // Reductions: some axes, keepdims, everything, long reductions.
  struct ReduceCase {
    const char *name;
    Shape input;
    std::vector<int64_t> axes;
    Shape result;
  };
  const ReduceCase reduceCases[] = {
      {"axis 1", {2, 3, 4}, {1}, {2, 4}},
      {"axes 0,2 keepdims", {2, 3, 4}, {0, 2}, {1, 3, 1}},
      {"all", {2, 3, 4}, {0, 1, 2}, {}},
      {"long axis 0", {1000, 37}, {0}, {37}},
      {"long last", {3, 5000}, {1}, {3, 1}},
  };
  const std::pair<Backend::Reduce, const char *> reductions[] = {
      {Backend::Reduce::Sum, "sum"},
      {Backend::Reduce::Mean, "mean"},
      {Backend::Reduce::Max, "max"},
      {Backend::Reduce::LogSumExp, "log_sum_exp"}};
  for (const ReduceCase &c : reduceCases) {
    HostTensor in = f32(c.input);
    for (auto [op, opName] : reductions)
      compare(std::string("reduce_") + opName + " " + c.name, cuda, cpu,
              [&](Backend &b, Buffers &m) {
                TensorRef t[] = {m.input(in), m.output(PARCRT_F32, c.result)};
                b.reduce(op, t, c.axes.data(), static_cast<int>(c.axes.size()));
                return m.read(t[1]);
              });
  }

  for (int64_t axis : {0, 1, 2}) {
    Shape a = {2, 3, 4}, bShape = a, cShape = a, result = a;
    bShape[axis] = 1;
    cShape[axis] = 2;
    result[axis] += 3;
    HostTensor p = f32(a), q = f32(bShape), r = f32(cShape);
    compare("concat axis " + std::to_string(axis), cuda, cpu,
            [&](Backend &b, Buffers &m) {
              TensorRef inputs[] = {m.input(p), m.input(q), m.input(r)};
              TensorRef out = m.output(PARCRT_F32, result);
              b.concat(inputs, 3, out, axis);
              return m.read(out);
            });
  }

  {
    HostTensor in = f32({5, 6, 7});
    const int64_t offsets[] = {1, 0, 2}, strides[] = {2, 2, 1};
    compare("slice strided", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(in), m.output(PARCRT_F32, {2, 3, 3})};
      b.slice(t, offsets, strides);
      return m.read(t[1]);
    });
  }

  {
    const double splat[] = {2.5};
    compare("constant splat", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef out = m.output(PARCRT_F32, {3, 4});
      b.constant(out, splat, 1);
      return m.read(out);
    });
    const double values[] = {1.0, -2.0, 3.5, 4.25, 0.0, 7.0};
    compare("constant values", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef out = m.output(PARCRT_F32, {2, 3});
      b.constant(out, values, 6);
      return m.read(out);
    });
    compare("constant i64", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef out = m.output(PARCRT_I64, {6});
      b.constant(out, values, 6);
      return m.read(out);
    });
  }
}

/// The gradient and optimizer ops. An op with several results runs once
/// per result, each run comparing one of them.
void checkGradients(Backend &cuda, Backend &cpu) {
  {
    struct BroadcastCase {
      const char *name;
      Shape input, result;
    };
    const BroadcastCase broadcastCases[] = {
        {"column", {3, 1}, {2, 3, 4}},
        {"row", {4}, {2, 3, 4}},
        {"middle", {2, 1, 4}, {2, 3, 4}},
        {"scalar", {}, {3, 2}},
        {"same", {2, 3}, {2, 3}},
    };
    for (const BroadcastCase &c : broadcastCases) {
      HostTensor in = f32(c.input);
      compare(std::string("broadcast_to ") + c.name, cuda, cpu,
              [&](Backend &b, Buffers &m) {
                TensorRef t[] = {m.input(in), m.output(PARCRT_F32, c.result)};
                b.broadcastTo(t);
                return m.read(t[1]);
              });
    }
    HostTensor ids = i64({3, 1}, {4, -7, 1 << 20});
    compare("broadcast_to i64", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(ids), m.output(PARCRT_I64, {2, 3, 4})};
      b.broadcastTo(t);
      return m.read(t[1]);
    });
  }

  {
    HostTensor in = f32({2, 3, 3});
    const int64_t offsets[] = {1, 0, 2}, strides[] = {2, 2, 1};
    compare("slice_grad strided", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(in), m.output(PARCRT_F32, {5, 6, 7})};
      b.sliceGrad(t, offsets, strides);
      return m.read(t[1]);
    });
    HostTensor whole = f32({5, 6});
    const int64_t zero[] = {0, 0}, one[] = {1, 1};
    compare("slice_grad whole", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(whole), m.output(PARCRT_F32, {5, 6})};
      b.sliceGrad(t, zero, one);
      return m.read(t[1]);
    });
  }

  const std::pair<Backend::Activation, const char *> activations[] = {
      {Backend::Activation::Relu, "relu"},
      {Backend::Activation::Sigmoid, "sigmoid"},
      {Backend::Activation::Silu, "silu"},
      {Backend::Activation::Tanh, "tanh"},
      {Backend::Activation::GeluErf, "gelu"},
      {Backend::Activation::GeluTanh, "gelu-tanh"},
  };
  for (auto [kind, name] : activations) {
    HostTensor x = f32({3, 7}, -3.0f, 3.0f), g = f32({3, 7});
    compare(std::string("activation_grad ") + name, cuda, cpu,
            [&](Backend &b, Buffers &m) {
              TensorRef t[] = {m.input(x), m.input(g),
                               m.output(PARCRT_F32, {3, 7})};
              b.activationGrad(kind, t);
              return m.read(t[2]);
            });
  }

  for (int64_t axis : {0, 1, 2}) {
    HostTensor y = f32({3, 4, 5}, 0.0f, 1.0f), g = f32({3, 4, 5});
    compare("softmax_grad axis " + std::to_string(axis), cuda, cpu,
            [&](Backend &b, Buffers &m) {
              TensorRef t[] = {m.input(y), m.input(g),
                               m.output(PARCRT_F32, {3, 4, 5})};
              b.softmaxGrad(t, axis);
              return m.read(t[2]);
            });
  }
  {
    HostTensor y = f32({2, 1000}, 0.0f, 0.01f), g = f32({2, 1000});
    compare("softmax_grad long rows", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(y), m.input(g),
                       m.output(PARCRT_F32, {2, 1000})};
      b.softmaxGrad(t, 1);
      return m.read(t[2]);
    });
  }

  for (int64_t features : {8, 600}) {
    Shape shape = {2, 3, features};
    HostTensor x = f32(shape, -2.0f, 3.0f), gamma = f32({features}),
               g = f32(shape);
    std::string suffix = " features " + std::to_string(features);
    const char *layerResults[] = {"dx", "dgamma", "dbeta"};
    for (int r = 0; r < 3; ++r)
      compare(std::string("layer_norm_grad ") + layerResults[r] + suffix, cuda,
              cpu, [&](Backend &b, Buffers &m) {
                TensorRef t[] = {m.input(x),
                                 m.input(gamma),
                                 m.input(g),
                                 m.output(PARCRT_F32, shape),
                                 m.output(PARCRT_F32, {features}),
                                 m.output(PARCRT_F32, {features})};
                b.layerNormGrad(t, 1e-5);
                return m.read(t[3 + r]);
              });
    const char *rmsResults[] = {"dx", "dgamma"};
    for (int r = 0; r < 2; ++r)
      compare(std::string("rms_norm_grad ") + rmsResults[r] + suffix, cuda,
              cpu, [&](Backend &b, Buffers &m) {
                TensorRef t[] = {m.input(x), m.input(gamma), m.input(g),
                                 m.output(PARCRT_F32, shape),
                                 m.output(PARCRT_F32, {features})};
                b.rmsNormGrad(t, 1e-6);
                return m.read(t[3 + r]);
              });
  }

  // Embedding gradients: repeated ids accumulate, untouched rows are zero.
  {
    HostTensor g = f32({2, 3, 4});
    HostTensor ids = i64({2, 3}, {0, 9, 3, 3, 7, 3});
    compare("embedding_grad", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(ids), m.input(g),
                       m.output(PARCRT_F32, {10, 4})};
      b.embeddingGrad(t, false);
      return m.read(t[2]);
    });
    HostTensor ids32 = i32({2, 3}, {0, 9, 3, 3, 7, 3});
    compare("embedding_grad i32 ids", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(ids32), m.input(g),
                       m.output(PARCRT_F32, {10, 4})};
      b.embeddingGrad(t, false);
      return m.read(t[2]);
    });
    HostTensor globalIds = i64({2, 3}, {0, 19, 13, 13, 7, 25});
    HostTensor shard = i64({}, {1});
    compare("embedding_grad sharded", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(globalIds), m.input(g), m.input(shard),
                       m.output(PARCRT_F32, {10, 4})};
      b.embeddingGrad(t, true);
      return m.read(t[3]);
    });
  }

  // Attention gradients: the forward's cases.
  for (const AttentionCase &c : attentionCases())
    for (bool causal : {false, true}) {
      Shape qShape = c.queryShape(), kShape = c.keyShape(c.headDim),
            vShape = c.keyShape(c.valueDim);
      HostTensor q = f32(qShape), k = f32(kShape), v = f32(vShape),
                 g = f32(c.resultShape()), mask = c.maskTensor();
      bool hasMask = !c.mask.empty();
      const char *results[] = {"dq", "dk", "dv"};
      for (int r = 0; r < 3; ++r)
        compare(std::string("attention_grad ") + results[r] + " " + c.name +
                    (causal ? " causal" : ""),
                cuda, cpu, [&](Backend &b, Buffers &m) {
                  std::vector<TensorRef> t = {m.input(q), m.input(k),
                                              m.input(v), m.input(g)};
                  if (hasMask)
                    t.push_back(m.input(mask));
                  size_t first = t.size();
                  t.push_back(m.output(PARCRT_F32, qShape));
                  t.push_back(m.output(PARCRT_F32, kShape));
                  t.push_back(m.output(PARCRT_F32, vShape));
                  b.attentionGrad(t.data(), causal, hasMask, c.scale());
                  return m.read(t[first + r]);
                });
    }

  {
    HostTensor logits = f32({2, 3, 7}, -3.0f, 3.0f);
    HostTensor labels = i64({2, 3}, {0, 6, 2, 5, 1, 3});
    HostTensor labels32 = i32({2, 3}, {0, 6, 2, 5, 1, 3});
    HostTensor g = f32Values({}, {1.75f});
    compare("cross_entropy_grad", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(logits), m.input(labels), m.input(g),
                       m.output(PARCRT_F32, {2, 3, 7})};
      b.crossEntropyGrad(t, 6, false);
      return m.read(t[3]);
    });
    compare("cross_entropy_grad i32 labels", cuda, cpu,
            [&](Backend &b, Buffers &m) {
              TensorRef t[] = {m.input(logits), m.input(labels32), m.input(g),
                               m.output(PARCRT_F32, {2, 3, 7})};
              b.crossEntropyGrad(t, 24, false);
              return m.read(t[3]);
            });
    HostTensor wide = f32({5, 3000}, -3.0f, 3.0f);
    HostTensor wideLabels = i64({5}, {0, 2999, 17, 1500, 4});
    compare("cross_entropy_grad wide", cuda, cpu, [&](Backend &b, Buffers &m) {
      TensorRef t[] = {m.input(wide), m.input(wideLabels), m.input(g),
                       m.output(PARCRT_F32, {5, 3000})};
      b.crossEntropyGrad(t, 5, false);
      return m.read(t[3]);
    });
    // Block 1 of 21 classes: labels 7..13 have their one-hot term here.
    HostTensor normalizer = f32({2, 3}, 2.0f, 4.0f);
    HostTensor shard = i64({}, {1});
    compare("cross_entropy_grad vocab block", cuda, cpu,
            [&](Backend &b, Buffers &m) {
              HostTensor blockLabels = i64({2, 3}, {7, 13, 2, 20, 9, 0});
              TensorRef t[] = {
                  m.input(logits), m.input(blockLabels),
                  m.input(g),      m.input(normalizer),
                  m.input(shard),  m.output(PARCRT_F32, {2, 3, 7})};
              b.crossEntropyGrad(t, 6, true);
              return m.read(t[5]);
            });
  }

  {
    Shape shape = {3, 5};
    HostTensor param = f32(shape), grad = f32(shape), mState = f32(shape),
               vState = f32(shape, 0.0f, 0.5f);
    HostTensor step = f32Values({}, {3.0f}), buffer = f32(shape);
    // With `skip` set (an overflowed f16 step: NaN), the state stays.
    HostTensor skip = f32Values({}, {NAN});
    const char *results[] = {"param", "m", "v"};
    const char *sgdResults[] = {"param", "buffer"};
    for (bool skippable : {false, true}) {
      std::string name = skippable ? " skipped " : " ";
      for (int r = 0; r < 3; ++r)
        compare("adamw_update" + name + results[r], cuda, cpu,
                [&](Backend &b, Buffers &m) {
                  std::vector<TensorRef> t = {m.input(param), m.input(grad),
                                              m.input(mState), m.input(vState),
                                              m.input(step)};
                  if (skippable)
                    t.push_back(m.input(skip));
                  size_t first = t.size();
                  for (int i = 0; i < 3; ++i)
                    t.push_back(m.output(PARCRT_F32, shape));
                  b.adamwUpdate(t.data(), skippable, 1e-3, 0.9, 0.999, 1e-8,
                                0.01);
                  return m.read(t[first + r]);
                });
      for (int r = 0; r < 2; ++r)
        compare("sgd_update" + name + sgdResults[r], cuda, cpu,
                [&](Backend &b, Buffers &m) {
                  std::vector<TensorRef> t = {m.input(param), m.input(grad),
                                              m.input(buffer)};
                  if (skippable)
                    t.push_back(m.input(skip));
                  size_t first = t.size();
                  for (int i = 0; i < 2; ++i)
                    t.push_back(m.output(PARCRT_F32, shape));
                  b.sgdUpdate(t.data(), skippable, 0.05, 0.9);
                  return m.read(t[first + r]);
                });
    }
  }

  for (float sum : {6.25f, 0.01f, 0.0f}) {
    HostTensor squares = f32Values({}, {sum});
    compare("clip_coefficient sum " + std::to_string(sum), cuda, cpu,
            [&](Backend &b, Buffers &m) {
              TensorRef t[] = {m.input(squares), m.output(PARCRT_F32, {})};
              b.clipCoefficient(t, 1.0);
              return m.read(t[1]);
            });
  }
}

void checkCollectives(const std::string &prefix, Backend &cuda, Backend &cpu) {
  HostTensor x = f32({2, 3, 4});
  const std::vector<int> first = {0}, both = {0, 1};
  compare(prefix + "all_reduce sum", cuda, cpu, [&](Backend &b, Buffers &m) {
    TensorRef t[] = {m.input(x), m.output(PARCRT_F32, {2, 3, 4})};
    b.communicator().allReduce(first, false, t);
    return m.read(t[1]);
  });
  compare(prefix + "all_reduce max", cuda, cpu, [&](Backend &b, Buffers &m) {
    TensorRef t[] = {m.input(x), m.output(PARCRT_F32, {2, 3, 4})};
    b.communicator().allReduce(both, true, t);
    return m.read(t[1]);
  });
  for (int64_t dim : {0, 1}) {
    std::string suffix = " dim " + std::to_string(dim);
    compare(prefix + "all_gather" + suffix, cuda, cpu,
            [&](Backend &b, Buffers &m) {
              TensorRef t[] = {m.input(x), m.output(PARCRT_F32, {2, 3, 4})};
              b.communicator().allGather(both, dim, t);
              return m.read(t[1]);
            });
    compare(prefix + "reduce_scatter" + suffix, cuda, cpu,
            [&](Backend &b, Buffers &m) {
              TensorRef t[] = {m.input(x), m.output(PARCRT_F32, {2, 3, 4})};
              b.communicator().reduceScatter(first, dim, t);
              return m.read(t[1]);
            });
    compare(prefix + "all_slice" + suffix, cuda, cpu,
            [&](Backend &b, Buffers &m) {
              TensorRef t[] = {m.input(x), m.output(PARCRT_F32, {2, 3, 4})};
              b.allSlice(first, dim, t);
              return m.read(t[1]);
            });
  }
  compare(prefix + "all_to_all", cuda, cpu, [&](Backend &b, Buffers &m) {
    TensorRef t[] = {m.input(x), m.output(PARCRT_F32, {2, 3, 4})};
    b.communicator().allToAll(both, 1, 2, t);
    return m.read(t[1]);
  });
  compare(prefix + "axis_index", cuda, cpu, [&](Backend &b, Buffers &m) {
    TensorRef out = m.output(PARCRT_I64, {});
    b.axisIndex(first, out);
    return m.read(out);
  });
}

/// conv2d and its gradients, and the poolings and theirs: strides,
/// asymmetric padding, dilation, groups, and windows whose taps overlap.
void checkConvolutions(Backend &cuda, Backend &cpu) {
  auto outSize = [](int64_t size, int64_t before, int64_t after, int64_t kernel,
                    int64_t stride, int64_t dilation) {
    return (size + before + after - (dilation * (kernel - 1) + 1)) / stride + 1;
  };
  struct ConvolutionCase {
    const char *name;
    Shape input, weight;
    /// stride h, w; padding top, left, bottom, right; dilation h, w; groups
    int64_t geometry[9];
  };
  const ConvolutionCase convolutions[] = {
      {"3x3 same", {2, 3, 6, 5}, {4, 3, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1}},
      {"strided asymmetric",
       {1, 2, 7, 6},
       {3, 2, 3, 2},
       {2, 1, 1, 0, 0, 1, 1, 1, 1}},
      {"dilated grouped",
       {2, 4, 8, 7},
       {6, 2, 2, 3},
       {1, 2, 0, 2, 1, 0, 2, 1, 2}},
      {"depthwise 1x1 stride",
       {1, 3, 5, 5},
       {3, 1, 1, 1},
       {2, 2, 0, 0, 0, 0, 1, 1, 3}},
  };
  for (const ConvolutionCase &c : convolutions) {
    const int64_t *g = c.geometry;
    Shape output = {c.input[0], c.weight[0],
                    outSize(c.input[2], g[2], g[4], c.weight[2], g[0], g[6]),
                    outSize(c.input[3], g[3], g[5], c.weight[3], g[1], g[7])};
    HostTensor in = f32(c.input), weight = f32(c.weight), out = f32(output);
    compare(std::string("conv2d ") + c.name, cuda, cpu,
            [&](Backend &b, Buffers &m) {
              TensorRef t[] = {m.input(in), m.input(weight),
                               m.output(PARCRT_F32, output)};
              b.conv2d(t, g);
              return m.read(t[2]);
            });
    compare(std::string("conv2d_input_grad ") + c.name, cuda, cpu,
            [&](Backend &b, Buffers &m) {
              TensorRef t[] = {m.input(weight), m.input(out),
                               m.output(PARCRT_F32, c.input)};
              b.conv2dInputGrad(t, g);
              return m.read(t[2]);
            });
    compare(std::string("conv2d_weight_grad ") + c.name, cuda, cpu,
            [&](Backend &b, Buffers &m) {
              TensorRef t[] = {m.input(in), m.input(out),
                               m.output(PARCRT_F32, c.weight)};
              b.conv2dWeightGrad(t, g);
              return m.read(t[2]);
            });
  }

  struct PoolingCase {
    const char *name;
    Shape input;
    /// kernel h, w; stride h, w; padding top, left, bottom, right;
    /// dilation h, w
    int64_t window[10];
  };
  const PoolingCase poolings[] = {
      {"3x3 stride 2 padded", {2, 3, 7, 8}, {3, 3, 2, 2, 1, 1, 1, 1, 1, 1}},
      {"2x2", {1, 2, 6, 4}, {2, 2, 2, 2, 0, 0, 0, 0, 1, 1}},
      {"overlapping dilated", {1, 2, 9, 8}, {3, 2, 1, 2, 1, 0, 0, 1, 2, 1}},
  };
  for (const PoolingCase &c : poolings) {
    const int64_t *w = c.window;
    Shape output = {c.input[0], c.input[1],
                    outSize(c.input[2], w[4], w[6], w[0], w[2], w[8]),
                    outSize(c.input[3], w[5], w[7], w[1], w[3], w[9])};
    HostTensor in = f32(c.input), gradient = f32(output);
    compare(std::string("max_pool2d ") + c.name, cuda, cpu,
            [&](Backend &b, Buffers &m) {
              TensorRef t[] = {m.input(in), m.output(PARCRT_F32, output)};
              b.maxPool2d(t, w);
              return m.read(t[1]);
            });
    compare(std::string("max_pool2d_grad ") + c.name, cuda, cpu,
            [&](Backend &b, Buffers &m) {
              TensorRef t[] = {m.input(in), m.input(gradient),
                               m.output(PARCRT_F32, c.input)};
              b.maxPool2dGrad(t, w);
              return m.read(t[2]);
            });
    for (bool countIncludePad : {false, true}) {
      std::string suffix = countIncludePad ? " counting padding" : "";
      compare(std::string("avg_pool2d ") + c.name + suffix, cuda, cpu,
              [&](Backend &b, Buffers &m) {
                TensorRef t[] = {m.input(in), m.output(PARCRT_F32, output)};
                b.avgPool2d(t, w, countIncludePad);
                return m.read(t[1]);
              });
      compare(
          std::string("avg_pool2d_grad ") + c.name + suffix, cuda, cpu,
          [&](Backend &b, Buffers &m) {
            TensorRef t[] = {m.input(gradient), m.output(PARCRT_F32, c.input)};
            b.avgPool2dGrad(t, w, countIncludePad);
            return m.read(t[1]);
          });
    }
  }
}

} // namespace

int main(int argc, char **argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    MPI_Init(&argc, &argv);
  int worldSize = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  int status = 0;
  {
    MeshInfo mesh;
    mesh.axisNames = {"x", "y"};
    mesh.axisSizes = {1, 1};
    mesh.rank = 0;
    std::string error;
    std::unique_ptr<Backend> cuda = createCudaBackend(mesh, 0, &error);
    if (worldSize != 1) {
      std::printf("SKIP: run this check as one process (world size %d)\n",
                  worldSize);
    } else if (!cuda) {
      std::printf("SKIP: %s\n", error.c_str());
    } else {
      std::unique_ptr<Backend> cpu = createCpuBackend(mesh);
      checkCompute(*cuda, *cpu);
      checkLayout(*cuda, *cpu);
      checkGradients(*cuda, *cpu);
      checkConvolutions(*cuda, *cpu);
      checkCollectives("", *cuda, *cpu);
      cuda.reset();
      // The same collectives through one-rank NCCL communicators.
      setenv("PARCRT_CUDA_ALWAYS_NCCL", "1", 1);
      std::unique_ptr<Backend> nccl = createCudaBackend(mesh, 0, &error);
      if (!nccl) {
        std::printf("FAIL nccl backend (%s)\n", error.c_str());
        ++failures;
      } else {
        checkCollectives("nccl ", *nccl, *cpu);
      }
      std::printf("%d passed, %d failed\n", passes, failures);
      status = failures ? 1 : 0;
    }
  }
  MPI_Finalize();
  return status;
}
