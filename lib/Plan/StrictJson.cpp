//===- StrictJson.cpp - JSON that knows where each value was --------------===//
//
// nlohmann's SAX parser checks the syntax; the handler below builds the tree.
// The parser reports no position for the values it passes on, but it calls
// the handler once per token (values, keys, brackets) in text order, and
// between two such tokens there is only whitespace, ',' and ':'. So the
// handler keeps a cursor after the previous token, skips those to find where
// the current token starts, and moves past it by its own (already checked)
// spelling.
//
//===----------------------------------------------------------------------===//

#include "parc/Plan/StrictJson.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>

using namespace mlir::parc;
using namespace mlir::parc::json;
using llvm::ArrayRef;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
using llvm::Twine;

//===----------------------------------------------------------------------===//
// Locations and errors
//===----------------------------------------------------------------------===//

std::string Location::str() const {
  return std::to_string(line) + ":" + std::to_string(column);
}

Location json::getLocation(StringRef text, size_t offset) {
  StringRef before = text.take_front(offset);
  size_t lastNewline = before.rfind('\n');
  size_t lineStart = lastNewline == StringRef::npos ? 0 : lastNewline + 1;
  return {static_cast<unsigned>(before.count('\n') + 1),
          static_cast<unsigned>(before.size() - lineStart + 1)};
}

char ReadError::ID = 0;

std::string ReadError::getLocatedMessage() const {
  if (!location.isKnown())
    return message;
  return location.str() + ": " + message;
}

void ReadError::log(llvm::raw_ostream &os) const {
  os << fileName;
  if (location.isKnown())
    os << ":" << location.str();
  os << ": " << message;
}

std::error_code ReadError::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

Value::Value() = default;
Value::Value(const Value &) = default;
Value::Value(Value &&) noexcept = default;
Value &Value::operator=(const Value &) = default;
Value &Value::operator=(Value &&) noexcept = default;
Value::~Value() = default;

Value Value::makeBoolean(bool value) {
  Value result;
  result.kind = Kind::Boolean;
  result.boolean = value;
  return result;
}

Value Value::makeInteger(int64_t value) {
  Value result;
  result.kind = Kind::Number;
  result.number = static_cast<double>(value);
  result.integer = value;
  result.integerLiteral = true;
  return result;
}

Value Value::makeNumber(double value) {
  assert(std::isfinite(value) && "JSON has no infinities or NaNs");
  Value result;
  result.kind = Kind::Number;
  result.number = value;
  return result;
}

Value Value::makeString(StringRef value) {
  Value result;
  result.kind = Kind::String;
  result.text = value.str();
  return result;
}

Value Value::makeArray() {
  Value result;
  result.kind = Kind::Array;
  return result;
}

Value Value::makeObject() {
  Value result;
  result.kind = Kind::Object;
  return result;
}

const Member *Value::find(StringRef key) const {
  for (const Member &member : members)
    if (member.key == key)
      return &member;
  return nullptr;
}

Value &Value::add(StringRef key, Value value) {
  assert(isObject() && !find(key) && "a new key of an object");
  members.push_back({key.str(), Location(), std::move(value)});
  return *this;
}

Value &Value::push(Value value) {
  assert(isArray() && "an element of an array");
  elements.push_back(std::move(value));
  return *this;
}

/// The shortest text that reads back as `value` ("1e+09", "0.35", "151").
static std::string formatDouble(double value) {
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

static std::string formatNumber(const Value &value) {
  if (value.integer)
    return std::to_string(*value.integer);
  return formatDouble(value.number);
}

std::string Value::describe() const {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Boolean:
    return boolean ? "true" : "false";
  case Kind::Number:
    return text.empty() ? formatNumber(*this) : text;
  case Kind::String: {
    constexpr size_t kShown = 40;
    std::string shown =
        text.size() > kShown ? text.substr(0, kShown) + "..." : text;
    return "the string \"" + shown + "\"";
  }
  case Kind::Array:
    return "an array";
  case Kind::Object:
    return "an object";
  }
  llvm_unreachable("unknown JSON kind");
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

namespace {

using NlohmannJson = nlohmann::json;

constexpr size_t kMaxDepth = 256;

/// Builds the tree from the parser's events; see the file comment.
class TreeBuilder : public nlohmann::json_sax<NlohmannJson> {
public:
  explicit TreeBuilder(StringRef text) : text(text) {
    // The parser skips a UTF-8 byte order mark.
    if (text.starts_with("\xEF\xBB\xBF"))
      cursor = 3;
  }

  Value root;
  /// The first error the handler itself found (a duplicate key, depth).
  std::optional<std::pair<Location, std::string>> failure;
  /// A syntax error the parser reported.
  std::optional<std::pair<size_t, std::string>> syntaxError;

  bool null() override { return addScalar(Value::makeNull(), 4); }
  bool boolean(bool value) override {
    return addScalar(Value::makeBoolean(value), value ? 4 : 5);
  }
  bool number_integer(number_integer_t value) override {
    Value number = Value::makeInteger(value);
    return addNumber(std::move(number));
  }
  bool number_unsigned(number_unsigned_t value) override {
    Value number;
    number.kind = Value::Kind::Number;
    number.number = static_cast<double>(value);
    number.integerLiteral = true;
    if (value <= static_cast<number_unsigned_t>(INT64_MAX))
      number.integer = static_cast<int64_t>(value);
    return addNumber(std::move(number));
  }
  bool number_float(number_float_t value, const string_t &) override {
    Value number;
    number.kind = Value::Kind::Number;
    number.number = value;
    // Integer literals beyond uint64 arrive here too.
    return addNumber(std::move(number));
  }
  bool string(string_t &value) override {
    size_t start = startToken();
    Value result = Value::makeString(value);
    result.location = locate(start);
    cursor = endOfString(start);
    return add(std::move(result));
  }
  bool binary(binary_t &) override {
    llvm_unreachable("JSON text has no binary values");
  }
  bool start_object(std::size_t) override { return open(Value::makeObject()); }
  bool key(string_t &value) override {
    size_t start = startToken();
    Location location = locate(start);
    cursor = endOfString(start);
    Frame &frame = stack.back();
    auto [it, inserted] = frame.keys.try_emplace(value, location);
    if (!inserted)
      return fail(location, "duplicate key \"" + value + "\" (first at " +
                                it->second.str() + ")");
    pendingKey = value;
    pendingKeyLocation = location;
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(Value::makeArray()); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t position, const std::string &lastToken,
                   const nlohmann::detail::exception &) override {
    syntaxError = {position, lastToken};
    return false;
  }

private:
  struct Frame {
    Value *value;
    llvm::StringMap<Location> keys;
  };

  /// Skips to the token the parser has just read; returns its offset.
  size_t startToken() {
    while (cursor < text.size()) {
      char c = text[cursor];
      if (c == '\n') {
        ++line;
        lineStart = cursor + 1;
      } else if (c != ' ' && c != '\t' && c != '\r' && c != ',' && c != ':') {
        break;
      }
      ++cursor;
    }
    return cursor;
  }

  Location locate(size_t offset) const {
    return {line, static_cast<unsigned>(offset - lineStart + 1)};
  }

  /// The offset after the string that opens at `start`.
  size_t endOfString(size_t start) const {
    size_t at = start + 1;
    while (at < text.size() && text[at] != '"')
      at += text[at] == '\\' ? 2 : 1;
    return at + 1;
  }

  bool addScalar(Value value, size_t length) {
    size_t start = startToken();
    value.location = locate(start);
    cursor = start + length;
    return add(std::move(value));
  }

  bool addNumber(Value value) {
    size_t start = startToken();
    size_t end = start;
    while (end < text.size() &&
           StringRef("0123456789+-.eE").contains(text[end]))
      ++end;
    value.text = text.slice(start, end).str();
    value.integerLiteral = value.text.find_first_of(".eE") == std::string::npos;
    value.location = locate(start);
    cursor = end;
    return add(std::move(value));
  }

  /// Adds `value` to the open container; returns where it now lives.
  Value *place(Value value) {
    if (stack.empty()) {
      root = std::move(value);
      return &root;
    }
    Value &parent = *stack.back().value;
    if (parent.isArray()) {
      parent.elements.push_back(std::move(value));
      return &parent.elements.back();
    }
    parent.members.push_back(
        {std::move(pendingKey), pendingKeyLocation, std::move(value)});
    return &parent.members.back().value;
  }

  bool add(Value value) {
    place(std::move(value));
    return true;
  }

  bool open(Value container) {
    size_t start = startToken();
    container.location = locate(start);
    cursor = start + 1;
    if (stack.size() == kMaxDepth)
      return fail(container.location, "JSON nested deeper than " +
                                          std::to_string(kMaxDepth) +
                                          " levels");
    Value *placed = place(std::move(container));
    stack.push_back({placed, {}});
    return true;
  }

  bool close() {
    cursor = startToken() + 1;
    stack.pop_back();
    return true;
  }

  bool fail(Location location, std::string message) {
    failure = {location, std::move(message)};
    return false;
  }

  StringRef text;
  size_t cursor = 0;
  unsigned line = 1;
  size_t lineStart = 0;
  std::vector<Frame> stack;
  std::string pendingKey;
  Location pendingKeyLocation;
};

} // namespace

Expected<Value> json::parse(StringRef text, StringRef fileName) {
  TreeBuilder builder(text);
  bool parsed = NlohmannJson::sax_parse(text.begin(), text.end(), &builder);
  if (builder.failure)
    return llvm::make_error<ReadError>(fileName.str(), builder.failure->first,
                                       builder.failure->second);
  if (builder.syntaxError)
    return llvm::make_error<ReadError>(
        fileName.str(), getLocation(text, builder.syntaxError->first),
        "not valid JSON near '" + builder.syntaxError->second + "'");
  assert(parsed && "the parser stops only on an error");
  (void)parsed;
  return std::move(builder.root);
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

static void printString(StringRef value, std::string &out) {
  out += '"';
  for (char c : value) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        out += "\\u00";
        out += llvm::hexdigit((c >> 4) & 0xF, /*LowerCase=*/true);
        out += llvm::hexdigit(c & 0xF, /*LowerCase=*/true);
      } else {
        out += c;
      }
    }
  }
  out += '"';
}

static bool containsObject(const Value &value) {
  if (value.isObject())
    return true;
  return llvm::any_of(value.elements, containsObject);
}

static void printValue(const Value &value, unsigned indent, std::string &out) {
  switch (value.kind) {
  case Value::Kind::Null:
    out += "null";
    return;
  case Value::Kind::Boolean:
    out += value.boolean ? "true" : "false";
    return;
  case Value::Kind::Number:
    out += formatNumber(value);
    return;
  case Value::Kind::String:
    printString(value.text, out);
    return;
  case Value::Kind::Array: {
    if (value.elements.empty()) {
      out += "[]";
      return;
    }
    bool inline_ = !containsObject(value);
    out += inline_ ? "[" : "[\n";
    for (auto [index, element] : llvm::enumerate(value.elements)) {
      if (index)
        out += inline_ ? ", " : ",\n";
      if (!inline_)
        out.append(indent + 2, ' ');
      printValue(element, indent + 2, out);
    }
    if (!inline_) {
      out += '\n';
      out.append(indent, ' ');
    }
    out += ']';
    return;
  }
  case Value::Kind::Object: {
    if (value.members.empty()) {
      out += "{}";
      return;
    }
    out += "{\n";
    for (auto [index, member] : llvm::enumerate(value.members)) {
      if (index)
        out += ",\n";
      out.append(indent + 2, ' ');
      printString(member.key, out);
      out += ": ";
      printValue(member.value, indent + 2, out);
    }
    out += '\n';
    out.append(indent, ' ');
    out += '}';
    return;
  }
  }
}

std::string json::print(const Value &value) {
  std::string out;
  printValue(value, 0, out);
  out += '\n';
  return out;
}

//===----------------------------------------------------------------------===//
// Readers
//===----------------------------------------------------------------------===//

Error Reader::error(Location location, const Twine &message) const {
  return llvm::make_error<ReadError>(fileName, location, message.str());
}

Error Reader::typeError(const Value &value, const Twine &what,
                        const Twine &expected) const {
  return error(value.location,
               what + " must be " + expected + ", not " + value.describe());
}

Expected<int64_t> Reader::getInteger(const Value &value, const Twine &what,
                                     int64_t min, int64_t max) const {
  if (value.kind != Value::Kind::Number || !value.integerLiteral)
    return typeError(value, what, "an integer");
  if (!value.integer)
    return typeError(value, what, "an integer that fits in int64");
  int64_t result = *value.integer;
  if (result >= min && result <= max)
    return result;
  if (max == INT64_MAX)
    return typeError(value, what, "at least " + Twine(min));
  if (min == INT64_MIN)
    return typeError(value, what, "at most " + Twine(max));
  return typeError(value, what, "from " + Twine(min) + " to " + Twine(max));
}

Expected<double> Reader::getNumber(const Value &value, const Twine &what,
                                   Bound bound) const {
  if (value.kind != Value::Kind::Number)
    return typeError(value, what, "a number");
  if (bound == Bound::Positive && !(value.number > 0))
    return typeError(value, what, "positive");
  if (bound == Bound::NonNegative && !(value.number >= 0))
    return typeError(value, what, "zero or positive");
  return value.number;
}

Expected<bool> Reader::getBoolean(const Value &value, const Twine &what) const {
  if (value.kind != Value::Kind::Boolean)
    return typeError(value, what, "true or false");
  return value.boolean;
}

Expected<std::string> Reader::getString(const Value &value,
                                        const Twine &what) const {
  if (value.kind != Value::Kind::String)
    return typeError(value, what, "a string");
  return value.text;
}

Expected<size_t> Reader::getChoice(const Value &value, const Twine &what,
                                   ArrayRef<StringRef> choices) const {
  if (value.kind == Value::Kind::String)
    for (auto [index, choice] : llvm::enumerate(choices))
      if (value.text == choice)
        return index;
  std::string list;
  for (auto [index, choice] : llvm::enumerate(choices))
    list += (index ? ", \"" : "\"") + choice.str() + "\"";
  return typeError(value, what, "one of " + list);
}

Expected<ArrayRef<Value>> Reader::getArray(const Value &value,
                                           const Twine &what) const {
  if (!value.isArray())
    return typeError(value, what, "an array");
  return ArrayRef<Value>(value.elements);
}

Expected<std::vector<int64_t>> Reader::getIntegerArray(const Value &value,
                                                       const Twine &what,
                                                       int64_t min,
                                                       int64_t max) const {
  Expected<ArrayRef<Value>> elements = getArray(value, what);
  if (!elements)
    return elements.takeError();
  std::vector<int64_t> result;
  for (auto [index, element] : llvm::enumerate(*elements)) {
    Expected<int64_t> integer =
        getInteger(element, what + "[" + Twine(index) + "]", min, max);
    if (!integer)
      return integer.takeError();
    result.push_back(*integer);
  }
  return result;
}

Expected<std::vector<std::string>>
Reader::getStringArray(const Value &value, const Twine &what) const {
  Expected<ArrayRef<Value>> elements = getArray(value, what);
  if (!elements)
    return elements.takeError();
  std::vector<std::string> result;
  for (auto [index, element] : llvm::enumerate(*elements)) {
    Expected<std::string> string =
        getString(element, what + "[" + Twine(index) + "]");
    if (!string)
      return string.takeError();
    result.push_back(std::move(*string));
  }
  return result;
}

std::string ObjectReader::quote(StringRef key) {
  return ("\"" + key + "\"").str();
}

Expected<ObjectReader> ObjectReader::create(const Reader &reader,
                                            const Value &value,
                                            const Twine &what,
                                            ArrayRef<StringRef> allowedKeys) {
  if (!value.isObject())
    return reader.error(value.location,
                        what + " must be an object, not " + value.describe());
  for (const Member &member : value.members) {
    if (llvm::is_contained(allowedKeys, member.key))
      continue;
    std::string allowed;
    for (auto [index, key] : llvm::enumerate(allowedKeys))
      allowed += (index ? ", " : "") + quote(key);
    return reader.error(member.keyLocation, "unknown key " + quote(member.key) +
                                                " in " + what +
                                                " (allowed: " + allowed + ")");
  }
  return ObjectReader(reader, value, what.str());
}

const Member *ObjectReader::find(StringRef key) const {
  return value->find(key);
}

Expected<const Member *> ObjectReader::require(StringRef key) const {
  if (const Member *member = find(key))
    return member;
  return reader->error(value->location, what + " has no " + quote(key));
}

Error ObjectReader::read(StringRef key, std::optional<int64_t> &out,
                         int64_t min, int64_t max) const {
  const Member *member = find(key);
  if (!member)
    return Error::success();
  Expected<int64_t> result =
      reader->getInteger(member->value, quote(key), min, max);
  if (!result)
    return result.takeError();
  out = *result;
  return Error::success();
}

Error ObjectReader::read(StringRef key, std::optional<double> &out,
                         Reader::Bound bound) const {
  const Member *member = find(key);
  if (!member)
    return Error::success();
  Expected<double> result = reader->getNumber(member->value, quote(key), bound);
  if (!result)
    return result.takeError();
  out = *result;
  return Error::success();
}

Error ObjectReader::read(StringRef key, std::optional<bool> &out) const {
  const Member *member = find(key);
  if (!member)
    return Error::success();
  Expected<bool> result = reader->getBoolean(member->value, quote(key));
  if (!result)
    return result.takeError();
  out = *result;
  return Error::success();
}

Error ObjectReader::read(StringRef key, std::optional<std::string> &out) const {
  const Member *member = find(key);
  if (!member)
    return Error::success();
  Expected<std::string> result = reader->getString(member->value, quote(key));
  if (!result)
    return result.takeError();
  out = std::move(*result);
  return Error::success();
}

Error ObjectReader::read(StringRef key,
                         std::optional<std::vector<int64_t>> &out, int64_t min,
                         int64_t max) const {
  const Member *member = find(key);
  if (!member)
    return Error::success();
  Expected<std::vector<int64_t>> result =
      reader->getIntegerArray(member->value, quote(key), min, max);
  if (!result)
    return result.takeError();
  out = std::move(*result);
  return Error::success();
}

Error ObjectReader::read(StringRef key,
                         std::optional<std::vector<std::string>> &out) const {
  const Member *member = find(key);
  if (!member)
    return Error::success();
  Expected<std::vector<std::string>> result =
      reader->getStringArray(member->value, quote(key));
  if (!result)
    return result.takeError();
  out = std::move(*result);
  return Error::success();
}
