//===- Feedback.cpp - results that become the next step's arguments -------===//

#include "main/Feedback.h"

#include <algorithm>
#include <map>

using namespace parcrt;

static std::string shapeString(const std::vector<int64_t> &shape,
                               parcrt_dtype dtype) {
  return "tensor<" + typeString(shape, dtype) + ">";
}

bool parcrt::findFeedback(const Program &program,
                          std::vector<Feedback> &feedback, std::string *error) {
  feedback.clear();
  std::map<std::string, size_t> arguments;
  for (size_t i = 0; i < program.arguments.size(); ++i)
    arguments.emplace(program.arguments[i].name, i);
  for (size_t i = 0; i < program.results.size(); ++i) {
    const BoundaryTensor &result = program.results[i];
    auto found = arguments.find(result.name);
    if (found == arguments.end())
      continue;
    const ProgramArgument &argument = program.arguments[found->second];
    std::string what = "result '" + result.name +
                       "' feeds the argument of that name into the next step";
    if (result.dtype != argument.dtype ||
        result.localShape != argument.localShape ||
        result.globalShape != argument.globalShape) {
      *error = what + ", but the result is " +
               shapeString(result.globalShape, result.dtype) + " (local " +
               shapeString(result.localShape, result.dtype) +
               ") and the argument " +
               shapeString(argument.globalShape, argument.dtype) + " (local " +
               shapeString(argument.localShape, argument.dtype) + ")";
      return false;
    }
    if (result.sharding != argument.sharding) {
      *error = what + ", but they are sharded differently";
      return false;
    }
    if (!result.partial.empty()) {
      *error = what + ", but the result holds partial sums";
      return false;
    }
    feedback.push_back({i, found->second});
  }
  return true;
}

bool parcrt::feedsBack(const std::vector<Feedback> &feedback, size_t index) {
  return std::any_of(
      feedback.begin(), feedback.end(),
      [&](const Feedback &pair) { return pair.result == index; });
}

TensorRef parcrt::getLocalBlock(const BoundaryTensor &tensor,
                                uint8_t *arena) {
  TensorRef ref;
  ref.data = arena + tensor.offset;
  ref.dtype = tensor.dtype;
  ref.rank = static_cast<int>(tensor.localShape.size());
  for (int dim = 0; dim < ref.rank; ++dim)
    ref.shape[dim] = tensor.localShape[dim];
  return ref;
}

void parcrt::applyFeedback(const Program &program,
                           const std::vector<Feedback> &feedback,
                           Backend &backend, uint8_t *arena) {
  std::vector<const Feedback *> pending;
  for (const Feedback &pair : feedback)
    if (program.results[pair.result].offset !=
        program.arguments[pair.argument].offset) // else updated in place
      pending.push_back(&pair);
  auto overlaps = [&](const BoundaryTensor &a, const BoundaryTensor &b) {
    int64_t aEnd = a.offset + a.localElements() * dtypeBytes(a.dtype);
    int64_t bEnd = b.offset + b.localElements() * dtypeBytes(b.dtype);
    return a.offset < bEnd && b.offset < aEnd;
  };
  // A copy may run once no other pending copy still reads its target.
  // Results are written by the step and arguments only here, so a cycle
  // (two arguments swapped) cannot arise.
  while (!pending.empty()) {
    auto ready = std::find_if(pending.begin(), pending.end(), [&](auto *pair) {
      const ProgramArgument &target = program.arguments[pair->argument];
      return std::none_of(pending.begin(), pending.end(), [&](auto *other) {
        return other != pair &&
               overlaps(program.results[other->result], target);
      });
    });
    if (ready == pending.end())
      ready = pending.begin();
    const BoundaryTensor &result = program.results[(*ready)->result];
    const ProgramArgument &argument = program.arguments[(*ready)->argument];
    TensorRef refs[2] = {getLocalBlock(result, arena),
                         getLocalBlock(argument, arena)};
    backend.copy(refs);
    pending.erase(ready);
  }
}
