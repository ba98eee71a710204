#include "common/status.h"

namespace sparkprof {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kCorrupt:
      return "corrupt";
    case StatusCode::kTooLarge:
      return "too large";
    case StatusCode::kUnsupported:
      return "unsupported";
    case StatusCode::kIoError:
      return "i/o error";
    case StatusCode::kInternal:
      return "internal error";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

}  // namespace sparkprof
