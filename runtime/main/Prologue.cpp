//===- Prologue.cpp - the run before an asynchronous pipeline's steps -----===//

#include "main/Prologue.h"

#include "main/Feedback.h"

using namespace parcrt;

/// The argument of `program` named `name` that `tensor` can be copied to or
/// from; null (with `error`) when there is none.
static const ProgramArgument *findPartner(const Program &program,
                                          const BoundaryTensor &tensor,
                                          bool carry, std::string *error) {
  for (const ProgramArgument &argument : program.arguments)
    if (argument.name == tensor.name &&
        (!carry || argument.role == ArgumentRole::Carry)) {
      if (argument.dtype == tensor.dtype &&
          argument.localShape == tensor.localShape)
        return &argument;
      *error = "the prologue's '" + tensor.name + "' is " +
               typeString(tensor.localShape, tensor.dtype) +
               " but the step's is " +
               typeString(argument.localShape, argument.dtype);
      return nullptr;
    }
  *error = "the prologue's '" + tensor.name + "' is no " +
           (carry ? "carry " : "") + "argument of the step";
  return nullptr;
}

std::optional<Program> parcrt::loadPrologue(const char *json,
                                            const Program &program,
                                            std::string *error) {
  std::optional<Program> prologue = parseProgram(json, error);
  if (!prologue)
    return std::nullopt;
  for (const ProgramArgument &argument : prologue->arguments)
    if (!findPartner(program, argument, /*carry=*/false, error))
      return std::nullopt;
  for (const BoundaryTensor &result : prologue->results)
    if (!findPartner(program, result, /*carry=*/true, error))
      return std::nullopt;
  return prologue;
}

bool parcrt::runPrologue(const Program &prologue,
                         void (*step)(parcrt_context *), const Program &program,
                         parcrt_context context, std::string *error) {
  Backend &backend = *context.backend;
  auto *arena = static_cast<uint8_t *>(backend.allocate(prologue.arenaBytes));
  if (!arena) {
    *error = "cannot allocate the prologue's " +
             std::to_string(prologue.arenaBytes) + "-byte arena";
    return false;
  }
  std::string unused;
  for (const ProgramArgument &argument : prologue.arguments) {
    TensorRef refs[2] = {
        getLocalBlock(*findPartner(program, argument, false, &unused),
                   context.arena),
        getLocalBlock(argument, arena)};
    backend.copy(refs);
  }
  uint8_t *stepArena = context.arena;
  context.arena = arena;
  step(&context);
  // Its sends complete before the steps' begin.
  backend.communicator().synchronize(context.watchdog);
  for (const BoundaryTensor &result : prologue.results) {
    TensorRef refs[2] = {
        getLocalBlock(result, arena),
        getLocalBlock(*findPartner(program, result, true, &unused), stepArena)};
    backend.copy(refs);
  }
  backend.synchronize();
  backend.release(arena);
  return true;
}
