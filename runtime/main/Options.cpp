//===- Options.cpp - the flags of a compiled program ----------------------===//

#include "main/Options.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <thread>

using namespace parcrt;

const char *const parcrt::usage =
    "usage: %s [--steps N] [--weights FILE] [--inputs FILE] [--seed N]\n"
    "          [--out FILE] [--backend cpu|cuda] [--timeout SECONDS]\n"
    "          [--trace FILE] [--allow-nonfinite] [--threads N]\n"
    "          [--checkpoint FILE --checkpoint-every N] [--resume]\n"
    "Launch with mpirun on as many ranks as the program's mesh has.\n";

bool parcrt::parseUnsigned(const std::string &text, uint64_t &value) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  errno = 0;
  value = std::strtoull(text.c_str(), nullptr, 10);
  return errno == 0;
}

int parcrt::defaultThreads(int ranksOnNode) {
  uint64_t number = 0;
  const char *value = std::getenv("OMP_NUM_THREADS");
  if (value && parseUnsigned(value, number) && number >= 1 &&
      number <= maxThreads)
    return static_cast<int>(number);
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, cores / std::max(1, ranksOnNode));
}

bool parcrt::parseOptions(int argc, char **argv, Options &options,
                          std::string *error) {
  for (int i = 1; i < argc; ++i) {
    std::string argument = argv[i], flag = argument, value;
    if (flag == "--help" || flag == "-h") {
      options.help = true;
      continue;
    }
    if (flag == "--allow-nonfinite") {
      options.allowNonfinite = true;
      continue;
    }
    if (flag == "--resume") {
      options.resume = true;
      continue;
    }
    size_t equals = flag.find('=');
    if (equals != std::string::npos) {
      value = flag.substr(equals + 1);
      flag = flag.substr(0, equals);
    } else if (flag.rfind("--", 0) == 0 && i + 1 < argc) {
      value = argv[++i];
    } else if (flag.rfind("--", 0) == 0) {
      *error = "flag " + flag + " needs a value";
      return false;
    }
    uint64_t number = 0;
    if (flag == "--steps") {
      // 0 steps would write the unchanged (or initial) arguments to --out.
      if (!parseUnsigned(value, number) || number < 1 || number > maxSteps) {
        *error = "--steps expects an integer from 1 to " +
                 std::to_string(maxSteps) + ", not '" + value + "'";
        return false;
      }
      options.steps = static_cast<int64_t>(number);
    } else if (flag == "--seed") {
      if (!parseUnsigned(value, number)) {
        *error = "--seed expects a non-negative integer, not '" + value + "'";
        return false;
      }
      options.seed = number;
    } else if (flag == "--timeout") {
      char *end = nullptr;
      options.timeout = std::strtod(value.c_str(), &end);
      // Below a millisecond every collective would time out.
      if (value.empty() || *end || !std::isfinite(options.timeout) ||
          (options.timeout != 0 && !(options.timeout >= 0.001))) {
        *error = "--timeout expects 0 (off) or at least 0.001 seconds, not '" +
                 value + "'";
        return false;
      }
    } else if (flag == "--threads") {
      if (!parseUnsigned(value, number) || number < 1 || number > maxThreads) {
        *error = "--threads expects an integer from 1 to " +
                 std::to_string(maxThreads) + ", not '" + value + "'";
        return false;
      }
      options.threads = static_cast<int>(number);
    } else if (flag == "--weights") {
      options.weights = value;
    } else if (flag == "--inputs") {
      options.inputs = value;
    } else if (flag == "--out") {
      options.out = value;
    } else if (flag == "--trace") {
      options.trace = value;
    } else if (flag == "--checkpoint") {
      options.checkpoint = value;
    } else if (flag == "--checkpoint-every") {
      if (!parseUnsigned(value, number) || number < 1 || number > maxSteps) {
        *error = "--checkpoint-every expects an integer from 1 to " +
                 std::to_string(maxSteps) + ", not '" + value + "'";
        return false;
      }
      options.checkpointEvery = static_cast<int64_t>(number);
    } else if (flag == "--backend") {
      if (value != "cpu" && value != "cuda") {
        *error = "--backend expects cpu or cuda, not '" + value + "'";
        return false;
      }
      options.backend = value;
    } else {
      *error = "unknown argument '" + argument + "'";
      return false;
    }
  }
  if (options.checkpoint.empty() != (options.checkpointEvery == 0)) {
    *error = "--checkpoint FILE and --checkpoint-every N go together";
    return false;
  }
  if (options.resume && options.weights.empty()) {
    *error = "--resume continues from the checkpoint given as --weights";
    return false;
  }
  return true;
}
