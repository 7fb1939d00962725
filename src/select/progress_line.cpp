// ProgressLine and progress_note (progress_line.h).
#include "select/progress_line.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string_view>

namespace ktune {
namespace {

// One lock for every progress write, and the live line it may have to clear: compile tasks,
// verbose callbacks and the selection's thread all write to the same terminal.
std::mutex& progress_mutex() {
  static std::mutex mu;
  return mu;
}
ProgressLine* g_live = nullptr;  // the phase whose line is on the terminal now (lock held)
std::FILE* g_live_file = nullptr;

constexpr std::string_view kClearLine = "\r\x1b[K";
constexpr int kBarWidth = 20;

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string duration_text(double s) {
  if (s < 60) return fmt::format("{:.1f}s", s);
  const long total = static_cast<long>(s);
  if (total < 3600) return fmt::format("{}m{:02}s", total / 60, total % 60);
  return fmt::format("{}h{:02}m", total / 3600, total / 60 % 60);
}

// "abcdef...xyz": the start and the end of a name, which is where configs differ.
std::string shorten(const std::string& name, std::size_t width) {
  if (name.size() <= width) return name;
  if (width < 5) return name.substr(0, width);
  const std::size_t head = (width - 3) / 2;
  const std::size_t tail = width - 3 - head;
  return fmt::format("{}...{}", name.substr(0, head), name.substr(name.size() - tail));
}

void write_line(std::FILE* f, std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), f);
  std::fflush(f);
}

}  // namespace

ProgressDisplay ProgressDisplay::detect(std::FILE* f) {
  ProgressDisplay d;
  const int fd = f ? ::fileno(f) : -1;
  d.tty = fd >= 0 && ::isatty(fd) == 1;
  if (const char* forced = std::getenv("KTUNE_PROGRESS")) {
    if (std::string_view(forced) == "tty") d.tty = true;
    if (std::string_view(forced) == "plain") d.tty = false;
  }
  winsize ws{};
  if (fd >= 0 && ::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
    d.columns = ws.ws_col;
  } else if (const char* cols = std::getenv("COLUMNS")) {
    d.columns = std::clamp(std::atoi(cols), 0, 1000);
    if (d.columns == 0) d.columns = 80;
  }
  return d;
}

std::string progress_time(double ns) {
  if (ns >= 1e9) return fmt::format("{:.3f} s", ns / 1e9);
  if (ns >= 1e6) return fmt::format("{:.3f} ms", ns / 1e6);
  return fmt::format("{:.2f} us", ns / 1e3);
}

ProgressLine::ProgressLine(std::FILE* f, ProgressPhase phase,
                           std::optional<ProgressDisplay> display)
    : f_(f), phase_(std::move(phase)), display_(display ? *display : ProgressDisplay::detect(f)) {
  start_s_ = now();
  if (!f_) return;
  std::lock_guard lock(progress_mutex());
  if (!display_.tty) {
    if (!phase_.header.empty()) write_line(f_, fmt::format("ktune: {}\n", phase_.header));
    return;
  }
  if (g_live && g_live_file == f_) g_live->finish_locked();
  g_live = this;
  g_live_file = f_;
  draw(/*force=*/true);
}

ProgressLine::~ProgressLine() { finish(); }

double ProgressLine::now() const { return display_.clock ? display_.clock() : steady_seconds(); }

void ProgressLine::step(bool failed) {
  std::lock_guard lock(progress_mutex());
  ++done_;
  failed_ += failed ? 1 : 0;
  if (!f_ || finished_) return;
  if (display_.tty) {
    draw(false);  // the last step shows in finish()
    return;
  }
  const std::size_t every = std::max<std::size_t>(1, phase_.total / 10);
  if (phase_.plain_steps && (done_ % every == 0 || done_ == phase_.total)) {
    write_line(f_, fmt::format("ktune: {} {}/{}\n", phase_.done_word, done_, phase_.total));
  }
}

void ProgressLine::best(const std::string& name, double ns) {
  std::lock_guard lock(progress_mutex());
  best_ = std::pair(name, ns);
  if (f_ && display_.tty && !finished_) draw(false);
}

void ProgressLine::set_total(std::size_t total) {
  std::lock_guard lock(progress_mutex());
  phase_.total = total;
}

void ProgressLine::finish() {
  std::lock_guard lock(progress_mutex());
  finish_locked();
}

void ProgressLine::finish_locked() {
  if (finished_) return;
  finished_ = true;
  if (!f_ || !display_.tty) return;
  write_line(f_, fmt::format("{}{}\n", kClearLine, final_text()));
  if (g_live == this) g_live = nullptr;
}

std::string ProgressLine::live_text() const {
  const double elapsed = now() - start_s_;
  const std::size_t total = std::max(phase_.total, done_);
  const int filled =
      total == 0 ? 0 : static_cast<int>(static_cast<double>(kBarWidth) * done_ / total);
  std::string text =
      fmt::format("ktune: {}: {} [{}{}] {}/{}", phase_.title, phase_.doing,
                  std::string(filled, '#'), std::string(kBarWidth - filled, '.'), done_, total);
  if (failed_) text += fmt::format(", {} failed", failed_);
  text += fmt::format(" {}", duration_text(elapsed));
  if (done_ > 0 && done_ < total) {
    text += fmt::format(" ETA {}", duration_text(elapsed / done_ * (total - done_)));
  }
  const std::size_t width = static_cast<std::size_t>(std::max(display_.columns - 1, 10));
  if (best_) {
    const std::string time = progress_time(best_->second);
    const std::string lead = ", best ";
    const std::size_t fixed = text.size() + lead.size() + 1 + time.size();
    // A best whose name cannot keep 8 characters is left out rather than made unreadable.
    if (fixed + 8 <= width) {
      text += fmt::format("{}{} {}", lead, shorten(best_->first, width - fixed), time);
    }
  }
  if (text.size() > width) text.resize(width);
  return text;
}

std::string ProgressLine::final_text() const {
  std::string text = fmt::format("ktune: {}: {} {}/{}", phase_.title, phase_.done_word, done_,
                                 std::max(phase_.total, done_));
  if (failed_) text += fmt::format(", {} failed", failed_);
  text += fmt::format(" in {}", duration_text(now() - start_s_));
  if (best_) text += fmt::format("; best {} {}", best_->first, progress_time(best_->second));
  return text;
}

void ProgressLine::draw(bool force) {
  const double t = now();
  if (!force && last_draw_s_ >= 0 && t - last_draw_s_ < display_.redraw_interval_s) return;
  last_draw_s_ = t;
  write_line(f_, fmt::format("{}{}", kClearLine, live_text()));
}

void progress_note(std::FILE* f, const std::string& line) {
  if (!f) return;
  std::lock_guard lock(progress_mutex());
  const bool live = g_live != nullptr && g_live_file == f;
  write_line(f, fmt::format("{}ktune: {}\n", live ? kClearLine : "", line));
  if (live) g_live->draw(/*force=*/true);
}

}  // namespace ktune
