//===- CollectivesTest.cpp - the cpu backend's MPI collectives ------------===//
//
// Run with 4 ranks as a 2x2 mesh [dp, tp]. Every rank knows every rank's
// input (a function of the rank), computes the reference evaluator's
// lock-step result of each collective locally, and compares it exactly
// with what the collective returned. The values are small integers, so
// float sums are exact in any order.
//
// With --watchdog, ranks 1-3 enter an all_reduce that rank 0 never joins; the
// watchdog must end the job with its message (checked by ctest's regex).
//
//===----------------------------------------------------------------------===//

#include "core/Context.h"
#include "parcrt/Backend.h"

#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <thread>

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
    backend.allReduce(axes, isMax, t);
    check(name(isMax ? "all_reduce max" : "all_reduce sum", axes).c_str(),
          out.data, isMax ? max : sum, rank);
  }

  for (int64_t dim : {0, 1}) {
    std::vector<int64_t> gathered = shape;
    gathered[dim] *= n;
    Buffer out(gathered);
    TensorRef t[] = {in.ref(), out.ref()};
    backend.allGather(axes, dim, t);
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
    backend.reduceScatter(axes, dim, t);
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
    backend.allToAll(axes, split, cat, t);
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
  {
    std::unique_ptr<Backend> backend = createCpuBackend(mesh);
    Watchdog guard(mesh, watchdog ? 1.0 : 30.0);
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
    for (const std::vector<int> &axes :
         {std::vector<int>{0}, {1}, {0, 1}, {1, 0}, {}})
      testAxes(*backend, mesh, axes);
    testEntryPoint(ctx);
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("%s: %d failures\n", total ? "FAILED" : "PASSED", total);
  MPI_Finalize();
  return total ? 1 : 0;
}
