//===- InputFile.h - reading a user's file with bounds ----------*- C++ -*-===//
//
// Every file a user names (model, plan, cluster) is read through here: a
// device such as /dev/zero or a FIFO would otherwise be read forever or
// block, and a huge file would end in bad_alloc.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_SUPPORT_INPUTFILE_H
#define PARC_SUPPORT_INPUTFILE_H

#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>

namespace mlir::parc {

/// The contents of the regular file `path` of at most `maxBytes`; `what`
/// names it in errors ("the plan").
inline llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readInputFile(llvm::StringRef path, llvm::StringRef what, uint64_t maxBytes,
              bool isText = true) {
  llvm::sys::fs::file_status status;
  if (std::error_code code = llvm::sys::fs::status(path, status))
    return llvm::createStringError(code, "cannot read " + what.str() + " " +
                                             path.str() + ": " +
                                             code.message());
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return llvm::createStringError(
        "cannot read " + what.str() + " " + path.str() +
        ": not a regular file");
  if (status.getSize() > maxBytes)
    return llvm::createStringError(
        "cannot read " + what.str() + " " + path.str() + ": " +
        std::to_string(status.getSize()) + " bytes, more than the " +
        std::to_string(maxBytes) + " allowed");
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, isText);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   "cannot read " + what.str() + " " +
                                       path.str() + ": " +
                                       buffer.getError().message());
  return std::move(*buffer);
}

/// Limits: a plan or cluster file is a few kilobytes; a model, text or
/// ONNX with weights, can be large but not unbounded.
constexpr uint64_t kMaxConfigFileBytes = uint64_t(64) << 20;
constexpr uint64_t kMaxModelFileBytes = uint64_t(64) << 30;

} // namespace mlir::parc

#endif // PARC_SUPPORT_INPUTFILE_H
