// The plain driver of a fuzz target (no AFL needed): runs LLVMFuzzerTestOneInput on every file
// named (folders recursively, in name order), then on `--mutations N` inputs mutated from them
// with a fixed seed, so that CI runs the same inputs every time. Each input must end within
// `--timeout` seconds; a crash, an abort or a timeout ends the process with the input saved to
// `--save-crash PATH` (when given), so that the failure can be replayed: `fuzz_spec PATH`.
// With no file it reads one input from stdin. Under afl-fuzz with classic instrumentation this is
// the target's main too (`fuzz_spec @@`: one file, no mutations).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_target.h"

namespace {

using Bytes = std::vector<std::uint8_t>;

// What the signal handlers need: the input under way and where to save it.
const Bytes* g_current = nullptr;
const char* g_save_path = nullptr;
const char* g_current_name = "";

void write_str(const char* s) { (void)!::write(2, s, std::strlen(s)); }

void save_current() {
  if (g_save_path == nullptr || g_current == nullptr) return;
  const int fd = ::open(g_save_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  (void)!::write(fd, g_current->data(), g_current->size());
  ::close(fd);
  write_str("fuzz: input saved to ");
  write_str(g_save_path);
  write_str("\n");
}

// Async-signal-safe: write, open, close, signal and raise only.
void on_fatal(int sig) {
  write_str(sig == SIGALRM ? "fuzz: input timed out: " : "fuzz: input crashed: ");
  write_str(g_current_name);
  write_str("\n");
  save_current();
  const int again = sig == SIGALRM ? SIGABRT : sig;
  ::signal(again, SIG_DFL);
  ::raise(again);
}

bool read_all(std::istream& in, Bytes& out) {
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

// Tokens of the formats and of ktune's schemas, inserted whole: byte flips alone rarely make
// a key the reader knows or a number at a boundary.
constexpr std::string_view kTokens[] = {"{",
                                        "}",
                                        "[",
                                        "]",
                                        ": ",
                                        ", ",
                                        "\n- ",
                                        "\n  ",
                                        "&a ",
                                        "*a",
                                        "!!str ",
                                        "<<: ",
                                        "? ",
                                        "|\n",
                                        "\"",
                                        "'",
                                        "#",
                                        "null",
                                        "true",
                                        "~",
                                        "-1",
                                        "0",
                                        "1e308",
                                        "-1e308",
                                        "nan",
                                        ".inf",
                                        "-.inf",
                                        "9223372036854775807",
                                        "18446744073709551616",
                                        "-9223372036854775808",
                                        "4294967296",
                                        "\"type\":",
                                        "\"request\"",
                                        "\"response\"",
                                        "\"pong\"",
                                        "\"ping\"",
                                        "\"problem\":",
                                        "\"args\":",
                                        "\"sizes\":",
                                        "\"strides\":",
                                        "\"offset\":",
                                        "\"dtype\":",
                                        "\"f32\"",
                                        "\"stats\":",
                                        "\"samples\":",
                                        "\"outcome\":",
                                        "\"launch\":",
                                        "\"then\":",
                                        "\"bench\":",
                                        "shape: ",
                                        "strides: ",
                                        "offset: ",
                                        "value: ",
                                        "params: ",
                                        "restrictions: ",
                                        "problems: ",
                                        "args: ",
                                        "epilogue: ",
                                        "op: ",
                                        "inputs: ",
                                        "nodes: ",
                                        "outputs: ",
                                        "alpha: ",
                                        "role: ",
                                        "dtype: ",
                                        "M",
                                        "N",
                                        "K",
                                        "TILE_M",
                                        "*",
                                        "/",
                                        "%",
                                        "^",
                                        "?",
                                        "&&",
                                        "||",
                                        "!",
                                        "==",
                                        "(",
                                        ")",
                                        "min(",
                                        "ceil(",
                                        "floor(",
                                        "1/0",
                                        "0/0",
                                        std::string_view("\x10\0\0\0", 4)};

class Mutator {
 public:
  Mutator(std::uint64_t seed, std::size_t max_len) : rng_(seed), max_len_(max_len) {}

  Bytes mutate(const std::vector<Bytes>& corpus) {
    Bytes b = corpus[pick(corpus.size())];
    const std::size_t ops = 1 + pick(4);
    for (std::size_t i = 0; i < ops; ++i) apply(b, corpus);
    if (b.size() > max_len_) b.resize(max_len_);
    return b;
  }

 private:
  std::size_t pick(std::size_t n) {
    return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }

  void insert(Bytes& b, std::string_view s) {
    const std::size_t at = pick(b.size() + 1);
    b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), s.begin(), s.end());
  }

  void apply(Bytes& b, const std::vector<Bytes>& corpus) {
    switch (pick(b.empty() ? 2 : 7)) {
      case 0:
        insert(b, kTokens[pick(std::size(kTokens))]);
        break;
      case 1: {  // random bytes
        std::string s(1 + pick(8), '\0');
        for (char& c : s) c = static_cast<char>(pick(256));
        insert(b, s);
        break;
      }
      case 2:
        b[pick(b.size())] ^= static_cast<std::uint8_t>(1u << pick(8));
        break;
      case 3:
        b[pick(b.size())] = static_cast<std::uint8_t>(pick(256));
        break;
      case 4: {  // delete a range
        const std::size_t at = pick(b.size());
        const std::size_t n = 1 + pick(std::min<std::size_t>(b.size() - at, 32));
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(at),
                b.begin() + static_cast<std::ptrdiff_t>(at + n));
        break;
      }
      case 5: {  // duplicate a range somewhere else (nesting, repeated keys)
        const std::size_t at = pick(b.size());
        const std::size_t n = 1 + pick(std::min<std::size_t>(b.size() - at, 64));
        const Bytes chunk(b.begin() + static_cast<std::ptrdiff_t>(at),
                          b.begin() + static_cast<std::ptrdiff_t>(at + n));
        insert(b, std::string_view(reinterpret_cast<const char*>(chunk.data()), chunk.size()));
        break;
      }
      default: {  // splice: this input's head, another's tail
        const Bytes& other = corpus[pick(corpus.size())];
        const std::size_t cut = pick(b.size() + 1);
        const std::size_t from = pick(other.size() + 1);
        b.resize(cut);
        b.insert(b.end(), other.begin() + static_cast<std::ptrdiff_t>(from), other.end());
        break;
      }
    }
  }

  std::mt19937_64 rng_;
  std::size_t max_len_;
};

struct Input {
  std::string name;
  Bytes bytes;
};

bool collect(const std::filesystem::path& path, std::vector<Input>& out) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(path, ec)) {
      if (e.is_regular_file()) files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    Input input{f.string(), {}};
    if (!in || !read_all(in, input.bytes)) {
      std::cerr << "fuzz: cannot read " << f << "\n";
      return false;
    }
    out.push_back(std::move(input));
  }
  return true;
}

void run(const Input& input, unsigned timeout_s) {
  g_current = &input.bytes;
  g_current_name = input.name.c_str();
  ::alarm(timeout_s);
  (void)LLVMFuzzerTestOneInput(input.bytes.data(), input.bytes.size());
  ::alarm(0);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Input> inputs;
  std::uint64_t mutations = 0;
  std::uint64_t seed = 1;
  std::size_t max_len = 1 << 16;
  unsigned timeout_s = 10;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--mutations" && has_value) {
      mutations = std::stoull(argv[++i]);
    } else if (arg == "--seed" && has_value) {
      seed = std::stoull(argv[++i]);
    } else if (arg == "--max-len" && has_value) {
      max_len = std::stoull(argv[++i]);
    } else if (arg == "--timeout" && has_value) {
      timeout_s = static_cast<unsigned>(std::stoul(argv[++i]));
    } else if (arg == "--save-crash" && has_value) {
      g_save_path = argv[++i];
    } else if (arg.starts_with("--")) {
      std::cerr << "usage: " << argv[0]
                << " [--mutations N] [--seed S] [--max-len BYTES] [--timeout SECONDS]"
                   " [--save-crash PATH] [FILE|DIR]...\n";
      return 2;
    } else if (!collect(argv[i], inputs)) {
      return 2;
    }
  }
  if (argc == 1 || (inputs.empty() && mutations == 0)) {
    Input in{"<stdin>", {}};
    if (!read_all(std::cin, in.bytes)) return 2;
    inputs.push_back(std::move(in));
  }
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM}) ::signal(sig, on_fatal);

  const auto t0 = std::chrono::steady_clock::now();
  for (const Input& in : inputs) run(in, timeout_s);
  if (mutations > 0 && !inputs.empty()) {
    std::vector<Bytes> corpus;
    corpus.reserve(inputs.size());
    for (const Input& in : inputs) corpus.push_back(in.bytes);
    Mutator mutator(seed, max_len);
    Input m;
    for (std::uint64_t i = 0; i < mutations; ++i) {
      m.name = "mutation " + std::to_string(i) + " (seed " + std::to_string(seed) + ")";
      m.bytes = mutator.mutate(corpus);
      run(m, timeout_s);
    }
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (inputs.size() > 1 || mutations > 0) {
    std::cout << argv[0] << ": " << inputs.size() << " file input(s) and " << mutations
              << " mutation(s) (seed " << seed << ") ended in " << s << " s\n";
  }
  return 0;
}
