// Names of error codes, for messages and logs; context added to an error.
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
    case ErrorCode::kNoValidChoice:
      return "no_valid_choice";
    case ErrorCode::kInternal:
      return "internal";
    case ErrorCode::kEndOfStream:
      return "end_of_stream";
    case ErrorCode::kResourceExhausted:
      return "resource_exhausted";
  }
  return "unknown";
}

Error with_context(Error error, std::string_view where) {
  error.message.insert(0, std::string(where) + ": ");
  return error;
}

}  // namespace ktune
