//===- Widening.cpp - scratch memory for widened calls --------------------===//

#include "core/Widening.h"

#include "core/Fatal.h"

using namespace parcrt;

WideningScratch::~WideningScratch() {
  for (auto &[memory, bytes] : buffers)
    backend.release(memory);
}

void *WideningScratch::buffer(size_t slot, size_t bytes) {
  if (buffers.size() <= slot)
    buffers.resize(slot + 1, {nullptr, 0});
  auto &[memory, size] = buffers[slot];
  if (size < bytes) {
    if (memory)
      backend.release(memory);
    memory = backend.allocate(bytes);
    if (!memory)
      fatal("cannot allocate " + std::to_string(bytes) +
            " bytes for an f32 copy of an f16/bf16 tensor");
    size = bytes;
  }
  return memory;
}
