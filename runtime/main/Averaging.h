//===- Averaging.h - local SGD's averaging of the replicas -------*- C++
//-*-===//
//
// A local SGD program (Program::localSgd) is one replica's step: each
// coordinate of the replica axis trains on its own shard of the batch. Every
// `syncEvery` steps the launcher replaces each replica's next parameters and
// buffers (batch norm's running statistics), and its next optimizer state
// when the plan asks, by their mean over the axis: one all_reduce per
// tensor, then a division by the replica count. It averages the results
// that feed those arguments, before they are fed back, so the results the
// run writes are the averaged ones too.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_MAIN_AVERAGING_H
#define PARCRT_MAIN_AVERAGING_H

#include "main/Feedback.h"
#include "main/Program.h"
#include "parcrt/Backend.h"

#include <cstdint>

namespace parcrt {

/// Whether the replicas are averaged after step `step` (1-based).
bool averagesAfter(const Program &program, int64_t step);

/// Averages, in place over the replica axis, the results in `arena` that
/// `feedback` feeds into averaged arguments.
void averageReplicas(const Program &program,
                     const std::vector<Feedback> &feedback, Backend &backend,
                     uint8_t *arena);

} // namespace parcrt

#endif // PARCRT_MAIN_AVERAGING_H
