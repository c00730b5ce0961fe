//===- StrictJson.h - JSON that knows where each value was ------*- C++ -*-===//
//
// The files that tools share (plan.json, cluster.json) are read through a
// JSON tree that remembers the line:column of every key and value, so that
// a reader can say exactly where a file is wrong. Duplicate keys are an
// error, and readers reject keys they do not know.
//
// Worked example: reading `{"mesh": {"tp": 2.5}}` from plan.json
//
//   json::Value root = parse(text, "plan.json")   root.location = 1:1
//   members: "mesh" (key at 1:2) -> object at 1:10
//              "tp" (key at 1:11) -> number 2.5 at 1:17, literal "2.5"
//
//   Reader reader("plan.json");
//   ObjectReader::create(reader, root, "the plan", {"mesh", "shardings"})
//   reader.getInteger(<the value of "tp">, "\"tp\"")
//     -> error `plan.json:1:17: "tp" must be an integer, not 2.5`
//
// Errors are ReadErrors: file, location and message apart, so that a caller
// that prefixes its own context (a pass's diagnostic) can print them as it
// needs; their text is "FILE:LINE:COL: MESSAGE".
//
//===----------------------------------------------------------------------===//

#ifndef PARC_PLAN_STRICTJSON_H
#define PARC_PLAN_STRICTJSON_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::parc::json {

/// A place in a text: 1-based line and byte column; line 0 when unknown (a
/// value built in code).
struct Location {
  unsigned line = 0;
  unsigned column = 0;

  bool isKnown() const { return line != 0; }
  /// "LINE:COL".
  std::string str() const;
};

/// The location of byte `offset` of `text`.
Location getLocation(llvm::StringRef text, size_t offset);

/// An error in a file: "FILE:LINE:COL: MESSAGE", or "FILE: MESSAGE" when the
/// location is unknown.
class ReadError : public llvm::ErrorInfo<ReadError> {
public:
  static char ID;

  ReadError(std::string fileName, Location location, std::string message)
      : fileName(std::move(fileName)), location(location),
        message(std::move(message)) {}

  const std::string &getFileName() const { return fileName; }
  Location getLocation() const { return location; }
  const std::string &getMessage() const { return message; }
  /// "LINE:COL: MESSAGE", or "MESSAGE" when the location is unknown.
  std::string getLocatedMessage() const;

  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;

private:
  std::string fileName;
  Location location;
  std::string message;
};

struct Member;

/// One JSON value and where it starts.
struct Value {
  enum class Kind { Null, Boolean, Number, String, Array, Object };

  Kind kind = Kind::Null;
  Location location;
  bool boolean = false;
  /// A number's value (for integer literals beyond int64 the nearest double).
  double number = 0;
  /// Set for an integer literal (no fraction, no exponent) that fits int64.
  std::optional<int64_t> integer;
  /// The number is written without fraction or exponent.
  bool integerLiteral = false;
  /// A string's value; a number's literal as written ("2.0", "1e9").
  std::string text;
  std::vector<Value> elements;
  /// In the order of the text; keys are unique.
  std::vector<Member> members;

  Value();
  Value(const Value &);
  Value(Value &&) noexcept;
  Value &operator=(const Value &);
  Value &operator=(Value &&) noexcept;
  ~Value();

  static Value makeNull() { return Value(); }
  static Value makeBoolean(bool value);
  static Value makeInteger(int64_t value);
  /// A finite double.
  static Value makeNumber(double value);
  static Value makeString(llvm::StringRef value);
  static Value makeArray();
  static Value makeObject();

  bool isObject() const { return kind == Kind::Object; }
  bool isArray() const { return kind == Kind::Array; }
  /// The member named `key`, or null.
  const Member *find(llvm::StringRef key) const;
  /// Appends a member (objects) or an element (arrays); returns `*this`.
  Value &add(llvm::StringRef key, Value value);
  Value &push(Value value);

  /// What the value is, for messages: `the string "2"`, `2.5`, `true`,
  /// `null`, `an array`, `an object`.
  std::string describe() const;
};

struct Member {
  std::string key;
  Location keyLocation;
  Value value;
};

/// Parses `text`. Syntax errors are "FILE:LINE:COL: not valid JSON near
/// 'TOKEN'"; a key repeated in one object is an error at its second
/// occurrence; nesting deeper than 256 levels is an error.
llvm::Expected<Value> parse(llvm::StringRef text, llvm::StringRef fileName);

/// The value as JSON text: objects one member per line with two-space
/// indentation, arrays without objects in them on one line (`[["dp"], []]`),
/// numbers in their shortest exact form, and a final newline. Equal values
/// print equal texts.
std::string print(const Value &value);

/// Reads typed values out of a parsed file. `what` names the value in
/// messages; it is usually the quoted key: `"zero" must be an integer, not
/// 2.5`.
class Reader {
public:
  explicit Reader(llvm::StringRef fileName) : fileName(fileName.str()) {}

  llvm::StringRef getFileName() const { return fileName; }
  llvm::Error error(Location location, const llvm::Twine &message) const;

  /// An integer literal within [min, max] (an int64: 2.0, 1e3 and
  /// 9223372036854775808 are not).
  llvm::Expected<int64_t> getInteger(const Value &value,
                                     const llvm::Twine &what,
                                     int64_t min = INT64_MIN,
                                     int64_t max = INT64_MAX) const;

  enum class Bound { Any, NonNegative, Positive };
  /// Any number (integer literals included) within the bound.
  llvm::Expected<double> getNumber(const Value &value, const llvm::Twine &what,
                                   Bound bound = Bound::Any) const;
  llvm::Expected<bool> getBoolean(const Value &value,
                                  const llvm::Twine &what) const;
  llvm::Expected<std::string> getString(const Value &value,
                                        const llvm::Twine &what) const;
  /// A string among `choices`; returns its index.
  llvm::Expected<size_t>
  getChoice(const Value &value, const llvm::Twine &what,
            llvm::ArrayRef<llvm::StringRef> choices) const;
  /// The elements of an array.
  llvm::Expected<llvm::ArrayRef<Value>> getArray(const Value &value,
                                                 const llvm::Twine &what) const;

  /// Arrays of integers / strings; elements are named `WHAT[i]` in messages.
  llvm::Expected<std::vector<int64_t>>
  getIntegerArray(const Value &value, const llvm::Twine &what,
                  int64_t min = INT64_MIN, int64_t max = INT64_MAX) const;
  llvm::Expected<std::vector<std::string>>
  getStringArray(const Value &value, const llvm::Twine &what) const;

private:
  llvm::Error typeError(const Value &value, const llvm::Twine &what,
                        const llvm::Twine &expected) const;

  std::string fileName;
};

/// An object whose keys are all among the ones its reader knows.
class ObjectReader {
public:
  /// Fails unless `value` is an object whose keys are all in `allowedKeys`:
  /// an unknown key is an error at the key that names the allowed ones.
  /// `what` names the object in messages ("the plan", "\"pipeline\"").
  static llvm::Expected<ObjectReader>
  create(const Reader &reader, const Value &value, const llvm::Twine &what,
         llvm::ArrayRef<llvm::StringRef> allowedKeys);

  const Reader &getReader() const { return *reader; }
  Location getLocation() const { return value->location; }
  /// The member `key`, or null when absent.
  const Member *find(llvm::StringRef key) const;
  /// The member `key`, or an error at the object: `WHAT has no "key"`.
  llvm::Expected<const Member *> require(llvm::StringRef key) const;

  /// Optional members: `out` stays unset when `key` is absent. Errors name
  /// the member `"key"`.
  llvm::Error read(llvm::StringRef key, std::optional<int64_t> &out,
                   int64_t min = INT64_MIN, int64_t max = INT64_MAX) const;
  llvm::Error read(llvm::StringRef key, std::optional<double> &out,
                   Reader::Bound bound = Reader::Bound::Any) const;
  llvm::Error read(llvm::StringRef key, std::optional<bool> &out) const;
  llvm::Error read(llvm::StringRef key, std::optional<std::string> &out) const;
  llvm::Error read(llvm::StringRef key,
                   std::optional<std::vector<int64_t>> &out,
                   int64_t min = INT64_MIN, int64_t max = INT64_MAX) const;
  llvm::Error read(llvm::StringRef key,
                   std::optional<std::vector<std::string>> &out) const;
  /// A string among `choices`, stored as the enum whose values are the
  /// choices' indices.
  template <typename Enum>
  llvm::Error readChoice(llvm::StringRef key, std::optional<Enum> &out,
                         llvm::ArrayRef<llvm::StringRef> choices) const {
    const Member *member = find(key);
    if (!member)
      return llvm::Error::success();
    llvm::Expected<size_t> index =
        reader->getChoice(member->value, quote(key), choices);
    if (!index)
      return index.takeError();
    out = static_cast<Enum>(*index);
    return llvm::Error::success();
  }

  /// `"key"`, the name of a member in messages.
  static std::string quote(llvm::StringRef key);

private:
  ObjectReader(const Reader &reader, const Value &value, std::string what)
      : reader(&reader), value(&value), what(std::move(what)) {}

  const Reader *reader;
  const Value *value;
  std::string what;
};

} // namespace mlir::parc::json

#endif // PARC_PLAN_STRICTJSON_H
