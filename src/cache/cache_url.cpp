// parse_cache_url (ktune/cache/cache_url.h).
#include "ktune/cache/cache_url.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cstdint>
#include <optional>

namespace ktune {
namespace {

constexpr std::string_view kExpected = "expected redis://HOST:PORT/DB";

bool is_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return false;
  }
  return true;
}

// The number in `s` if it is all digits and at most `max`.
std::optional<std::int64_t> bounded_number(std::string_view s, std::int64_t max) {
  if (!is_digits(s) || s.size() > 18) return std::nullopt;
  std::int64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  if (v > max) return std::nullopt;
  return v;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    const int hi = hex_value(s[i + 1]);
    const int lo = hex_value(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

bool valid_host_name(std::string_view h) {
  for (char c : h) {
    const bool ok =
        std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

bool valid_ipv6(std::string_view h) {
  for (char c : h) {
    if (std::isxdigit(static_cast<unsigned char>(c)) == 0 && c != ':' && c != '.') return false;
  }
  return h.find(':') != std::string_view::npos;
}

// The URL as messages show it: the password (between the userinfo's ':' and its '@') masked.
std::string masked(std::string_view url) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  const std::size_t start = scheme + 3;
  const std::size_t end = url.find('/', start);
  const std::string_view authority =
      url.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
  const std::size_t at = authority.rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  const std::size_t colon = authority.substr(0, at).find(':');
  if (colon == std::string_view::npos) return std::string(url);
  return fmt::format("{}***{}", url.substr(0, start + colon + 1), url.substr(start + at));
}

}  // namespace

std::string RedisUrl::host_port() const {
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port)
                                             : fmt::format("{}:{}", host, port);
}

std::string RedisUrl::display() const { return fmt::format("redis://{}/{}", host_port(), db); }

Result<RedisUrl> parse_cache_url(std::string_view url) {
  auto bad = [&](std::string_view what) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("cache URL '{}': {}", masked(url), what));
  };
  const std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return bad(fmt::format("no scheme; {}", kExpected));
  std::string scheme(url.substr(0, scheme_end));
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != "redis") {
    return bad(fmt::format("unsupported scheme '{}'; {}", scheme, kExpected));
  }
  std::string_view rest = url.substr(scheme_end + 3);
  if (const std::size_t q = rest.find_first_of("?#"); q != std::string_view::npos) {
    return bad(
        fmt::format("unexpected '{}' (no query or fragment); {}", rest.substr(q), kExpected));
  }
  const std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  const std::string_view path =
      slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);

  RedisUrl out;
  if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
    const std::string_view userinfo = authority.substr(0, at);
    authority = authority.substr(at + 1);
    const std::size_t colon = userinfo.find(':');
    if (colon == std::string_view::npos) {
      return bad("credentials must be :PASSWORD@ or USER:PASSWORD@");
    }
    auto user = percent_decode(userinfo.substr(0, colon));
    auto password = percent_decode(userinfo.substr(colon + 1));
    if (!user || !password) return bad("malformed %-escape in the credentials");
    if (password->empty()) return bad("empty password");
    out.user = std::move(*user);
    out.password = std::move(*password);
  }

  std::string_view port_text;
  bool has_port = false;
  if (authority.starts_with('[')) {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("unclosed '[' in the host");
    out.host = std::string(authority.substr(1, close - 1));
    if (!valid_ipv6(out.host)) return bad(fmt::format("'{}' is not an IPv6 address", out.host));
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return bad(fmt::format("unexpected '{}' after the host", after));
      has_port = true;
      port_text = after.substr(1);
    }
  } else {
    const std::size_t colon = authority.find(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      has_port = true;
      port_text = authority.substr(colon + 1);
    }
    if (!out.host.empty() && !valid_host_name(out.host)) {
      return bad(fmt::format("'{}' is not a host name", out.host));
    }
  }
  if (out.host.empty()) return bad(fmt::format("no host; {}", kExpected));
  if (has_port) {
    const auto port = bounded_number(port_text, 65535);
    if (!port || *port == 0) {
      return bad(fmt::format("port '{}' is not a number in 1-65535", port_text));
    }
    out.port = static_cast<int>(*port);
  }
  if (!path.empty()) {
    const auto db = bounded_number(path, 1 << 30);
    if (!db) return bad(fmt::format("database '{}' is not a non-negative number", path));
    out.db = static_cast<int>(*db);
  }
  return out;
}

}  // namespace ktune
