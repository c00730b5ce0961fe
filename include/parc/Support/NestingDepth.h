//===- NestingDepth.h - bounding the nesting of MLIR text -------*- C++ -*-===//
//
// MLIR's parser recurses once per nested attribute, type or region, so a
// file nested some thousands of levels deep overflows the stack of every
// tool. The text is scanned for its bracket nesting before it is parsed;
// real models nest a few levels.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_SUPPORT_NESTINGDEPTH_H
#define PARC_SUPPORT_NESTINGDEPTH_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBufferRef.h"

#include <string>

namespace mlir::parc {

constexpr unsigned kMaxMlirNesting = 256;

/// Fails with "NAME:LINE:COL: ..." at the first bracket ( [ { < that opens
/// more than `maxDepth` levels. Brackets in string literals and `//`
/// comments do not count; a closing bracket closes only its own kind, so
/// the `>` of `->` or of a comparison is not one.
inline llvm::Error checkMlirNestingDepth(llvm::MemoryBufferRef buffer,
                                         unsigned maxDepth = kMaxMlirNesting) {
  llvm::StringRef text = buffer.getBuffer();
  llvm::SmallVector<char> open;
  unsigned line = 1;
  size_t lineStart = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    switch (c) {
    case '\n':
      ++line;
      lineStart = i + 1;
      break;
    case '"':
      // To the closing quote, past escaped characters.
      for (++i; i < text.size() && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case '/':
      if (i + 1 < text.size() && text[i + 1] == '/')
        while (i + 1 < text.size() && text[i + 1] != '\n')
          ++i;
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      open.push_back(c);
      if (open.size() > maxDepth)
        return llvm::createStringError(
            buffer.getBufferIdentifier().str() + ":" + std::to_string(line) +
            ":" + std::to_string(i - lineStart + 1) +
            ": brackets nested deeper than " + std::to_string(maxDepth) +
            " levels (parc reads MLIR nested at most that deep)");
      break;
    case ')':
    case ']':
    case '}':
    case '>': {
      char opening = c == ')' ? '(' : c == ']' ? '[' : c == '}' ? '{' : '<';
      if (!open.empty() && open.back() == opening)
        open.pop_back();
      break;
    }
    default:
      break;
    }
  }
  return llvm::Error::success();
}

} // namespace mlir::parc

#endif // PARC_SUPPORT_NESTINGDEPTH_H
