//===- OutputDirectory.h - parc-compile's outputs, all or none --*- C++ -*-===//
//
// Outputs are written into a staging directory inside the output directory
// and moved in only once all of them exist: a failed compile leaves the
// directory as it was, and a successful one replaces every output of an
// earlier compile (no stale `program` beside a new `summary.txt`).
//
//===----------------------------------------------------------------------===//

#ifndef PARC_TOOLS_PARC_COMPILE_OUTPUTDIRECTORY_H
#define PARC_TOOLS_PARC_COMPILE_OUTPUTDIRECTORY_H

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <string>

class OutputDirectory {
public:
  /// Creates `directory` if needed and a fresh staging directory in it.
  static std::error_code create(llvm::StringRef directory,
                                OutputDirectory &out) {
    if (std::error_code code = llvm::sys::fs::create_directories(directory))
      return code;
    out.directory = directory.str();
    out.staging = out.join(out.directory,
                           ".parc-compile-" +
                               std::to_string(llvm::sys::Process::getProcessId()));
    llvm::sys::fs::remove_directories(out.staging);
    return llvm::sys::fs::create_directory(out.staging);
  }

  OutputDirectory() = default;
  OutputDirectory(const OutputDirectory &) = delete;
  OutputDirectory &operator=(const OutputDirectory &) = delete;
  ~OutputDirectory() {
    if (!staging.empty())
      llvm::sys::fs::remove_directories(staging);
  }

  /// Where to write `name` now.
  std::string stagingPath(llvm::StringRef name) const {
    return join(staging, name);
  }
  /// Where `name` will be once published.
  std::string finalPath(llvm::StringRef name) const {
    return join(directory, name);
  }

  /// Removes the outputs of an earlier compile, then moves every staged
  /// file in.
  std::error_code publish() {
    std::error_code code;
    for (llvm::sys::fs::directory_iterator it(directory, code), end;
         !code && it != end; it.increment(code))
      if (isCompileOutput(llvm::sys::path::filename(it->path())))
        llvm::sys::fs::remove(it->path());
    if (code)
      return code;
    for (llvm::sys::fs::directory_iterator it(staging, code), end;
         !code && it != end; it.increment(code))
      if (std::error_code moved = llvm::sys::fs::rename(
              it->path(), finalPath(llvm::sys::path::filename(it->path()))))
        return moved;
    return code;
  }

private:
  /// The names parc-compile writes: program, program.stageN, their .o,
  /// .ll and .mlir, and the manifest, launch script, summary and weights.
  static bool isCompileOutput(llvm::StringRef name) {
    if (name == "manifest.json" || name == "launch.sh" ||
        name == "summary.txt" || name == "weights.safetensors")
      return true;
    for (llvm::StringRef extension : {".o", ".ll", ".mlir"})
      if (name.consume_back(extension))
        break;
    if (!name.consume_front("program"))
      return false;
    return name.empty() || (name.consume_front(".stage") && !name.empty() &&
                            llvm::all_of(name, llvm::isDigit));
  }

  static std::string join(llvm::StringRef a, llvm::StringRef b) {
    llvm::SmallString<128> path(a);
    llvm::sys::path::append(path, b);
    return std::string(path);
  }

  std::string directory, staging;
};

#endif // PARC_TOOLS_PARC_COMPILE_OUTPUTDIRECTORY_H
