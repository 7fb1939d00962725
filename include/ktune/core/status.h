// Status and Result: how ktune reports failures outside its control (bad input, I/O, compilers).
// Broken invariants abort instead (KTUNE_CHECK); third-party exceptions are caught at one adapter
// per library and turned into an Error here.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <expected>
#include <string>
#include <string_view>
#include <utility>

namespace ktune {

enum class ErrorCode {
  kInvalidArgument,  // the caller's input is wrong (spec, option, expression)
  kNotFound,         // a file, key or symbol is missing
  kIo,               // the OS refused (open, write, rename, dlopen)
  kParse,            // text that does not parse (YAML, JSON, expression)
  kCompile,          // the compiler rejected a source
  kTimeout,          // a deadline passed
  kUnavailable,      // a library or device is not present on this machine
  kNoValidChoice,    // selection found no candidate that ran and verified
  kInternal,         // a bug in ktune
  kEndOfStream,      // the other side closed a pipe cleanly, between messages
  // Memory (host or device) or another limited resource ran out.
  kResourceExhausted,
};

[[nodiscard]] const char* error_code_name(ErrorCode code);

// `message` follows DESIGN.md: "<where>: <what>; <expected vs actual>" (no "error: " prefix).
// The code is the data callers act on; the message is for people, and no caller parses it.
struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
};

template <class T>
using Result = std::expected<T, Error>;
using Status = std::expected<void, Error>;

[[nodiscard]] inline std::unexpected<Error> make_error(ErrorCode code, std::string message) {
  return std::unexpected(Error{code, std::move(message)});
}

// The same failure seen from an outer layer: "<where>: <message>", with the code kept, so that a
// caller further out still tests what happened (kEndOfStream, kResourceExhausted...) rather than
// the text, and no layer formats another's message by hand.
[[nodiscard]] Error with_context(Error error, std::string_view where);

template <class T>
[[nodiscard]] std::expected<T, Error> with_context(std::expected<T, Error> result,
                                                   std::string_view where) {
  if (!result) result.error() = with_context(std::move(result.error()), where);
  return result;
}

}  // namespace ktune

// Aborts with file and line when an invariant of ktune itself is broken.
#define KTUNE_CHECK(cond)                                                                     \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      std::fprintf(stderr, "ktune: internal check failed at %s:%d: %s\n", __FILE__, __LINE__, \
                   #cond);                                                                    \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)
