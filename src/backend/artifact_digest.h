// Artifacts checked against their content hash before they are loaded. CodeCache::commit records
// the SHA-256 of every file it puts in place (<file>.sha256, written before the file appears), and
// every loader reads an artifact through read_verified_artifact(): a file swapped, edited or
// planted in the code cache after it was compiled is refused, never loaded. SHA-256 (OpenSSL's
// libcrypto), not core/hash.h's FNV lanes: a non-cryptographic hash does not stop a deliberate
// collision.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "ktune/core/status.h"

namespace ktune {

// 64 lowercase hex digits.
[[nodiscard]] std::string sha256_hex(std::string_view bytes);

// Where the digest of `artifact` is recorded.
[[nodiscard]] std::filesystem::path digest_path(const std::filesystem::path& artifact);

// Writes the digest of `bytes` as the record of `artifact` (a temporary created exclusively,
// renamed into place).
[[nodiscard]] Status record_artifact_digest(const std::filesystem::path& artifact,
                                            std::string_view bytes);

// The bytes of `artifact`, read through one descriptor opened without following links, after
// checking that the file and its digest record are this user's, that others cannot write the
// file, and that the bytes hash to the recorded digest. kInvalidArgument says which check failed.
[[nodiscard]] Result<std::string> read_verified_artifact(const std::filesystem::path& artifact);

}  // namespace ktune
