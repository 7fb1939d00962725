// Progress of a selection's phases (compile, measure, decide, re-verify) as a person reads it.
//
// On a terminal each phase is ONE live line, redrawn in place at most ten times a second: a bar,
// done/total, failures so far, elapsed time, an ETA and, while measuring, the best candidate so
// far; when the phase ends its line is finished with a newline (final counts, time taken). Not on
// a terminal (logs, CI, tests) the phase prints the plain lines it always printed: its header and
// "<word> n/total" every tenth of the way. Which of the two is decided here and nowhere else.
//
// Every other progress message (progress_note: warnings, verbose compiler command lines, worker
// restarts) goes through the same lock and, on a terminal, clears the live line, prints itself
// and redraws the line below it, so that nothing but progress is ever written onto that line.
#pragma once

#include <cstddef>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <utility>

namespace ktune {

// How progress is shown on one stream.
struct ProgressDisplay {
  bool tty = false;
  int columns = 80;                // width of a live line (the line is cut to columns - 1)
  std::function<double()> clock;   // monotonic seconds; empty: steady_clock
  double redraw_interval_s = 0.1;  // live lines are redrawn at most this often

  // isatty(fileno(f)) and the terminal's width (TIOCGWINSZ, else $COLUMNS, else 80).
  // $KTUNE_PROGRESS=tty or =plain overrides the guess (a pipe that ends at a terminal).
  [[nodiscard]] static ProgressDisplay detect(std::FILE* f);
};

struct ProgressPhase {
  std::string title{};      // "matmul(skinny)"
  std::string header{};     // plain: the line that starts the phase (after "ktune: "); empty: none
  std::string doing{};      // live: "compiling"
  std::string done_word{};  // live, finished: "compiled"; plain steps: "compiled n/total"
  bool plain_steps = true;  // plain mode prints "<done_word> n/total" every tenth of the way
  std::size_t total = 0;
};

class ProgressLine {
 public:
  // f null: silent. Prints the header (plain) or draws the line (terminal) at once.
  ProgressLine(std::FILE* f, ProgressPhase phase,
               std::optional<ProgressDisplay> display = std::nullopt);
  ~ProgressLine();  // finish()
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // One unit done (thread-safe: compile tasks call it from the pool's threads).
  void step(bool failed = false);
  // The best candidate so far, its median in ns (shown while measuring, terminal only).
  void best(const std::string& name, double ns);
  // The total changed (the decide stage may run more rounds when noisy).
  void set_total(std::size_t total);
  // Ends the live line with its final counts and time; plain mode prints nothing more. Once.
  void finish();

 private:
  friend void progress_note(std::FILE* f, const std::string& line);
  [[nodiscard]] double now() const;
  [[nodiscard]] std::string live_text() const;
  [[nodiscard]] std::string final_text() const;
  void draw(bool force);  // lock held
  void finish_locked();

  std::FILE* f_;
  ProgressPhase phase_;
  ProgressDisplay display_;
  double start_s_ = 0;
  double last_draw_s_ = -1;
  std::size_t done_ = 0;
  std::size_t failed_ = 0;
  std::optional<std::pair<std::string, double>> best_;
  bool finished_ = false;
};

// "ktune: <line>" on f (null: nothing); a live line on f is cleared first and redrawn after.
void progress_note(std::FILE* f, const std::string& line);

// "1.234 ms": a median for a progress line.
[[nodiscard]] std::string progress_time(double ns);

}  // namespace ktune
