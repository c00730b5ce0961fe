//===- Averaging.h - local SGD's averaging of the replicas -------*- C++
//-*-===//
//
// A local SGD program (Program::localSgd) is one replica's step: each
// coordinate of the replica axis trains on its own shard of the batch. Every
// `syncEvery` steps the launcher replaces each replica's parameters and
// buffers (batch norm's running statistics), and its optimizer state when
// the plan asks, by their mean over the axis: one all_reduce per tensor,
// then a division by the replica count.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_MAIN_AVERAGING_H
#define PARCRT_MAIN_AVERAGING_H

#include "main/Program.h"
#include "parcrt/Backend.h"

#include <cstdint>

namespace parcrt {

/// Whether the replicas are averaged after step `step` (1-based).
bool averagesAfter(const Program &program, int64_t step);

/// Averages the replicas' state in `arena` over the replica axis, in place.
void averageReplicas(const Program &program, Backend &backend, uint8_t *arena);

} // namespace parcrt

#endif // PARCRT_MAIN_AVERAGING_H
