//===- LauncherFlagsFuzzer.cpp - a compiled program's flags ---------------===//
//
// Any command line (arguments split at NUL bytes) gives options or an error
// message, never a crash; accepted options are within their documented
// ranges.
//
//===----------------------------------------------------------------------===//

#include "main/Options.h"

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<std::string> words = {"program"};
  std::string word;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      words.push_back(word);
      word.clear();
    } else {
      word.push_back(static_cast<char>(data[i]));
    }
  }
  words.push_back(word);
  std::vector<char *> argv;
  for (std::string &w : words)
    argv.push_back(w.data());
  parcrt::Options options;
  std::string error;
  if (!parcrt::parseOptions(static_cast<int>(argv.size()), argv.data(), options,
                            &error)) {
    if (error.empty())
      std::abort();
    return 0;
  }
  bool inRange = options.steps >= 1 &&
                 options.steps <= static_cast<int64_t>(parcrt::maxSteps) &&
                 std::isfinite(options.timeout) &&
                 (options.timeout == 0 || options.timeout >= 0.001) &&
                 (options.backend == "cpu" || options.backend == "cuda") &&
                 options.checkpoint.empty() == (options.checkpointEvery == 0) &&
                 (!options.resume || !options.weights.empty());
  if (!inRange)
    std::abort();
  return 0;
}
