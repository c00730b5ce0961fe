//===- Prologue.h - the run before an asynchronous pipeline's steps -*- C++
//-*-===//
//
// A stage of a PipeDream-2BW pipeline runs its prologue once before the
// first step: the first step's warm-up forwards, whose activations (and the
// stale weight versions, the initial weights) are the step's `carry`
// arguments. The prologue is a program of its own, with its own arena,
// which ends before the steps begin.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_MAIN_PROLOGUE_H
#define PARCRT_MAIN_PROLOGUE_H

#include "core/Context.h"
#include "main/Program.h"

#include <string>

namespace parcrt {

/// The prologue described by `json`, checked against the step's `program`:
/// each of its arguments must be an argument of `program` and each of its
/// results a carry argument, of the same name, dtype and local shape.
/// Nullopt with `error` otherwise.
std::optional<Program> loadPrologue(const char *json, const Program &program,
                                    std::string *error);

/// Runs `prologue` (`step` its entry point) in an arena of its own: copies
/// its arguments from `context.arena`, runs it, and copies its results to
/// the carry arguments in `context.arena`. False with `error` when its
/// arena cannot be allocated.
bool runPrologue(const Program &prologue, void (*step)(parcrt_context *),
                 const Program &program, parcrt_context context,
                 std::string *error);

} // namespace parcrt

#endif // PARCRT_MAIN_PROLOGUE_H
