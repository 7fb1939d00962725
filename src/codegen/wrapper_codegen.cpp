// emit_wrapper: the graph-dependent parts of a generated program (kernels, the run() body, the
// benchmark main), around the fixed snippets of wrapper_snippets.cpp. Building it is in
// wrapper_build.cpp.
#include "ktune/codegen/wrapper_codegen.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>
#include <sstream>

#include "codegen/wrapper_snippets.h"

namespace ktune::codegen {
namespace {

// Code and its comment on one line, the comments aligned where the code allows.
std::string line(const std::string& code, const std::string& comment) {
  constexpr std::size_t kColumn = 58;
  std::string out = "  " + code;
  out += out.size() < kColumn ? std::string(kColumn - out.size(), ' ') : " ";
  return out + " // " + comment + "\n";
}

// A choice name ("matmul_VEC8_..." may hold '-' or '.') as a namespace name.
std::string identifier(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "k_" + out;
  return out;
}

std::string float_literal(double v) {
  std::string s = fmt::format("{:.9g}", v);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s + "f";
}

std::string ints(const std::vector<std::int64_t>& v) {
  return fmt::format("{}", fmt::join(v, ", "));
}

std::string describe(const TensorSpec& t) {
  return fmt::format("{}[{}]", dtype_name(t.dtype), ints(t.sizes));
}

bool is_include(const std::string& l) {
  std::size_t i = l.find_first_not_of(" \t");
  if (i == std::string::npos || l[i] != '#') return false;
  i = l.find_first_not_of(" \t", i + 1);
  return i != std::string::npos && l.compare(i, 7, "include") == 0;
}

bool is_line_directive(const std::string& l) {
  std::size_t i = l.find_first_not_of(" \t");
  return i != std::string::npos && l.compare(i, 5, "#line") == 0;
}

// The kernel's #include lines go to the top of the file (an include inside a namespace would
// put the standard library in it); the rest stays, in order. #line directives go: a fused
// template's "#line 1" after its epilogue's #defines would renumber the rest of the program.
void split_includes(const std::string& code, std::set<std::string>& includes, std::string& body) {
  std::istringstream in(code);
  for (std::string l; std::getline(in, l);) {
    if (is_line_directive(l)) continue;
    if (is_include(l)) {
      includes.insert(l.substr(l.find("include") + 7));
      body += "// " + l + "  (moved to the top of the file)\n";
    } else {
      body += l + "\n";
    }
  }
}

struct Kernel {
  const GemmPick* pick;
  std::vector<std::string> users;
};

// One namespace per distinct template pick, its parameters defined around it and undefined after
// it, so that two configs of one template can live in one file.
std::string emit_kernel(const Kernel& k, std::set<std::string>& includes) {
  const GemmPick& p = *k.pick;
  std::string body;
  split_includes(p.source.code, includes, body);
  std::string out = fmt::format("// ---- Kernel {} ({}), for {}.\nnamespace {} {{\n", p.choice,
                                p.info, fmt::join(k.users, ", "), identifier(p.choice));
  for (const auto& [name, value] : p.source.defines)
    out += fmt::format("#define {} {}\n", name, value);
  out += body;
  for (const auto& [name, value] : p.source.defines) out += fmt::format("#undef {}\n", name);
  return out + fmt::format("}}  // namespace {}\n\n", identifier(p.choice));
}

// The call of step `n` (its output buffer already allocated).
std::string step_call(const GraphNode& n, const std::map<std::string, GemmPick>& picks,
                      const std::map<std::string, TensorSpec>& specs) {
  const TensorSpec& x = specs.at(n.inputs[0]);
  const std::int64_t numel = n.out.numel();
  switch (n.op) {
    case OpKind::kGemm: {
      const GemmPick& p = picks.at(n.name);
      const std::int64_t m = n.out.sizes[0], nn = n.out.sizes[1], k = x.sizes[1];
      if (p.is_extern) {
        return fmt::format("ktune_openblas::gemm({}, {}, {}, {}, {}, {});", n.name, n.inputs[0],
                           n.inputs[1], m, nn, k);
      }
      std::vector<std::string> args;
      for (GemmOperand o : p.operands) {
        switch (o) {
          case GemmOperand::kC:
            args.push_back(n.name);
            break;
          case GemmOperand::kA:
            args.push_back(n.inputs[0]);
            break;
          case GemmOperand::kB:
            args.push_back(n.inputs[1]);
            break;
          case GemmOperand::kM:
            args.push_back(std::to_string(m));
            break;
          case GemmOperand::kN:
            args.push_back(std::to_string(nn));
            break;
          case GemmOperand::kK:
            args.push_back(std::to_string(k));
            break;
        }
      }
      // A fused epilogue's operands follow M, N, K (KTUNE_EPILOGUE_PARAMS).
      args.insert(args.end(), n.inputs.begin() + 2, n.inputs.end());
      return fmt::format("{}::{}({});", identifier(p.choice), p.source.entry,
                         fmt::join(args, ", "));
    }
    case OpKind::kBiasAdd:
      return fmt::format("ktune_bias_add({}, {}, {}, {}, {});", n.name, n.inputs[0], n.inputs[1],
                         x.sizes[0], x.sizes[1]);
    case OpKind::kRowBiasAdd:
      return fmt::format("ktune_row_bias_add({}, {}, {}, {}, {});", n.name, n.inputs[0],
                         n.inputs[1], x.sizes[0], x.sizes[1]);
    case OpKind::kRelu:
      return fmt::format("ktune_relu({}, {}, {});", n.name, n.inputs[0], numel);
    case OpKind::kGelu:
      return fmt::format("ktune_gelu({}, {}, {});", n.name, n.inputs[0], numel);
    case OpKind::kSilu:
      return fmt::format("ktune_silu({}, {}, {});", n.name, n.inputs[0], numel);
    case OpKind::kAdd:
      return fmt::format("ktune_add({}, {}, {}, {});", n.name, n.inputs[0], n.inputs[1], numel);
    case OpKind::kScale:
      return fmt::format("ktune_scale({}, {}, {}, {});", n.name, n.inputs[0],
                         float_literal(n.alpha), numel);
    case OpKind::kTranspose:
      return fmt::format("ktune_transpose({}, {}, {}, {});", n.name, n.inputs[0], x.sizes[0],
                         x.sizes[1]);
    case OpKind::kRowSoftmax:
      return fmt::format("ktune_row_softmax({}, {}, {}, {});", n.name, n.inputs[0], x.sizes[0],
                         x.sizes[1]);
    case OpKind::kRowSum:
      return fmt::format("ktune_row_sum({}, {}, {}, {});", n.name, n.inputs[0], x.sizes[0],
                         x.sizes[1]);
    case OpKind::kLayerNorm:
      return fmt::format("ktune_layer_norm({}, {}, {}, {}, {}, {}, {});", n.name, n.inputs[0],
                         n.inputs[1], n.inputs[2], float_literal(n.eps), x.sizes[0], x.sizes[1]);
  }
  return "";
}

std::string step_comment(const GraphNode& n) {
  std::string c = fmt::format("{} = {}({})", n.name, op_name(n.op), fmt::join(n.inputs, ", "));
  if (n.op == OpKind::kScale) c += fmt::format(" * {}", float_literal(n.alpha));
  return c;
}

// A fused call's comment names the graph's nodes it computes, as they read in the graph.
std::string step_comment(const FusedGraph& fg, const GraphNode& n) {
  auto it = fg.fused_nodes.find(n.name);
  if (it == fg.fused_nodes.end()) return step_comment(n);
  std::vector<std::string> steps;
  for (const GraphNode& f : it->second) steps.push_back(step_comment(f));
  return fmt::format("fused: {}", fmt::join(steps, "; "));
}

// The run() body: input checks, then the plan's lines, then the outputs.
std::string emit_run(const FusedGraph& fg, const MemoryPlan& plan, bool uses_openblas) {
  const Graph& g = fg.graph;
  const std::string fn = g.name + "_run";
  std::map<std::string, TensorSpec> specs;
  for (const GraphInput& in : g.inputs) specs.emplace(in.name, in.spec);
  for (const GraphNode& n : g.nodes) specs.emplace(n.name, n.out);

  std::string out = "// ---- The graph, one line per step.\n";
  out += fmt::format(
      "extern \"C\" int {}(const KtuneTensor* inputs, int num_inputs, KtuneTensor* outputs,\n"
      "{}int num_outputs) {{\n",
      fn, std::string(fn.size() + 16, ' '));
  out += fmt::format("  const char* where = \"{}\";\n", fn);
  out += fmt::format(
      "  if (num_inputs != {0} || num_outputs != {1}) {{\n"
      "    std::fprintf(stderr, \"error: %s: expected {0} inputs and {1} outputs; got %d and "
      "%d\\n\",\n"
      "                 where, num_inputs, num_outputs);\n"
      "    return 1;\n  }}\n",
      g.inputs.size(), g.outputs.size());
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const GraphInput& in = g.inputs[i];
    out += fmt::format("  if (!ktune_check(where, inputs[{}], \"{}\", {{{}}}, {{{}}})) return 1;\n",
                       i, in.name, ints(in.spec.sizes), ints(in.spec.strides));
  }
  if (uses_openblas) {
    out +=
        "  if (ktune_openblas::sgemm() == nullptr) {\n"
        "    std::fprintf(stderr, \"error: %s: cannot open OpenBLAS (libopenblas.so.0)\\n\", "
        "where);\n    return 2;\n  }\n";
  }
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    out += fmt::format("  const float* {} = static_cast<const float*>(inputs[{}].data);\n",
                       g.inputs[i].name, i);
  }
  if (plan.arena_bytes > 0) {
    out +=
        line(fmt::format("std::byte* ktune_arena = ktune_alloc<std::byte>({});", plan.arena_bytes),
             "every buffer, at the offsets of the plan");
  }
  for (const PlanLine& l : plan.lines) {
    const GraphNode& b = g.nodes[l.buffer];
    const BufferPlacement& p = plan.placements[l.buffer];
    switch (l.kind) {
      case PlanLine::Kind::kAllocate:
        if (p.in_arena) {
          out += line(fmt::format("float* {} = reinterpret_cast<float*>(ktune_arena + {});", b.name,
                                  p.offset),
                      fmt::format("{}, arena bytes [{}, {})", describe(b.out), p.offset,
                                  p.offset + p.bytes));
        } else {
          out += line(fmt::format("float* {} = ktune_alloc<float>({});", b.name, p.bytes),
                      describe(b.out));
        }
        break;
      case PlanLine::Kind::kReuse:
        out += line(fmt::format("float* {} = {};", b.name, g.nodes[l.from].name),
                    fmt::format("{}, reuses {} (dead, same dtype and {} bytes)", describe(b.out),
                                g.nodes[l.from].name, p.bytes));
        break;
      case PlanLine::Kind::kRun: {
        const GraphNode& n = g.nodes[l.step];
        out += line(step_call(n, fg.picks, specs), step_comment(fg, n));
        break;
      }
      case PlanLine::Kind::kFree:
        out += line(fmt::format("std::free({});", b.name), fmt::format("{} is dead", b.name));
        break;
    }
  }
  const bool arena = plan.planner == Planner::kArena && plan.arena_bytes > 0;
  if (arena && plan.arena_output_bytes < plan.arena_bytes) {
    out += fmt::format(
        "  // The outputs are the arena's first {} bytes: keep only them.\n"
        "  if (void* p = std::realloc(ktune_arena, {})) ktune_arena = "
        "static_cast<std::byte*>(p);\n",
        plan.arena_output_bytes, plan.arena_output_bytes);
  }
  for (std::size_t i = 0; i < g.outputs.size(); ++i) {
    const TensorSpec& t = specs.at(g.outputs[i]);
    std::string data = g.outputs[i];
    for (std::size_t b = 0; b < g.nodes.size(); ++b) {
      if (arena && g.nodes[b].name == g.outputs[i]) {
        data = fmt::format("ktune_arena + {}", plan.placements[b].offset);
      }
    }
    out += fmt::format("  outputs[{}] = ktune_tensor({}, {{{}}}, {{{}}});\n", i, data,
                       ints(t.sizes), ints(t.strides));
  }
  out += "  return 0;\n}\n\n";
  if (arena) {
    out += fmt::format(
        "// Frees the outputs of {0}: one allocation, the shrunk arena, which starts at "
        "outputs[0].\n"
        "extern \"C\" void {1}_free_outputs(KtuneTensor* outputs, int num_outputs) {{\n"
        "  if (num_outputs > 0) std::free(outputs[0].data);\n}}\n\n",
        fn, g.name);
  } else {
    out += fmt::format(
        "// Frees the outputs of {0}.\n"
        "extern \"C\" void {1}_free_outputs(KtuneTensor* outputs, int num_outputs) {{\n"
        "  for (int i = 0; i < num_outputs; ++i) std::free(outputs[i].data);\n}}\n\n",
        fn, g.name);
  }
  return out;
}

std::string emit_main(const Graph& g) {
  std::string out = "#ifdef KTUNE_BENCHMARK_MAIN\n";
  out += detail::benchmark_usage(g.name);
  out += detail::benchmark_main_args();
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const GraphInput& in = g.inputs[i];
    out += fmt::format("  std::vector<float> {}({});\n", in.name, in.spec.numel());
    out += fmt::format("  ktune_random_fill({}, seed + {});\n", in.name, i);
  }
  out += fmt::format("  const KtuneTensor inputs[{}] = {{\n", g.inputs.size());
  for (const GraphInput& in : g.inputs) {
    out += fmt::format("      ktune_tensor({}.data(), {{{}}}, {{{}}}),\n", in.name,
                       ints(in.spec.sizes), ints(in.spec.strides));
  }
  out += "  };\n";
  out += fmt::format("  KtuneTensor outputs[{}];\n", g.outputs.size());
  out += fmt::format(
      "  double checksum = 0;\n"
      "  std::vector<double> ms;\n"
      "  for (int r = -3; r < runs; ++r) {{  // three warm-up runs first\n"
      "    const auto t0 = std::chrono::steady_clock::now();\n"
      "    if (int rc = {0}_run(inputs, {1}, outputs, {2}); rc != 0) return rc;\n"
      "    const auto t1 = std::chrono::steady_clock::now();\n"
      "    if (r >= 0) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());\n"
      "    checksum = 0;\n"
      "    for (KtuneTensor& o : outputs) {{\n"
      "      std::int64_t n = 1;\n"
      "      for (int d = 0; d < o.ndim; ++d) n *= o.sizes[d];\n"
      "      for (std::int64_t e = 0; e < n; ++e) checksum += static_cast<float*>(o.data)[e];\n"
      "    }}\n"
      "    {0}_free_outputs(outputs, {2});\n"
      "  }}\n"
      "  if (ms.empty()) return 0;\n"
      "  std::printf(\"{0}: median %.4f ms over %zu runs (seed %llu, output checksum %.6g)\\n\",\n"
      "              ktune_median_ms(ms), ms.size(), static_cast<unsigned long long>(seed),\n"
      "              checksum);\n"
      "  return 0;\n}}\n#endif\n",
      g.name, g.inputs.size(), g.outputs.size());
  return out;
}

}  // namespace

PlanInput plan_input(const Graph& g) {
  PlanInput in;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const GraphNode& n = g.nodes[i];
    PlanBuffer b;
    b.name = n.name;
    b.device = n.out.device;
    b.dtype = n.out.dtype;
    b.bytes = n.out.storage_bytes();
    for (const std::string& o : g.outputs) b.is_output = b.is_output || o == n.name;
    in.buffers.push_back(b);
    PlanStep step;
    step.writes = i;
    for (const std::string& x : n.inputs) {
      if (auto it = index.find(x); it != index.end()) step.reads.push_back(it->second);
    }
    in.steps.push_back(std::move(step));
    index.emplace(n.name, i);
  }
  return in;
}

Result<Wrapper> emit_wrapper(const Graph& graph, const std::map<std::string, GemmPick>& picks,
                             Planner planner) {
  auto fused = apply_fusions(graph, picks);
  if (!fused) return std::unexpected(fused.error());
  const Graph& g = fused->graph;
  Wrapper w;
  auto plan = plan_memory(plan_input(g), planner);
  if (!plan) return std::unexpected(plan.error());
  w.plan = std::move(*plan);

  std::vector<Kernel> kernels;  // distinct template picks in order of first use
  bool uses_openblas = false;
  std::set<OpKind> ops;
  for (const GraphNode& n : g.nodes) {
    ops.insert(n.op);
    if (n.op != OpKind::kGemm) continue;
    auto it = fused->picks.find(n.name);
    if (it == fused->picks.end()) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("{}: gemm '{}' has no pick", g.file.string(), n.name));
    }
    if (it->second.is_extern) {
      uses_openblas = true;
      continue;
    }
    auto k = std::find_if(kernels.begin(), kernels.end(),
                          [&](const Kernel& x) { return x.pick->choice == it->second.choice; });
    if (k == kernels.end()) {
      kernels.push_back({&it->second, {}});
      k = kernels.end() - 1;
      for (const std::string& f : it->second.source.extra_flags) {
        if (std::find(w.flags.begin(), w.flags.end(), f) == w.flags.end()) w.flags.push_back(f);
      }
    }
    k->users.push_back(it->second.chain.empty() || it->second.fused.empty() ? n.name
                                                                            : it->second.chain);
  }

  std::set<std::string> includes;
  for (std::string_view i : detail::kWrapperIncludes) includes.insert(fmt::format(" {}", i));
  if (uses_openblas) includes.insert(" <dlfcn.h>");
  std::string kernel_text;
  for (const Kernel& k : kernels) kernel_text += emit_kernel(k, includes);
  std::string op_text;
  for (OpKind op : ops) {
    if (op != OpKind::kGemm) op_text += fmt::format("{}\n", detail::op_snippet(op));
  }

  const std::string cflags =
      fmt::format("{}{}", w.flags.empty() ? "" : " ", fmt::join(w.flags, " "));
  std::string& s = w.source;
  s += fmt::format("// {}.cpp: generated by `ktune compile` from graph '{}' ({}).\n", g.name,
                   g.name, g.file.filename().string());
  s += "// Do not edit: change the graph and compile again.\n//\n";
  s += fmt::format("// Memory plan: {}; peak {} bytes in {} allocation(s), lower bound {} bytes.\n",
                   planner_name(planner), w.plan.peak_bytes, w.plan.blocks,
                   w.plan.lower_bound_bytes);
  s += "// Build (what ktune compile runs):\n";
  s += fmt::format("//   c++ -O3 -march=native -std=c++17{} -fPIC -shared {}.cpp -o lib{}.so\n",
                   cflags, g.name, g.name);
  s += fmt::format(
      "//   c++ -O3 -march=native -std=c++17{} -DKTUNE_BENCHMARK_MAIN {}.cpp -ldl -o {}\n", cflags,
      g.name, g.name);
  for (const std::string& i : includes) s += fmt::format("#include{}\n", i);
  s += fmt::format("\n{}\n", detail::runtime_snippet());
  s += kernel_text;
  if (uses_openblas) s += fmt::format("{}\n", detail::openblas_snippet());
  if (!op_text.empty())
    s += fmt::format("// ---- Pointwise and row kernels: plain loops.\n{}", op_text);
  s += emit_run(*fused, w.plan, uses_openblas);
  s += detail::benchmark_snippet();
  s += fmt::format("\n{}", emit_main(g));
  return w;
}

}  // namespace ktune::codegen
