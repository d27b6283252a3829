#pragma once
// Error values for fallible operations. Fallible I/O returns Result<T>; an
// Error carries a code (what kind of failure) and a message with context.
// A user's mistake (bad config, bad task, bad flag) is kInvalidArgument and
// maps to exit code 2 in the CLI; everything else maps to exit code 1.

#include <string>
#include <string_view>
#include <utility>

#include <tl/expected.hpp>

namespace kestrel {

enum class ErrorCode {
  kInvalidArgument,  // the user's input is wrong: config, task, flag, file
  kNotFound,         // a named thing (node, run, task) does not exist
  kIo,               // the OS or a library failed (files, processes, SQLite)
  kCorruption,       // stored data is inconsistent or from a newer/foreign format
  kUnsupported,      // a feature or backend that is not available here
  kInternal,         // a bug surfaced as a value
};

class Error {
 public:
  static Error InvalidArgument(std::string message) { return {ErrorCode::kInvalidArgument, std::move(message)}; }
  static Error NotFound(std::string message) { return {ErrorCode::kNotFound, std::move(message)}; }
  static Error Io(std::string message) { return {ErrorCode::kIo, std::move(message)}; }
  static Error Corruption(std::string message) { return {ErrorCode::kCorruption, std::move(message)}; }
  static Error Unsupported(std::string message) { return {ErrorCode::kUnsupported, std::move(message)}; }
  static Error Internal(std::string message) { return {ErrorCode::kInternal, std::move(message)}; }

  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  bool IsInvalidArgument() const { return code_ == ErrorCode::kInvalidArgument; }
  bool IsNotFound() const { return code_ == ErrorCode::kNotFound; }

  // A copy whose message reads "<context>: <message>".
  Error WithContext(std::string_view context) const {
    return {code_, std::string(context) + ": " + message_};
  }

 private:
  Error(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}
  ErrorCode code_;
  std::string message_;
};

template <class T>
using Result = tl::expected<T, Error>;
using Status = Result<void>;

// `return Fail(Error::NotFound("node 12"));` from a function returning Result<T>.
inline tl::unexpected<Error> Fail(Error error) { return tl::unexpected<Error>(std::move(error)); }

}  // namespace kestrel
