// Names of error codes, for messages and logs.
#include "ktune/core/status.h"

namespace ktune {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kIo:
      return "io";
    case ErrorCode::kParse:
      return "parse";
    case ErrorCode::kCompile:
      return "compile";
    case ErrorCode::kTimeout:
      return "timeout";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kResourceExhausted:
      return "resource_exhausted";
    case ErrorCode::kNoValidChoice:
      return "no_valid_choice";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "unknown";
}

}  // namespace ktune
