// The README's tour, run as written: its marked code blocks are extracted from README.md and run
// in a scratch folder against the built ktune, so that the README and the code cannot drift apart.
//
// The markers are the fenced blocks' info strings:
//   ```yaml tour <path>   the block is the file <path> of the repository, byte for byte; the
//                          scratch copy of <path> is written from the block, so the commands run
//                          against the spec as the README shows it
//   ```sh tour            each line is a command, run with bash from the scratch folder (which
//                          holds a copy of examples/ and build/bin/ktune), that must exit 0
// A command may hold a placeholder that only a previous command's output can fill in; the known
// ones are in kPlaceholders. Any other `<...>` fails the test, as it would fail in a shell.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli_run.h"

namespace ktune::test {
namespace {

namespace fs = std::filesystem;

struct Block {
  std::vector<std::string> info;  // the words after the fence: {"yaml", "tour", "path"}
  std::string text;
  int line = 0;  // of the opening fence, 1-based
};

std::string source_dir() {
  const char* moved = std::getenv("KTUNE_TEST_SOURCE_DIR");
  return moved && *moved ? moved : KTUNE_SOURCE_DIR;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Every fenced block whose info string has "tour" as its second word.
std::vector<Block> tour_blocks(const std::string& markdown) {
  std::vector<Block> blocks;
  std::istringstream in(markdown);
  std::string line;
  Block* open = nullptr;
  Block current;
  bool in_fence = false;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.starts_with("```")) {
      if (in_fence) {
        if (open != nullptr) blocks.push_back(std::move(*open));
        open = nullptr;
        in_fence = false;
        continue;
      }
      in_fence = true;
      current = Block{words(line.substr(3)), "", n};
      if (current.info.size() >= 2 && current.info[1] == "tour") open = &current;
      continue;
    }
    if (open != nullptr) open->text += line + "\n";
  }
  return blocks;
}

// A command's placeholder and how to fill it from the output of the commands before it.
struct Placeholder {
  std::string text;
  std::regex from;  // group 1 is the value
};

const std::vector<Placeholder>& placeholders() {
  // `ktune cache list` prints a DIGEST column of 12 hex digits.
  static const std::vector<Placeholder> kPlaceholders = {
      {"<digest prefix>", std::regex(R"((?:^|\n)([0-9a-f]{12})  )")},
  };
  return kPlaceholders;
}

// The commands of a `sh tour` block: one per line, comment-only and blank lines left out.
std::vector<std::string> commands(const std::string& block) {
  std::vector<std::string> out;
  std::istringstream in(block);
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    out.push_back(line);
  }
  return out;
}

TEST(ReadmeTour, BlocksAreMarked) {
  const std::vector<Block> blocks = tour_blocks(read_text(fs::path(source_dir()) / "README.md"));
  int specs = 0, shells = 0;
  for (const Block& b : blocks) {
    specs += b.info[0] == "yaml";
    shells += b.info[0] == "sh";
    EXPECT_TRUE(b.info[0] == "sh" || (b.info[0] == "yaml" && b.info.size() == 3))
        << "README.md:" << b.line << ": expected ```sh tour or ```yaml tour <path>";
  }
  // The tour shows a spec and runs commands on it; a README without them has lost its tour.
  EXPECT_GE(specs, 1);
  EXPECT_GE(shells, 1);
}

// A fresh machine needs exactly two commands: the first code block after "## The two commands".
TEST(ReadmeTour, SetUpIsTwoCommands) {
  const std::string readme = read_text(fs::path(source_dir()) / "README.md");
  const auto section = readme.find("\n## The two commands\n");
  ASSERT_NE(section, std::string::npos);
  const auto open = readme.find("\n```", section);
  ASSERT_NE(open, std::string::npos);
  const auto body = readme.find('\n', open + 1);
  const auto close = readme.find("\n```", body);
  ASSERT_NE(close, std::string::npos);
  std::vector<std::string> first_words;
  for (const std::string& c : commands(readme.substr(body + 1, close - body))) {
    first_words.push_back(words(c).at(0) + " " + words(c).at(1));
  }
  EXPECT_THAT(first_words, testing::ElementsAre("make demo", "make test"));
}

TEST(ReadmeTour, SpecsShownAreTheExamplesFiles) {
  const fs::path src = source_dir();
  for (const Block& b : tour_blocks(read_text(src / "README.md"))) {
    if (b.info[0] != "yaml" || b.info.size() != 3) continue;
    ASSERT_TRUE(fs::is_regular_file(src / b.info[2]))
        << "README.md:" << b.line << ": " << b.info[2];
    EXPECT_EQ(b.text, read_text(src / b.info[2]))
        << "README.md:" << b.line << ": the spec shown differs from " << b.info[2];
  }
}

TEST(ReadmeTour, CommandsRunAsWritten) {
  const fs::path src = source_dir();
  const std::vector<Block> blocks = tour_blocks(read_text(src / "README.md"));
  ScratchDir scratch("readme-tour");
  const fs::path root = scratch.path();
  fs::copy(src / "examples", root / "examples", fs::copy_options::recursive);
  fs::create_directories(root / "build" / "bin");
  const char* moved = std::getenv("KTUNE_TEST_CLI");
  fs::create_symlink(moved && *moved ? moved : KTUNE_CLI, root / "build" / "bin" / "ktune");
  ::setenv("KTUNE_CACHE_DIR", (root / "cache").c_str(), 1);
  ::setenv("KTUNE_WORKER", worker_exe().c_str(), 1);

  for (const Block& b : blocks) {
    if (b.info[0] == "yaml" && b.info.size() == 3) {
      std::ofstream(root / b.info[2], std::ios::binary) << b.text;
    }
  }
  std::string history;  // everything printed so far, for the placeholders
  int ran = 0;
  for (const Block& b : blocks) {
    if (b.info[0] != "sh") continue;
    for (std::string command : commands(b.text)) {
      for (const Placeholder& p : placeholders()) {
        const auto at = command.find(p.text);
        if (at == std::string::npos) continue;
        std::smatch m;
        ASSERT_TRUE(std::regex_search(history, m, p.from))
            << "nothing printed before `" << command << "` fills " << p.text;
        command.replace(at, p.text.size(), m[1].str());
      }
      ProcessOptions options;
      options.timeout = std::chrono::minutes(10);
      options.max_output_bytes = 4 << 20;
      options.working_dir = root.string();
      auto r = run_process({"bash", "-c", "set -o pipefail; " + command}, options);
      ASSERT_TRUE(r.has_value()) << r.error().message;
      ASSERT_TRUE(r->ok()) << "README.md:" << b.line << ": `" << command << "` exited "
                           << r->exit_code << (r->timed_out ? " (timed out)" : "") << "\n"
                           << r->output;
      history += r->output;
      ++ran;
    }
  }
  EXPECT_GE(ran, 1);
  ::unsetenv("KTUNE_CACHE_DIR");
}

}  // namespace
}  // namespace ktune::test
