// sha256_hex, the digest records beside code-cache files, and the one way loaders read artifacts.
#include "backend/artifact_digest.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "core/file_util.h"
#include "core/unique_fd.h"

namespace ktune {
namespace {

constexpr std::size_t kDigestHex = 64;

std::unexpected<Error> refused(const std::filesystem::path& p, std::string why) {
  return make_error(ErrorCode::kInvalidArgument,
                    fmt::format("artifact '{}' refused: {}", p.string(), why));
}

// Reads the whole of a file opened with O_NOFOLLOW, after the ownership checks on its fstat.
Result<std::string> read_owned(const std::filesystem::path& p, std::size_t limit) {
  UniqueFd fd(::open(p.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) {
    // A link in its place is a refusal; anything else is the OS's answer.
    if (errno == ELOOP) return refused(p, "a symbolic link, not followed");
    return make_error(ErrorCode::kIo,
                      fmt::format("'{}': cannot open: {}", p.string(), std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return refused(p, "not a regular file");
  }
  if (st.st_uid != ::geteuid()) {
    return refused(p, fmt::format("owned by user {}, not by this user", st.st_uid));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return refused(p, fmt::format("writable by others (mode {:o})", st.st_mode & 07777));
  }
  if (static_cast<std::size_t>(st.st_size) > limit) {
    return refused(p, fmt::format("{} bytes", st.st_size));
  }
  std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd.get(), bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got != bytes.size()) return refused(p, "short read");
  return bytes;
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int n = 0;
  // EVP_Digest fails only on allocation failure; an empty digest then matches no record.
  if (EVP_Digest(bytes.data(), bytes.size(), md.data(), &n, EVP_sha256(), nullptr) != 1) return {};
  std::string hex;
  hex.reserve(std::size_t{2} * n);
  for (unsigned int i = 0; i < n; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

std::filesystem::path digest_path(const std::filesystem::path& artifact) {
  return artifact.string() + ".sha256";
}

Status record_artifact_digest(const std::filesystem::path& artifact, std::string_view bytes) {
  const std::filesystem::path record = digest_path(artifact);
  const std::filesystem::path tmp =
      record.parent_path() / temp_file_name(record.filename().string());
  {
    auto fd = create_exclusive(tmp, 0644);
    if (!fd) return std::unexpected(fd.error());
    if (Status s = write_all(fd->get(), sha256_hex(bytes) + "\n", tmp); !s) {
      ::unlink(tmp.c_str());
      return s;
    }
  }
  if (::rename(tmp.c_str(), record.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return make_error(ErrorCode::kIo, fmt::format("{}: cannot rename into place: {}",
                                                  record.string(), std::strerror(err)));
  }
  return {};
}

Result<std::string> read_verified_artifact(const std::filesystem::path& artifact) {
  // The artifact first, so that a missing one is the OS's kIo, as before the check existed.
  Result<std::string> bytes = read_owned(artifact, std::size_t{1} << 31);
  if (!bytes) return std::unexpected(bytes.error());
  Result<std::string> record = read_owned(digest_path(artifact), 1024);
  if (!record) {
    return refused(artifact,
                   "no digest recorded when it was compiled (" + record.error().message + ")");
  }
  const std::string expected = record->substr(0, record->find_first_of("\r\n"));
  if (expected.size() != kDigestHex) {
    return refused(artifact, "its digest record is malformed");
  }
  if (sha256_hex(*bytes) != expected) {
    return refused(artifact,
                   "its content does not match the SHA-256 recorded when it was compiled");
  }
  return bytes;
}

}  // namespace ktune
