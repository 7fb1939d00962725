// The report's text helpers (html_text.h).
#include "report/html_text.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>

#include "core/utf8.h"

namespace ktune::report_text {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace

// Length of the valid UTF-8 sequence at s[i] (a lead byte >= 0x80), 0 when it is not one.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  std::size_t n = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (b(1) < lo || b(1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if (b(k) < 0x80 || b(k) > 0xBF) return 0;
  }
  return n;
}

void append_escaped(std::string& out, std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const std::size_t n = utf8_sequence(s, i);
      if (n == 0) {
        out += kReplacement;
        ++i;
      } else {
        out.append(s.substr(i, n));
        i += n;
      }
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if ((c < 0x20 && c != '\n' && c != '\t' && c != '\r') || c == 0x7F) {
          out += kReplacement;
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
}

std::string esc(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  append_escaped(out, s);
  return out;
}

// At most `max_bytes` of `s`, cut at a character boundary, with "…" when cut.
std::string cut(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  return std::string(utf8_prefix(s, max_bytes)) + "\xE2\x80\xA6";
}

bool finite_positive(double v) { return std::isfinite(v) && v > 0; }

// A duration in ns as text with three significant digits and a unit.
std::string time_text(double ns) {
  if (!std::isfinite(ns)) return "-";
  const double a = std::fabs(ns);
  const auto three = [](double v, std::string_view unit) {
    const double av = std::fabs(v);
    const int decimals = av < 10 ? 2 : av < 100 ? 1 : 0;
    return fmt::format("{:.{}f} {}", v, decimals, unit);
  };
  if (a < 1e3) return three(ns, "ns");
  if (a < 1e6) return three(ns / 1e3, "\xC2\xB5s");
  if (a < 1e9) return three(ns / 1e6, "ms");
  return three(ns / 1e9, "s");
}

// A number for a data-v attribute (sorting): finite, else a large value that sorts last.
std::string sort_value(double v) {
  return std::isfinite(v) ? fmt::format("{:.6g}", v) : std::string("1e300");
}

std::string utc_text(std::int64_t unix_s) {
  return fmt::format("{:%Y-%m-%d %H:%M:%S} UTC", fmt::gmtime(static_cast<std::time_t>(unix_s)));
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

bool measured(const CandidateRecord& c) {
  return c.outcome == Outcome::kOk && c.stats && finite_positive(c.stats->median_ns);
}

// Not a failure of the candidate: the search stopped measuring it, or never proposed it.
bool not_measured_to_end(Outcome o) {
  return o == Outcome::kAbandoned || o == Outcome::kNotEvaluated;
}

}  // namespace ktune::report_text
