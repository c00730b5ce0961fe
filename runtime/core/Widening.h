//===- Widening.h - f16/bf16 tensors through the f32 kernels ----*- C++ -*-===//
//
// The kernels compute in f32. A call with f16 or bf16 tensors (mixed
// precision's storage) runs over f32 copies of them: operands widened
// (exactly), results computed in f32 and rounded to their 16-bit dtype to
// nearest even by the backend's cast. Rounding once per op is what the
// reference evaluator does for every 16-bit result.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_CORE_WIDENING_H
#define PARCRT_CORE_WIDENING_H

#include "parcrt/Backend.h"

#include <memory>
#include <utility>
#include <vector>

namespace parcrt {

/// Backend memory for the f32 copies, kept from call to call (a step makes
/// the same calls every time, so after the first step nothing is allocated).
class WideningScratch {
public:
  explicit WideningScratch(Backend &backend) : backend(backend) {}
  WideningScratch(const WideningScratch &) = delete;
  WideningScratch &operator=(const WideningScratch &) = delete;
  ~WideningScratch();

  /// At least `bytes` of buffer `slot` (one per descriptor of a call).
  void *buffer(size_t slot, size_t bytes);

private:
  Backend &backend;
  std::vector<std::pair<void *, size_t>> buffers;
};

inline bool isHalfFloat(parcrt_dtype dtype) {
  return dtype == PARCRT_F16 || dtype == PARCRT_BF16;
}

/// Whether the `count` refs all have one 16-bit float dtype.
inline bool shareOneHalfFloat(const TensorRef *refs, int count) {
  for (int i = 0; i < count; ++i)
    if (!isHalfFloat(refs[i].dtype) || refs[i].dtype != refs[0].dtype)
      return false;
  return count > 0;
}

/// Runs `body(refs)`; where a ref is f16/bf16, `body` sees an f32 copy in
/// `scratch` (created on first use), and the last `results` refs are
/// rounded back after it.
template <typename Body>
void runWidened(Backend &backend, std::shared_ptr<WideningScratch> &scratch,
                TensorRef *refs, int count, int results, Body &&body) {
  std::vector<TensorRef> narrow;
  for (int i = 0; i < count; ++i) {
    if (!isHalfFloat(refs[i].dtype))
      continue;
    if (narrow.empty()) {
      if (!scratch)
        scratch = std::make_shared<WideningScratch>(backend);
      narrow.resize(count);
    }
    TensorRef wide = refs[i];
    wide.dtype = PARCRT_F32;
    wide.data = scratch->buffer(i, wide.bytes());
    narrow[i] = refs[i];
    if (i < count - results) {
      TensorRef widen[] = {refs[i], wide};
      backend.cast(widen);
    }
    refs[i] = wide;
  }
  body(refs);
  if (narrow.empty())
    return;
  for (int i = count - results; i < count; ++i)
    if (narrow[i].data) {
      TensorRef round[] = {refs[i], narrow[i]};
      backend.cast(round);
    }
}

/// Runs the GEMM call `body(refs)`: as it is where `backend`'s GEMM takes
/// its 16-bit tensors (accumulating in f32 and rounding the result once, as
/// the widened call does), else widened.
template <typename Body>
void runGemm(Backend &backend, std::shared_ptr<WideningScratch> &scratch,
             TensorRef *refs, int count, int results, Body &&body) {
  if (backend.hasHalfFloatGemm() && shareOneHalfFloat(refs, count))
    body(refs);
  else
    runWidened(backend, scratch, refs, count, results, body);
}

} // namespace parcrt

#endif // PARCRT_CORE_WIDENING_H
