// Random restrictions for the space tests: expressions over parameters A, B, C (integers), S (a
// string parameter) and constants K, F, Z, using every operator and function the restriction
// language has, with and without parentheses. Some are not restrictions (muparser refuses !!x, a
// string compared outside ==); the tests skip those.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <random>
#include <string>

namespace ktune::test {

class RestrictionGenerator {
 public:
  explicit RestrictionGenerator(unsigned seed) : rng_(seed) {}
  std::string expr(int depth) {
    if (depth == 0 || pick(10) < 2) return leaf();
    switch (pick(9)) {
      case 0:
        return cat({"-", expr(depth - 1)});
      case 1:
        return cat({"!", expr(depth - 1)});
      case 2:
        return cat({"(", expr(depth - 1), ")"});
      case 3:
        return cat({expr(depth - 1), " ? ", expr(depth - 1), " : ", expr(depth - 1)});
      case 4: {
        static const char* const kFuns[] = {"abs", "floor", "ceil"};
        return cat({kFuns[pick(3)], "(", expr(depth - 1), ")"});
      }
      case 5: {
        static const char* const kFuns[] = {"min", "max", "ceil_div"};
        const std::string f = kFuns[pick(3)];
        std::string out = cat({f, "(", expr(depth - 1), ", ", expr(depth - 1)});
        if (f[0] == 'm' && pick(2) == 0) out = cat({out, ", ", expr(depth - 1)});
        return cat({out, ")"});
      }
      default: {
        static const char* const kOps[] = {"+",  "-", "*",  "/",  "%",  "^",  "<",
                                           "<=", ">", ">=", "==", "!=", "&&", "||"};
        return cat({expr(depth - 1), " ", kOps[pick(14)], " ", expr(depth - 1)});
      }
    }
  }

 private:
  std::string leaf() {
    static const char* const kLeaves[] = {"A",
                                          "B",
                                          "C",
                                          "K",
                                          "F",
                                          "Z",
                                          "0",
                                          "1",
                                          "2",
                                          "3",
                                          "0.5",
                                          "1e1",
                                          ".25",
                                          "2.5",
                                          "A",
                                          "B",
                                          "(S == \"x\")",
                                          "(S != 'y')"};
    return kLeaves[pick(18)];
  }
  // Appends (g++ 12 warns falsely of overlapping copies in `"x" + std::string`).
  static std::string cat(std::initializer_list<std::string> parts) {
    std::string out;
    for (const std::string& p : parts) out.append(p);
    return out;
  }
  std::size_t pick(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }
  std::mt19937 rng_;
};

}  // namespace ktune::test
