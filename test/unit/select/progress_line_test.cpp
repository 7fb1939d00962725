// ProgressLine: the plain lines of logs and CI (on a memory stream, as a pipe would get them) and
// the live line of a terminal (forced), with its redraw sequences, throttling under a fake clock,
// the best-so-far cut to the terminal's width, and a note that clears and redraws the line.
#include "select/progress_line.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace ktune {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// A FILE* over memory; text() is everything written so far.
class MemStream {
 public:
  MemStream() : f_(::open_memstream(&buf_, &size_)) {}
  ~MemStream() {
    std::fclose(f_);
    std::free(buf_);
  }
  MemStream(const MemStream&) = delete;
  MemStream& operator=(const MemStream&) = delete;
  std::FILE* get() { return f_; }
  std::string text() {
    std::fflush(f_);
    return std::string(buf_, size_);
  }

 private:
  char* buf_ = nullptr;
  std::size_t size_ = 0;
  std::FILE* f_;
};

ProgressPhase compile_phase(std::size_t total) {
  return {.title = "mm(small)",
          .header = "mm(small): compiling 20 candidates on 2 threads",
          .doing = "compiling",
          .done_word = "compiled",
          .plain_steps = true,
          .total = total};
}

// A terminal 80 columns wide whose clock the test moves.
ProgressDisplay terminal(double& now, int columns = 80) {
  return {
      .tty = true, .columns = columns, .clock = [&now] { return now; }, .redraw_interval_s = 0.1};
}

TEST(ProgressLine, PlainModePrintsTheHeaderAndATenthOfTheSteps) {
  MemStream out;
  {
    ProgressLine p(out.get(), compile_phase(20), ProgressDisplay{});  // tty false
    for (int i = 0; i < 20; ++i) p.step(i == 3);
    p.best("mm_BLOCK8", 1234.0);
  }
  const std::string text = out.text();
  EXPECT_THAT(text, StartsWith("ktune: mm(small): compiling 20 candidates on 2 threads\n"));
  EXPECT_THAT(text, HasSubstr("ktune: compiled 2/20\n"));
  EXPECT_THAT(text, HasSubstr("ktune: compiled 20/20\n"));
  EXPECT_THAT(text, Not(HasSubstr("compiled 3/20"))) << "every tenth of the way, not every step";
  EXPECT_THAT(text, Not(HasSubstr("\r"))) << "no redraws in a log";
  EXPECT_THAT(text, Not(HasSubstr("mm_BLOCK8"))) << "the best so far is for terminals";
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 11);
}

TEST(ProgressLine, PlainModeWithoutStepsPrintsOnlyTheHeader) {
  MemStream out;
  {
    ProgressPhase phase = compile_phase(5);
    phase.plain_steps = false;
    ProgressLine p(out.get(), phase, ProgressDisplay{});
    for (int i = 0; i < 5; ++i) p.step();
  }
  EXPECT_EQ(out.text(), "ktune: mm(small): compiling 20 candidates on 2 threads\n");
}

TEST(ProgressLine, NullStreamIsSilent) {
  ProgressLine p(nullptr, compile_phase(3));
  p.step();
  p.best("x", 1);
  p.finish();
  progress_note(nullptr, "nothing");
}

TEST(ProgressLine, TerminalRedrawsInPlaceAtMostTenTimesASecond) {
  MemStream out;
  double now = 100.0;
  ProgressLine p(out.get(), compile_phase(10), terminal(now));
  EXPECT_EQ(out.text(), "\r\x1b[Kktune: mm(small): compiling [....................] 0/10 0.0s")
      << "drawn at once, no header line";
  const std::size_t after_first = out.text().size();
  now += 0.05;
  p.step();
  p.step(/*failed=*/true);
  EXPECT_EQ(out.text().size(), after_first) << "within 0.1 s of the last draw: not redrawn";
  now += 0.06;
  for (int i = 0; i < 3; ++i) p.step();  // 0.11 s: the first of the three draws, 3/10
  const std::string drawn = out.text().substr(after_first);
  EXPECT_EQ(drawn,
            "\r\x1b[Kktune: mm(small): compiling [######..............] 3/10, 1 failed "
            "0.1s ETA 0.3s");
  now += 2.0;
  for (int i = 0; i < 5; ++i) p.step();
  p.finish();
  const std::string text = out.text();
  EXPECT_THAT(text, HasSubstr("\r\x1b[Kktune: mm(small): compiled 10/10, 1 failed in 2.1s\n"));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << "one line per phase";
  p.finish();
  EXPECT_EQ(out.text(), text) << "finished once";
}

TEST(ProgressLine, TerminalShowsTheBestSoFarCutToTheWidth) {
  MemStream out;
  double now = 0;
  const std::string name = "matmul_VEC16_MR8_NV2_KC512_UNROLL4_LOOP_ORDER0_PACK_B1";
  ProgressPhase phase = compile_phase(4);
  phase.doing = "verifying and measuring";
  ProgressLine p(out.get(), phase, terminal(now, 160));
  now = 1;
  p.best(name, 1.5e6);
  const std::string wide = out.text().substr(out.text().rfind('\r'));
  EXPECT_THAT(wide, HasSubstr(", best " + name + " 1.500 ms"));
  EXPECT_LE(wide.size() - 4, 159u);

  MemStream narrow_out;
  ProgressLine narrow(narrow_out.get(), phase, terminal(now, 110));
  now = 2;
  narrow.best(name, 1.5e6);
  const std::string cut = narrow_out.text().substr(narrow_out.text().rfind('\r'));
  EXPECT_EQ(cut.size() - 4, 109u) << cut;  // "\r\x1b[K" is not on the screen
  EXPECT_THAT(cut, HasSubstr(", best matmul_V"));
  EXPECT_THAT(cut, HasSubstr("...")) << "the middle of the name goes, its ends stay";
  EXPECT_THAT(cut, HasSubstr("PACK_B1 1.500 ms"));
}

TEST(ProgressLine, TooNarrowForTheBestLeavesItOut) {
  MemStream out;
  double now = 0;
  ProgressLine p(out.get(), compile_phase(4), terminal(now, 50));
  now = 1;
  p.best("some_candidate_name", 2000);
  const std::string last = out.text().substr(out.text().rfind('\r'));
  EXPECT_THAT(last, Not(HasSubstr("best")));
  EXPECT_LE(last.size() - 4, 49u);
}

TEST(ProgressLine, NoteClearsTheLiveLineAndRedrawsIt) {
  MemStream out;
  double now = 0;
  ProgressLine p(out.get(), compile_phase(4), terminal(now));
  p.step();
  const std::size_t before = out.text().size();
  progress_note(out.get(), "cmd: c++ -O3 -o x.so x.cpp");
  const std::string after = out.text().substr(before);
  EXPECT_THAT(after, StartsWith("\r\x1b[Kktune: cmd: c++ -O3 -o x.so x.cpp\n\r\x1b[Kktune: "
                                "mm(small): compiling [#####...............] 1/4"));
  p.finish();
  MemStream other;
  progress_note(other.get(), "plain");
  EXPECT_EQ(other.text(), "ktune: plain\n") << "no live line on that stream: nothing to clear";
}

TEST(ProgressLine, NextPhaseEndsALineLeftOpen) {
  MemStream out;
  double now = 0;
  auto first = std::make_unique<ProgressLine>(out.get(), compile_phase(2), terminal(now));
  ProgressPhase measure = compile_phase(2);
  measure.doing = "measuring";
  measure.done_word = "measured";
  ProgressLine second(out.get(), measure, terminal(now));
  EXPECT_THAT(out.text(), HasSubstr("compiled 0/2 in 0.0s\n\r\x1b[Kktune: mm(small): measuring"));
  first.reset();  // already finished: writes nothing, and leaves the second line live
  progress_note(out.get(), "note");
  EXPECT_THAT(out.text(), HasSubstr("ktune: note\n\r\x1b[Kktune: mm(small): measuring"));
}

}  // namespace
}  // namespace ktune
