// Errors are values: Status for "it worked or here is why not", Result<T> for a value or a Status.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace sparkprof {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // the caller asked for something impossible (bad option, bad path)
  kNotFound,         // a file or entry does not exist
  kCorrupt,          // input bytes are malformed (bad checksum, truncated block, bad JSON)
  kTooLarge,         // input declares or needs more than a configured limit
  kUnsupported,      // a format or feature this build does not handle
  kIoError,          // the operating system refused a read or write
  kInternal,         // a bug in sparkprof
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "corrupt: <message>", or "ok".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status Corrupt(std::string m) { return {StatusCode::kCorrupt, std::move(m)}; }
inline Status TooLarge(std::string m) { return {StatusCode::kTooLarge, std::move(m)}; }
inline Status Unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
inline Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : storage_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : storage_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(storage_).ok() && "Result built from an ok Status");
  }

  bool ok() const { return std::holds_alternative<T>(storage_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(storage_);
  }
  T& value() & { return std::get<T>(storage_); }
  const T& value() const& { return std::get<T>(storage_); }
  T&& value() && { return std::get<T>(std::move(storage_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }

 private:
  std::variant<T, Status> storage_;
};

}  // namespace sparkprof

#define SPARKPROF_CONCAT_INNER(a, b) a##b
#define SPARKPROF_CONCAT(a, b) SPARKPROF_CONCAT_INNER(a, b)

// Returns the Status from the enclosing function when `expr` is not ok.
#define SPARKPROF_RETURN_IF_ERROR(expr)   \
  do {                                    \
    ::sparkprof::Status status_ = (expr); \
    if (!status_.ok()) return status_;    \
  } while (false)

// `SPARKPROF_ASSIGN_OR_RETURN(auto x, MakeX());`  NOLINTBEGIN(bugprone-macro-parentheses)
#define SPARKPROF_ASSIGN_OR_RETURN(lhs, expr)            \
  auto SPARKPROF_CONCAT(result_, __LINE__) = (expr);     \
  if (!SPARKPROF_CONCAT(result_, __LINE__).ok())         \
    return SPARKPROF_CONCAT(result_, __LINE__).status(); \
  lhs = std::move(SPARKPROF_CONCAT(result_, __LINE__)).value()
// NOLINTEND(bugprone-macro-parentheses): `lhs` declares (`auto x`), parentheses would not compile
