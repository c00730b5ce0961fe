//===- Feedback.h - results that become the next step's arguments -*- C++
//-*-===//
//
// A training step returns updated params and optimizer state under the
// names of the arguments they replace: a result named like an argument is
// that argument's value for the next step. After each step the launcher
// copies each such result's block of the arena over the argument's block.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_MAIN_FEEDBACK_H
#define PARCRT_MAIN_FEEDBACK_H

#include "main/Program.h"
#include "parcrt/Backend.h"

#include <cstdint>
#include <string>
#include <vector>

namespace parcrt {

/// A result that feeds an argument: indices into Program::results and
/// Program::arguments.
struct Feedback {
  size_t result = 0;
  size_t argument = 0;
};

/// The results of `program` named like one of its arguments, in result
/// order. Returns false with `error` set when such a pair differs in dtype,
/// global or local shape or sharding, or the result holds addends
/// (`partial`): its bytes could not serve as the argument's.
bool findFeedback(const Program &program, std::vector<Feedback> &feedback,
                  std::string *error);

/// `tensor`'s local block in `arena`.
TensorRef getLocalBlock(const BoundaryTensor &tensor, uint8_t *arena);

/// Whether result `index` feeds an argument.
bool feedsBack(const std::vector<Feedback> &feedback, size_t index);

/// Copies every fed-back result's local block in `arena` over its
/// argument's, with `backend.copy` (queued like an op on an asynchronous
/// backend), as one parallel assignment: a result that is itself an
/// argument whose block another result overwrites (PipeDream-2BW returns
/// this step's parameters as the next step's stale ones) is copied first.
void applyFeedback(const Program &program,
                   const std::vector<Feedback> &feedback, Backend &backend,
                   uint8_t *arena);

} // namespace parcrt

#endif // PARCRT_MAIN_FEEDBACK_H
