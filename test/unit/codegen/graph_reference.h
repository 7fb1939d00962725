// Test helpers for generated programs: a naive double-precision evaluation of a graph (the
// trusted reference), seeded inputs, and running a built lib<graph>.so through dlopen.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ktune/codegen/graph.h"

namespace ktune::test {

using Values = std::map<std::string, std::vector<double>>;

inline Values seeded_inputs(const codegen::Graph& g, std::uint64_t seed) {
  Values v;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (const auto& in : g.inputs) {
    auto& x = v[in.name];
    x.resize(in.spec.numel());
    for (double& e : x) e = static_cast<float>(dist(rng));  // exactly representable as f32
  }
  return v;
}

// Every node's value, computed with plain loops in double precision.
inline Values reference_eval(const codegen::Graph& g, Values v) {
  using codegen::OpKind;
  std::map<std::string, std::vector<std::int64_t>> shape;
  for (const auto& in : g.inputs) shape[in.name] = in.spec.sizes;
  for (const auto& n : g.nodes) {
    const auto& x = v[n.inputs[0]];
    const auto& xs = shape[n.inputs[0]];
    std::vector<double> y(n.out.numel());
    const std::int64_t rows = xs.size() == 2 ? xs[0] : 1, cols = xs.back();
    switch (n.op) {
      case OpKind::kGemm: {
        const auto& b = v[n.inputs[1]];
        const std::int64_t m = n.out.sizes[0], nn = n.out.sizes[1], k = xs[1];
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t j = 0; j < nn; ++j) {
            double s = 0;
            for (std::int64_t p = 0; p < k; ++p) s += x[i * k + p] * b[p * nn + j];
            y[i * nn + j] = s;
          }
        break;
      }
      case OpKind::kBiasAdd:
        for (std::int64_t i = 0; i < rows; ++i)
          for (std::int64_t j = 0; j < cols; ++j)
            y[i * cols + j] = x[i * cols + j] + v[n.inputs[1]][j];
        break;
      case OpKind::kRelu:
        for (std::size_t i = 0; i < y.size(); ++i) y[i] = x[i] > 0 ? x[i] : 0;
        break;
      case OpKind::kGelu:
        for (std::size_t i = 0; i < y.size(); ++i)
          y[i] = 0.5 * x[i] * (1 + std::erf(x[i] / std::sqrt(2.0)));
        break;
      case OpKind::kRowBiasAdd:
        for (std::int64_t i = 0; i < rows; ++i)
          for (std::int64_t j = 0; j < cols; ++j)
            y[i * cols + j] = x[i * cols + j] + v[n.inputs[1]][i];
        break;
      case OpKind::kSilu:
        for (std::size_t i = 0; i < y.size(); ++i) y[i] = x[i] / (1 + std::exp(-x[i]));
        break;
      case OpKind::kAdd:
        for (std::size_t i = 0; i < y.size(); ++i) y[i] = x[i] + v[n.inputs[1]][i];
        break;
      case OpKind::kScale:
        for (std::size_t i = 0; i < y.size(); ++i) y[i] = n.alpha * x[i];
        break;
      case OpKind::kTranspose:
        for (std::int64_t i = 0; i < rows; ++i)
          for (std::int64_t j = 0; j < cols; ++j) y[j * rows + i] = x[i * cols + j];
        break;
      case OpKind::kRowSoftmax:
        for (std::int64_t i = 0; i < rows; ++i) {
          double mx = x[i * cols], sum = 0;
          for (std::int64_t j = 0; j < cols; ++j) mx = std::max(mx, x[i * cols + j]);
          for (std::int64_t j = 0; j < cols; ++j) sum += std::exp(x[i * cols + j] - mx);
          for (std::int64_t j = 0; j < cols; ++j)
            y[i * cols + j] = std::exp(x[i * cols + j] - mx) / sum;
        }
        break;
      case OpKind::kRowSum:
        for (std::int64_t i = 0; i < rows; ++i) {
          double s = 0;
          for (std::int64_t j = 0; j < cols; ++j) s += x[i * cols + j];
          y[i] = s;
        }
        break;
      case OpKind::kLayerNorm: {
        const auto& gamma = v[n.inputs[1]];
        const auto& beta = v[n.inputs[2]];
        for (std::int64_t i = 0; i < rows; ++i) {
          double mean = 0, var = 0;
          for (std::int64_t j = 0; j < cols; ++j) mean += x[i * cols + j];
          mean /= static_cast<double>(cols);
          for (std::int64_t j = 0; j < cols; ++j) {
            const double d = x[i * cols + j] - mean;
            var += d * d;
          }
          var /= static_cast<double>(cols);  // biased, as PyTorch's layer_norm
          for (std::int64_t j = 0; j < cols; ++j) {
            y[i * cols + j] = (x[i * cols + j] - mean) / std::sqrt(var + n.eps) *
                                  gamma[static_cast<std::size_t>(j)] +
                              beta[static_cast<std::size_t>(j)];
          }
        }
        break;
      }
    }
    v[n.name] = std::move(y);
    shape[n.name] = n.out.sizes;
  }
  return v;
}

// As the generated program declares it.
struct KtuneTensor {
  void* data;
  int ndim;
  std::int64_t sizes[8];
  std::int64_t strides[8];
};

inline KtuneTensor make_tensor(void* data, const TensorSpec& t) {
  KtuneTensor k{data, static_cast<int>(t.sizes.size()), {}, {}};
  for (std::size_t i = 0; i < t.sizes.size(); ++i) {
    k.sizes[i] = t.sizes[i];
    k.strides[i] = t.strides[i];
  }
  return k;
}

// Runs <graph>_run from `library` on `inputs` and checks every output against the reference
// (relative to the output's largest magnitude, 1e-4: f32 accumulation over K <= 512).
inline void expect_matches_reference(const codegen::Graph& g, const std::filesystem::path& library,
                                     std::uint64_t seed) {
  void* lib = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << ::dlerror();
  using RunFn = int (*)(const KtuneTensor*, int, KtuneTensor*, int);
  using FreeFn = void (*)(KtuneTensor*, int);
  auto run = reinterpret_cast<RunFn>(::dlsym(lib, (g.name + "_run").c_str()));
  auto free_fn = reinterpret_cast<FreeFn>(::dlsym(lib, (g.name + "_free_outputs").c_str()));
  ASSERT_NE(run, nullptr);
  ASSERT_NE(free_fn, nullptr);

  Values in = seeded_inputs(g, seed);
  std::vector<std::vector<float>> data;
  std::vector<KtuneTensor> inputs;
  for (const auto& x : g.inputs) data.emplace_back(in[x.name].begin(), in[x.name].end());
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    inputs.push_back(make_tensor(data[i].data(), g.inputs[i].spec));
  }
  std::vector<KtuneTensor> outputs(g.outputs.size());
  ASSERT_EQ(run(inputs.data(), static_cast<int>(inputs.size()), outputs.data(),
                static_cast<int>(outputs.size())),
            0);
  Values want = reference_eval(g, in);
  for (std::size_t o = 0; o < g.outputs.size(); ++o) {
    const auto& ref = want[g.outputs[o]];
    double scale = 1e-6;
    for (double e : ref) scale = std::max(scale, std::abs(e));
    const float* got = static_cast<const float*>(outputs[o].data);
    int bad = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      if (std::abs(got[i] - ref[i]) > 1e-4 * scale && ++bad <= 3) {
        ADD_FAILURE() << g.outputs[o] << "[" << i << "]: got " << got[i] << ", want " << ref[i];
      }
    }
    EXPECT_EQ(bad, 0) << "of " << ref.size() << " elements of " << g.outputs[o];
  }
  free_fn(outputs.data(), static_cast<int>(outputs.size()));
  // A wrong input shape is refused before anything runs.
  inputs[0].sizes[0] += 1;
  EXPECT_EQ(run(inputs.data(), static_cast<int>(inputs.size()), outputs.data(),
                static_cast<int>(outputs.size())),
            1);
  ::dlclose(lib);
}

}  // namespace ktune::test
