//===- Backend.h - what a libparcrt backend implements ----------*- C++ -*-===//
//
// The C entry points of parcrt.h decode their static descriptors into
// TensorRefs (data = arena + offset) and forward to the context's backend:
// `cpu` (oneDNN, MPI) or `cuda` (cuBLAS, own kernels, NCCL). A backend
// owns the arena's memory and its Communicator: the collectives of its mesh
// groups and point-to-point messages between ranks.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_BACKEND_H
#define PARCRT_BACKEND_H

#include "parc/Support/MeshArithmetic.h"
#include "parcrt/parcrt.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace parcrt {

size_t dtypeBytes(parcrt_dtype dtype);
/// "f32", "f16", "bf16", "i32", "i64" (as MLIR spells element types).
const char *dtypeName(parcrt_dtype dtype);

/// A tensor in the arena, as an op sees it.
struct TensorRef {
  void *data = nullptr;
  parcrt_dtype dtype = PARCRT_F32;
  int rank = 0;
  int64_t shape[PARCRT_MAX_RANK] = {};

  int64_t numElements() const;
  size_t bytes() const { return numElements() * dtypeBytes(dtype); }
};

/// The logical mesh and this rank's place in it, by the project's one mesh
/// arithmetic (parc/Support/MeshArithmetic.h): the coordinates are the mesh
/// rank's mixed-radix digits over the axis sizes, last axis minor. The mesh
/// rank is the world rank unless the stages run on meshes of their own
/// (`stages`); groups over axes without the stage axis then stay within
/// this rank's stage, which is all that collectives see.
struct MeshInfo {
  std::vector<std::string> axisNames;
  /// The mesh of this rank's stage.
  std::vector<int64_t> axisSizes;
  /// The world rank.
  int rank = 0;
  /// Where every stage's ranks lie when the stages' meshes differ, and this
  /// rank's stage; empty when axisSizes numbers the world's ranks.
  parc::StagedMeshes stages;
  int64_t stage = 0;

  /// This rank in axisSizes' numbering.
  int64_t meshRank() const;
  /// The ranks of this rank's stage's mesh.
  int64_t numRanks() const;
  int64_t coordinate(int axis) const;
  /// The world ranks of this rank's group over `axes`, in group order
  /// (linearized coordinates over `axes`, first axis major).
  std::vector<int> group(const std::vector<int> &axes) const;
  /// This rank's position in its group over `axes`.
  int64_t indexInGroup(const std::vector<int> &axes) const;
  /// The world rank that agrees with this one on every axis but `count`
  /// given ones, where its coordinates are given too (a point-to-point
  /// peer): `axesAndCoordinates` holds axis position, coordinate pairs.
  /// -1 when there are none, or an axis or a coordinate is outside the mesh.
  int peer(int64_t count, const int64_t *axesAndCoordinates) const;
};

class Watchdog;

/// One rank's communication: collectives over the group of mesh axes `axes`
/// (t = {operand, result}) and point-to-point messages with world ranks.
class Communicator {
public:
  virtual ~Communicator();

  /// Elementwise sum or max over the group.
  virtual void allReduce(const std::vector<int> &axes, bool max,
                         const TensorRef *t) = 0;
  /// The members' operands joined along `dim` in group order.
  virtual void allGather(const std::vector<int> &axes, int64_t dim,
                         const TensorRef *t) = 0;
  /// Chunk indexInGroup (along `dim`) of the group's sum.
  virtual void reduceScatter(const std::vector<int> &axes, int64_t dim,
                             const TensorRef *t) = 0;
  /// Member q receives chunk q (along `splitDim`) of every member, joined
  /// along `concatDim` in group order.
  virtual void allToAll(const std::vector<int> &axes, int64_t splitDim,
                        int64_t concatDim, const TensorRef *t) = 0;

  /// Sends `t` to world rank `peer` (this rank included) on `channel`;
  /// messages between one pair on one channel arrive in order. `t`'s memory
  /// may be reused once this returns. On cpu the send is buffered: it
  /// returns before the peer receives, and synchronize() completes it. On
  /// cuda it is stream-ordered and completes only once the peer posts the
  /// matching recv, so the ranks' schedules must order their point-to-point
  /// calls consistently (see NcclCommunicator.h).
  virtual void send(int peer, int64_t channel, const TensorRef &t) = 0;
  /// Receives the next message from `peer` on `channel` into `t` (in stream
  /// order on cuda). A message of another byte size is a fatal error.
  virtual void recv(int peer, int64_t channel, const TensorRef &t) = 0;
  /// Completes every pending send and queued communication. `watchdog` (may
  /// be null) brackets the wait for each send, naming its peer and channel.
  virtual void synchronize(Watchdog *watchdog) = 0;
};

/// One rank's compute and communication. Every op method receives the op's
/// operands then results in `t`, and its attributes as parcrt.h lists them.
class Backend {
public:
  virtual ~Backend();
  virtual const char *name() const = 0;

  // Memory: the arena and host<->arena copies (the same memory on cpu).
  virtual void *allocate(size_t bytes) = 0;
  virtual void release(void *memory) = 0;
  virtual void toArena(void *dst, const void *src, size_t bytes) = 0;
  virtual void fromArena(void *dst, const void *src, size_t bytes) = 0;
  /// Waits until all queued work of this rank has finished, pending sends
  /// included.
  virtual void synchronize() = 0;
  virtual Communicator &communicator() = 0;
  /// Whether matmul takes tensors of one 16-bit dtype as they are,
  /// accumulating in f32 and rounding its result once (Ops.def's GEMM
  /// kind); otherwise they reach it as f32 copies.
  virtual bool hasHalfFloatGemm() const { return false; }

  enum class Unary {
    Neg,
    Exp,
    Log,
    Tanh,
    Relu,
    Sigmoid,
    Silu,
    GeluErf,
    GeluTanh,
    Sqrt,
    Erf
  };
  enum class Reduce { Sum, Mean, Max, LogSumExp };
  /// Numbered as parcrt_comparison (and parc's ComparisonPredicate).
  enum class Comparison {
    Equal,
    NotEqual,
    Less,
    LessEqual,
    Greater,
    GreaterEqual
  };
  enum class Activation { Relu, Sigmoid, Silu, Tanh, GeluErf, GeluTanh };

  // The compute methods (parcrt/BackendOps.def). A backend that lacks a
  // gradient or optimizer method ends the run with a message naming it.
#define PARCRT_BACKEND_OP(method, parameters, arguments)                       \
  virtual void method parameters = 0;
#define PARCRT_BACKEND_OPTIONAL_OP(method, parameters, arguments, op)          \
  virtual void method parameters;
#include "parcrt/BackendOps.def"

  // Local ops over the group of mesh axes `axes` (no communication; the
  // collectives are communicator()'s).
  virtual void allSlice(const std::vector<int> &axes, int64_t dim,
                        const TensorRef *t) = 0;
  virtual void axisIndex(const std::vector<int> &axes,
                         const TensorRef &result) = 0;
};

/// The cpu backend (oneDNN, OpenMP, MPI) computing on `threads` threads
/// (cpu/Parallel.h; a setting of the process, so the backend made last
/// sets it). `mesh` must outlive it.
std::unique_ptr<Backend> createCpuBackend(const MeshInfo &mesh,
                                          int threads = 1);

/// The cuda backend, or null with `error` set when CUDA is not built in or
/// no device is usable (e.g. "no CUDA driver: cudaGetDeviceCount returned
/// error 35"). One GPU per rank: local rank -> device.
std::unique_ptr<Backend> createCudaBackend(const MeshInfo &mesh,
                                           int localRank, std::string *error);

} // namespace parcrt

#endif // PARCRT_BACKEND_H
