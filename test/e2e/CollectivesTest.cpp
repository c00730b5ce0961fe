//===- CollectivesTest.cpp - the cpu backend's MPI communication ----------===//
//
// Run with 4 ranks as a 2x2 mesh [dp, tp]. Every rank knows every rank's
// input (a function of the rank), computes the reference evaluator's
// lock-step result of each collective locally, and compares it exactly
// with what the collective returned. The values are small integers, so
// float sums are exact in any order; bf16 and f16 sums are checked bit for
// bit where they must round. Point-to-point messages go through
// parcrt_send and parcrt_recv.
//
// With --watchdog, ranks 1-3 enter an all_reduce that rank 0 never joins;
// with --watchdog-recv, rank 1 waits for a message rank 0 never sends. The
// watchdog must end the job with its message (checked by ctest's regex).
//
//===----------------------------------------------------------------------===//

#include "core/Context.h"
#include "parcrt/Backend.h"

#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <thread>
#include <utility>

using namespace parcrt;

namespace {

/// A host tensor of doubles, the reference's representation.
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<double> values;

  int64_t size() const {
    int64_t count = 1;
    for (int64_t s : shape)
      count *= s;
    return count;
  }
  int64_t linear(const std::vector<int64_t> &index) const {
    int64_t at = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      at = at * shape[d] + index[d];
    return at;
  }
};

template <typename Fn>
void forEachIndex(const std::vector<int64_t> &shape, Fn fn) {
  int64_t count = 1;
  for (int64_t s : shape)
    count *= s;
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t n = 0; n < count; ++n) {
    fn(index, n);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

Tensor chunk(const Tensor &t, int64_t dim, int64_t count, int64_t index) {
  Tensor part{t.shape, {}};
  part.shape[dim] /= count;
  part.values.resize(part.size());
  forEachIndex(part.shape, [&](std::vector<int64_t> at, int64_t n) {
    at[dim] += index * part.shape[dim];
    part.values[n] = t.values[t.linear(at)];
  });
  return part;
}

Tensor concat(const std::vector<Tensor> &parts, int64_t dim) {
  Tensor out{parts[0].shape, {}};
  out.shape[dim] *= parts.size();
  out.values.resize(out.size());
  int64_t start = 0;
  for (const Tensor &part : parts) {
    forEachIndex(part.shape, [&](std::vector<int64_t> at, int64_t n) {
      at[dim] += start;
      out.values[out.linear(at)] = part.values[n];
    });
    start += part.shape[dim];
  }
  return out;
}

/// Rank r's input: element n is 100 r + n (+ 0.5 so max and sum differ).
Tensor inputOf(int rank, const std::vector<int64_t> &shape) {
  Tensor t{shape, {}};
  for (int64_t n = 0; n < t.size(); ++n)
    t.values.push_back(100.0 * rank + n + 0.5);
  return t;
}

int failures = 0;

void check(const char *what, const std::vector<float> &actual,
           const Tensor &expected, int rank) {
  bool same = actual.size() == expected.values.size();
  for (size_t i = 0; same && i < actual.size(); ++i)
    same = actual[i] == expected.values[i];
  if (same)
    return;
  ++failures;
  std::fprintf(stderr, "rank %d: %s differs:", rank, what);
  for (size_t i = 0; i < actual.size() && i < expected.values.size(); ++i)
    std::fprintf(stderr, " %g/%g", actual[i], expected.values[i]);
  std::fprintf(stderr, "\n");
}

struct Buffer {
  explicit Buffer(const std::vector<int64_t> &shape,
                  const Tensor *init = nullptr)
      : shape(shape) {
    int64_t count = 1;
    for (int64_t s : shape)
      count *= s;
    data.assign(count, 0.0f);
    if (init)
      for (int64_t n = 0; n < count; ++n)
        data[n] = static_cast<float>(init->values[n]);
  }
  TensorRef ref() {
    TensorRef t;
    t.data = data.data();
    t.rank = static_cast<int>(shape.size());
    for (size_t d = 0; d < shape.size(); ++d)
      t.shape[d] = shape[d];
    return t;
  }
  std::vector<int64_t> shape;
  std::vector<float> data;
};

std::string name(const char *kind, const std::vector<int> &axes) {
  std::string text = std::string(kind) + " over [";
  for (size_t i = 0; i < axes.size(); ++i)
    text += (i ? "," : "") + std::to_string(axes[i]);
  return text + "]";
}

void testAxes(Backend &backend, const MeshInfo &mesh,
              const std::vector<int> &axes) {
  int rank = mesh.rank;
  std::vector<int64_t> shape = {2, 4};
  std::vector<int> group = mesh.group(axes);
  int64_t n = group.size(), index = mesh.indexInGroup(axes);
  std::vector<Tensor> inputs;
  for (int member : group)
    inputs.push_back(inputOf(member, shape));
  Tensor mine = inputOf(rank, shape);
  Buffer in(shape, &mine);

  Tensor sum = inputs[0], max = inputs[0];
  for (size_t m = 1; m < inputs.size(); ++m)
    for (size_t i = 0; i < sum.values.size(); ++i) {
      sum.values[i] += inputs[m].values[i];
      max.values[i] = std::max(max.values[i], inputs[m].values[i]);
    }
  for (bool isMax : {false, true}) {
    Buffer out(shape);
    TensorRef t[] = {in.ref(), out.ref()};
    backend.communicator().allReduce(axes, isMax, t);
    check(name(isMax ? "all_reduce max" : "all_reduce sum", axes).c_str(),
          out.data, isMax ? max : sum, rank);
  }

  for (int64_t dim : {0, 1}) {
    std::vector<int64_t> gathered = shape;
    gathered[dim] *= n;
    Buffer out(gathered);
    TensorRef t[] = {in.ref(), out.ref()};
    backend.communicator().allGather(axes, dim, t);
    check((name("all_gather", axes) + " dim " + std::to_string(dim)).c_str(),
          out.data, concat(inputs, dim), rank);
  }

  for (int64_t dim : {0, 1}) {
    if (shape[dim] % n)
      continue;
    std::vector<int64_t> scattered = shape;
    scattered[dim] /= n;
    Buffer out(scattered);
    TensorRef t[] = {in.ref(), out.ref()};
    backend.communicator().reduceScatter(axes, dim, t);
    check(
        (name("reduce_scatter", axes) + " dim " + std::to_string(dim)).c_str(),
        out.data, chunk(sum, dim, n, index), rank);

    Buffer sliced(scattered);
    TensorRef s[] = {in.ref(), sliced.ref()};
    backend.allSlice(axes, dim, s);
    check((name("all_slice", axes) + " dim " + std::to_string(dim)).c_str(),
          sliced.data, chunk(mine, dim, n, index), rank);
  }

  for (auto [split, cat] :
       {std::pair<int64_t, int64_t>{1, 0}, {0, 1}, {1, 1}}) {
    if (shape[split] % n)
      continue;
    std::vector<Tensor> parts;
    for (const Tensor &input : inputs)
      parts.push_back(chunk(input, split, n, index));
    Tensor expected = concat(parts, cat);
    Buffer out(expected.shape);
    TensorRef t[] = {in.ref(), out.ref()};
    backend.communicator().allToAll(axes, split, cat, t);
    check((name("all_to_all", axes) + " split " + std::to_string(split) +
           " concat " + std::to_string(cat))
              .c_str(),
          out.data, expected, rank);
  }

  int64_t axisIndex = -1;
  TensorRef result;
  result.data = &axisIndex;
  result.dtype = PARCRT_I64;
  backend.axisIndex(axes, result);
  if (axisIndex != index) {
    ++failures;
    std::fprintf(stderr, "rank %d: %s is %lld, not %lld\n", rank,
                 name("axis_index", axes).c_str(),
                 static_cast<long long>(axisIndex),
                 static_cast<long long>(index));
  }
}

/// bf16 and f16 all_reduce sums over the pairs of the tp axis: MPI has no
/// 16-bit floats, so a user operation adds in f32 and rounds to nearest
/// even. Each pair's sum rounds once, so the bits are known: two ties that
/// go to the even neighbour (one down, one up; truncation and rounding half
/// away from zero each miss one), one sum that rounds up, and a negative tie.
void testHalfFloatSums(Backend &backend, const MeshInfo &mesh) {
  struct Case {
    const char *name;
    parcrt_dtype dtype;
    std::vector<uint16_t> first, second, sum;
  };
  const Case cases[] = {
      {"bf16",
       PARCRT_BF16,
       // 1, 1 + 2^-7, 1, -(1 + 2^-7)
       {0x3F80, 0x3F81, 0x3F80, 0xBF81},
       // 2^-8, 2^-8, 1.5 * 2^-8, -2^-8
       {0x3B80, 0x3B80, 0x3BC0, 0xBB80},
       // 1, 1 + 2^-6, 1 + 2^-7, -(1 + 2^-6)
       {0x3F80, 0x3F82, 0x3F81, 0xBF82}},
      {"f16",
       PARCRT_F16,
       // 1, 1 + 2^-10, 1, -(1 + 2^-10)
       {0x3C00, 0x3C01, 0x3C00, 0xBC01},
       // 2^-11, 2^-11, 1.5 * 2^-11, -2^-11
       {0x1000, 0x1000, 0x1200, 0x9000},
       // 1, 1 + 2^-9, 1 + 2^-10, -(1 + 2^-9)
       {0x3C00, 0x3C02, 0x3C01, 0xBC02}},
  };
  std::vector<int> axes = {1};
  for (const Case &c : cases) {
    std::vector<uint16_t> in =
                              mesh.indexInGroup(axes) == 0 ? c.first : c.second,
                          out(in.size());
    TensorRef t[2];
    for (auto [ref, data] :
         {std::pair{&t[0], in.data()}, {&t[1], out.data()}}) {
      ref->data = data;
      ref->dtype = c.dtype;
      ref->rank = 1;
      ref->shape[0] = static_cast<int64_t>(in.size());
    }
    backend.communicator().allReduce(axes, /*max=*/false, t);
    if (out == c.sum)
      continue;
    ++failures;
    std::fprintf(stderr, "rank %d: %s all_reduce sum gave", mesh.rank, c.name);
    for (size_t i = 0; i < out.size(); ++i)
      std::fprintf(stderr, " 0x%04X/0x%04X", out[i], c.sum[i]);
    std::fprintf(stderr, "\n");
  }
}

/// all_reduce of i64 through the C entry point (descriptor and group
/// decoding, the watchdog's bracket).
void testEntryPoint(parcrt_context &ctx) {
  std::vector<int64_t> arena = {ctx.mesh.rank + 1, 0};
  ctx.arena = reinterpret_cast<uint8_t *>(arena.data());
  int64_t descriptors[2 * PARCRT_TENSOR_WORDS] = {};
  descriptors[0] = 0;
  descriptors[1] = PARCRT_I64;
  descriptors[2] = 1;
  descriptors[3] = 1;
  std::memcpy(descriptors + PARCRT_TENSOR_WORDS, descriptors,
              sizeof(int64_t) * PARCRT_TENSOR_WORDS);
  descriptors[PARCRT_TENSOR_WORDS] = 8;
  int64_t ints[] = {2, 0, 1, /*sum*/ 0};
  parcrt_all_reduce(&ctx, descriptors, ints, nullptr);
  if (arena[1] != 1 + 2 + 3 + 4) {
    ++failures;
    std::fprintf(stderr, "rank %d: i64 all_reduce through parcrt.h gave %lld\n",
                 ctx.mesh.rank, static_cast<long long>(arena[1]));
  }
}

/// Descriptors of an f32 vector of `count` elements at element `offset` of
/// the arena.
std::vector<int64_t> vectorDescriptor(int64_t offset, int64_t count) {
  std::vector<int64_t> words(PARCRT_TENSOR_WORDS, 0);
  words[0] = offset * static_cast<int64_t>(sizeof(float));
  words[1] = PARCRT_F32;
  words[2] = 1;
  words[3] = count;
  return words;
}

/// A point-to-point peer: (axis position, coordinate) pairs.
using Peer = std::vector<std::pair<int64_t, int64_t>>;

/// parcrt_send's and parcrt_recv's ints for `peer` and `channel`.
std::vector<int64_t> pointToPointInts(const Peer &peer, int64_t channel) {
  std::vector<int64_t> ints = {channel, static_cast<int64_t>(peer.size())};
  for (auto [axis, coordinate] : peer)
    ints.insert(ints.end(), {axis, coordinate});
  return ints;
}

/// The world rank of `peer`, as the runtime finds it from the ints.
int peerRank(const MeshInfo &mesh, const Peer &peer) {
  return mesh.peer(peer.size(), pointToPointInts(peer, 0).data() + 2);
}

/// Sends `values` to the rank at `peer`'s coordinates on `channel`.
void sendValues(parcrt_context &ctx, std::vector<float> &arena,
                const std::vector<float> &values, const Peer &peer,
                int64_t channel) {
  arena.assign(values.begin(), values.end());
  ctx.arena = reinterpret_cast<uint8_t *>(arena.data());
  std::vector<int64_t> tensor = vectorDescriptor(0, values.size());
  parcrt_send(&ctx, tensor.data(), pointToPointInts(peer, channel).data(),
              nullptr);
  // The buffered send copied the tensor: the arena may change at once.
  arena.assign(values.size(), -1.0f);
}

std::vector<float> recvValues(parcrt_context &ctx, std::vector<float> &arena,
                              int64_t count, const Peer &peer,
                              int64_t channel) {
  arena.assign(count, 0.0f);
  ctx.arena = reinterpret_cast<uint8_t *>(arena.data());
  std::vector<int64_t> tensor = vectorDescriptor(0, count);
  parcrt_recv(&ctx, tensor.data(), pointToPointInts(peer, channel).data(),
              nullptr);
  return arena;
}

/// `count` values identifying message `tag` of `rank`.
std::vector<float> message(int rank, int tag, int64_t count) {
  std::vector<float> values(count);
  for (int64_t n = 0; n < count; ++n)
    values[n] = static_cast<float>(1000 * rank + 100 * tag + n % 97);
  return values;
}

void expectMessage(const std::string &what, const std::vector<float> &actual,
                   const std::vector<float> &expected, int rank) {
  if (actual == expected)
    return;
  ++failures;
  std::fprintf(stderr, "rank %d: %s: wrong message (first value %g, not %g)\n",
               rank, what.c_str(), actual.empty() ? -1.0 : actual[0],
               expected[0]);
}

void testPointToPoint(parcrt_context &ctx) {
  const MeshInfo &mesh = ctx.mesh;
  int rank = mesh.rank;
  std::vector<float> arena;
  for (int axis : {0, 1}) {
    int64_t size = mesh.axisSizes[axis], at = mesh.coordinate(axis);
    Peer next = {{axis, (at + 1) % size}},
         previous = {{axis, (at + size - 1) % size}}, self = {{axis, at}};
    int from = peerRank(mesh, previous);
    std::string where = " along " + mesh.axisNames[axis];
    // A ring shift where every rank sends before it receives: buffered
    // sends (large enough for MPI's rendezvous protocol) must not deadlock.
    int64_t large = 1 << 18;
    sendValues(ctx, arena, message(rank, 0, large), next, 0);
    expectMessage("ring shift" + where,
                  recvValues(ctx, arena, large, previous, 0),
                  message(from, 0, large), rank);
    // Two messages on one channel arrive in order.
    sendValues(ctx, arena, message(rank, 1, 5), next, 7);
    sendValues(ctx, arena, message(rank, 2, 5), next, 7);
    for (int tag : {1, 2})
      expectMessage("message " + std::to_string(tag) + " on one channel" +
                        where,
                    recvValues(ctx, arena, 5, previous, 7),
                    message(from, tag, 5), rank);
    // Channels are separate streams: received in the opposite order.
    sendValues(ctx, arena, message(rank, 3, 3), next, 1);
    sendValues(ctx, arena, message(rank, 4, 3), next, 2);
    expectMessage("channel 2" + where, recvValues(ctx, arena, 3, previous, 2),
                  message(from, 4, 3), rank);
    expectMessage("channel 1" + where, recvValues(ctx, arena, 3, previous, 1),
                  message(from, 3, 3), rank);
    // To this rank itself.
    sendValues(ctx, arena, message(rank, 5, 4), self, 3);
    expectMessage("self-send" + where, recvValues(ctx, arena, 4, self, 3),
                  message(rank, 5, 4), rank);
  }
  // A peer that differs on both axes (a parameter server's worker and
  // server): each rank sends to the opposite corner of the 2 x 2 mesh.
  Peer opposite = {{0, 1 - mesh.coordinate(0)}, {1, 1 - mesh.coordinate(1)}};
  int corner = peerRank(mesh, opposite);
  sendValues(ctx, arena, message(rank, 6, 6), opposite, 4);
  expectMessage("opposite corner", recvValues(ctx, arena, 6, opposite, 4),
                message(corner, 6, 6), rank);
  ctx.backend->communicator().synchronize(ctx.watchdog);
}

} // namespace

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) {
    if (rank == 0)
      std::fprintf(stderr, "run with 4 ranks\n");
    MPI_Finalize();
    return 1;
  }
  MeshInfo mesh{{"dp", "tp"}, {2, 2}, rank};
  bool watchdog = argc > 1 && std::strcmp(argv[1], "--watchdog") == 0;
  bool watchdogRecv = argc > 1 && std::strcmp(argv[1], "--watchdog-recv") == 0;
  {
    std::unique_ptr<Backend> backend = createCpuBackend(mesh);
    Watchdog guard(mesh, watchdog || watchdogRecv ? 1.0 : 30.0);
    parcrt_context ctx;
    ctx.backend = backend.get();
    ctx.mesh = mesh;
    ctx.watchdog = &guard;
    if (watchdog) {
      // Rank 0 never joins the others' all_reduce.
      if (rank == 0)
        std::this_thread::sleep_for(std::chrono::seconds(20));
      else
        testEntryPoint(ctx);
      std::fprintf(stderr, "rank %d: the watchdog did not fire\n", rank);
      MPI_Finalize();
      return 1;
    }
    if (watchdogRecv) {
      // Rank 1 (dp 0, tp 1) waits for rank 0 (tp 0), which never sends.
      std::vector<float> arena;
      if (rank == 1)
        recvValues(ctx, arena, 4, /*peer=*/{{1, 0}}, 3);
      else
        std::this_thread::sleep_for(std::chrono::seconds(20));
      std::fprintf(stderr, "rank %d: the watchdog did not fire\n", rank);
      MPI_Finalize();
      return 1;
    }
    for (const std::vector<int> &axes :
         {std::vector<int>{0}, {1}, {0, 1}, {1, 0}, {}})
      testAxes(*backend, mesh, axes);
    testHalfFloatSums(*backend, mesh);
    testEntryPoint(ctx);
    testPointToPoint(ctx);
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("%s: %d failures\n", total ? "FAILED" : "PASSED", total);
  MPI_Finalize();
  return total ? 1 : 0;
}
