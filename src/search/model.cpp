// The model strategy: Bayesian optimisation with a Gaussian process (Eigen for the linear
// algebra) on the candidates' coordinates, expected improvement as the acquisition.
#include <Eigen/Cholesky>
#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

#include "search/space_index.h"
#include "search/strategies.h"

namespace ktune::search_detail {
namespace {

// The model sees at most this many observations (the fastest half and the most recent half):
// a Gaussian process costs n^3 to fit and n^2 per scored candidate, and the region that matters
// is near the fastest ones. Scored per pick: every unproposed candidate up to kPool, else a
// random kPool of them plus the unproposed neighbours of the fastest few.
constexpr std::size_t kMaxTrain = 128;
constexpr std::size_t kPool = 512;
constexpr std::size_t kNearBest = 4;
// Every kLocalEvery-th model pick is the best expected improvement among the unproposed
// neighbours of the fastest candidate so far (a trust region of one step), the others among the
// pool. Global expected improvement alone finds the fastest basin early and then keeps spending
// on uncertain far regions while the last few percent sit one parameter away from the incumbent;
// half the picks local measured best on the recorded spaces (docs/benchmarks.md).
constexpr std::size_t kLocalEvery = 2;

// Matérn 5/2 on coordinates scaled to [0, 1] per parameter (value index / (values - 1)): a
// common kernel in Bayesian optimisation, less smooth than the RBF, as run times over a space are.
double matern52(const Eigen::VectorXd& a, const Eigen::VectorXd& b, double length) {
  const double r = std::sqrt(5.0) * (a - b).norm() / length;
  return (1.0 + r + r * r / 3.0) * std::exp(-r);
}

class Model final : public Strategy {
 public:
  Model(const CandidateSpace& space, std::uint64_t seed)
      : index_(space, seed), initial_(std::max<std::size_t>(5, space.dims.size() + 1)) {}

  std::vector<std::size_t> propose(std::size_t n) override {
    std::vector<std::size_t> out;
    index_.take_library(n, out);
    // A random start of max(5, d + 1) points: enough for a slope per parameter. With 2 (d + 1)
    // (150 seeds, docs/benchmarks.md's spaces): cpu_matmul 32.5 and cuda_gemm 29 evaluations
    // instead of 26.5 and 24, cpu_conv2d 41 instead of 44.
    while (out.size() < n && observed_.size() + pending_ < initial_) {
      auto r = index_.random_unproposed();
      if (!r) return out;
      take(*r, out);
    }
    if (out.size() == n || index_.remaining() == 0) return out;
    fit();
    while (out.size() < n) {
      auto pick = best_expected_improvement();
      if (!pick) pick = index_.random_unproposed();
      if (!pick) break;
      take(*pick, out);
      // Kriging believer: the pick joins the model at its predicted value, so that the rest of
      // the batch goes elsewhere.
      if (out.size() < n && !index_.space().coords[*pick].empty()) {
        train_x_.push_back(features(*pick));
        train_y_.push_back(predict(train_x_.back()).first);
        solve();
      }
    }
    return out;
  }

  void observe(std::size_t i, std::optional<double> time_ns) override {
    if (index_.space().coords[i].empty()) return;
    if (pending_ > 0) --pending_;
    observed_.emplace_back(
        time_ns && *time_ns > 0 ? std::log(*time_ns) : std::numeric_limits<double>::infinity(), i);
    if (!best_ || observed_.back().first < best_time_) {
      best_ = i;
      best_time_ = observed_.back().first;
    }
  }

 private:
  void take(std::size_t i, std::vector<std::size_t>& out) {
    index_.take(i, out);
    if (!index_.space().coords[i].empty()) ++pending_;
  }

  Eigen::VectorXd features(std::size_t i) const {
    const auto& c = index_.space().coords[i];
    Eigen::VectorXd x(static_cast<Eigen::Index>(c.size()));
    for (std::size_t p = 0; p < c.size(); ++p) {
      const std::size_t dim = index_.space().dims[p];
      x[static_cast<Eigen::Index>(p)] = dim > 1 ? double(c[p]) / double(dim - 1) : 0.0;
    }
    return x;
  }

  // The training set, standardised: failures get the slowest finite log time plus one spread
  // (bad, but not so far off that they distort the fit); then the hyperparameters.
  void fit() {
    std::vector<std::pair<double, std::size_t>> finite, failed;
    for (const auto& o : observed_) (std::isfinite(o.first) ? finite : failed).push_back(o);
    double mean = 0, var = 0;
    for (const auto& o : finite) mean += o.first;
    mean = finite.empty() ? 0 : mean / double(finite.size());
    for (const auto& o : finite) var += (o.first - mean) * (o.first - mean);
    const double sd = finite.size() > 1 ? std::sqrt(var / double(finite.size() - 1)) : 1.0;
    double worst = mean;
    for (const auto& o : finite) worst = std::max(worst, o.first);
    std::vector<std::pair<double, std::size_t>> pts = observed_;
    for (auto& p : pts) {
      if (!std::isfinite(p.first)) p.first = worst + sd;
    }
    if (pts.size() > kMaxTrain) {  // the most recent half, then the fastest of the rest
      std::vector<std::pair<double, std::size_t>> keep(pts.end() - kMaxTrain / 2, pts.end());
      pts.resize(pts.size() - kMaxTrain / 2);
      std::partial_sort(pts.begin(), pts.begin() + kMaxTrain / 2, pts.end());
      keep.insert(keep.end(), pts.begin(), pts.begin() + kMaxTrain / 2);
      pts = std::move(keep);
    }
    y_mean_ = mean;
    y_sd_ = sd > 0 ? sd : 1.0;
    train_x_.clear();
    train_y_.clear();
    best_y_ = std::numeric_limits<double>::infinity();
    for (const auto& p : pts) {
      train_x_.push_back(features(p.second));
      train_y_.push_back((p.first - y_mean_) / y_sd_);
      best_y_ = std::min(best_y_, train_y_.back());
    }
    // Length scale and noise by the marginal likelihood over a small grid, refitted when the
    // data grew by a quarter (the choice changes slowly and costs 15 factorisations).
    if (observed_.size() >= fitted_at_ + std::max<std::size_t>(1, fitted_at_ / 4)) {
      fitted_at_ = observed_.size();
      double best_ll = -std::numeric_limits<double>::infinity();
      const double root_d = std::sqrt(double(std::max<std::size_t>(1, index_.dims())));
      for (double l : {0.1, 0.2, 0.4, 0.8, 1.6}) {
        for (double noise : {1e-4, 1e-2, 1e-1}) {
          length_ = l * root_d;
          noise_ = noise;
          const double ll = solve();
          if (ll > best_ll) {
            best_ll = ll;
            best_length_ = length_;
            best_noise_ = noise_;
          }
        }
      }
    }
    length_ = best_length_;
    noise_ = best_noise_;
    solve();
  }

  // Factorises the kernel matrix of the training set; the log marginal likelihood.
  double solve() {
    const auto n = static_cast<Eigen::Index>(train_x_.size());
    Eigen::MatrixXd k(n, n);
    for (Eigen::Index a = 0; a < n; ++a) {
      for (Eigen::Index b = 0; b <= a; ++b) {
        k(a, b) = k(b, a) = matern52(train_x_[std::size_t(a)], train_x_[std::size_t(b)], length_);
      }
      k(a, a) += noise_;
    }
    llt_.compute(k);
    Eigen::VectorXd y(n);
    for (Eigen::Index a = 0; a < n; ++a) y[a] = train_y_[std::size_t(a)];
    alpha_ = llt_.solve(y);
    const Eigen::MatrixXd l = llt_.matrixL();
    return -0.5 * y.dot(alpha_) - l.diagonal().array().log().sum();
  }

  std::pair<double, double> predict(const Eigen::VectorXd& x) const {
    const auto n = static_cast<Eigen::Index>(train_x_.size());
    Eigen::VectorXd ks(n);
    for (Eigen::Index a = 0; a < n; ++a) ks[a] = matern52(x, train_x_[std::size_t(a)], length_);
    const Eigen::VectorXd v = llt_.matrixL().solve(ks);
    return {ks.dot(alpha_), std::sqrt(std::max(1e-12, 1.0 + noise_ - v.squaredNorm()))};
  }

  std::optional<std::size_t> best_expected_improvement() {
    std::vector<std::size_t> pool;
    if (++picks_ % kLocalEvery == 0 && best_) {  // a local pick
      for (std::size_t j : index_.neighbours(*best_)) {
        if (!index_.proposed(j)) pool.push_back(j);
      }
    }
    if (!pool.empty()) return best_of(pool);  // else every neighbour was proposed: global
    if (index_.remaining() <= kPool) {
      for (std::size_t i = 0; i < index_.size(); ++i) {
        if (!index_.proposed(i) && !index_.space().coords[i].empty()) pool.push_back(i);
      }
    } else {
      for (std::size_t k = 0; k < kPool; ++k) {
        if (auto r = index_.random_unproposed()) pool.push_back(*r);
      }
      std::vector<std::pair<double, std::size_t>> fastest = observed_;
      const std::size_t m = std::min(kNearBest, fastest.size());
      std::partial_sort(fastest.begin(), fastest.begin() + std::ptrdiff_t(m), fastest.end());
      for (std::size_t k = 0; k < m; ++k) {
        for (std::size_t j : index_.neighbours(fastest[k].second)) {
          if (!index_.proposed(j)) pool.push_back(j);
        }
      }
    }
    return best_of(pool);
  }

  // The candidate of `pool` with the largest expected improvement over the fastest observed.
  std::optional<std::size_t> best_of(const std::vector<std::size_t>& pool) const {
    std::optional<std::size_t> best;
    double best_ei = -1;
    for (std::size_t i : pool) {
      if (index_.space().coords[i].empty()) continue;
      const auto [mu, sigma] = predict(features(i));
      const double z = (best_y_ - mu) / sigma;
      const double cdf = 0.5 * std::erfc(-z / std::numbers::sqrt2);
      const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2 * std::numbers::pi);
      const double ei = (best_y_ - mu) * cdf + sigma * pdf;
      if (ei > best_ei) {
        best_ei = ei;
        best = i;
      }
    }
    return best;
  }

  SpaceIndex index_;
  std::size_t initial_;
  std::size_t pending_ = 0;
  std::size_t picks_ = 0;
  std::optional<std::size_t> best_;  // the fastest observed candidate with coordinates
  double best_time_ = std::numeric_limits<double>::infinity();
  std::vector<std::pair<double, std::size_t>> observed_;  // (log time or +inf, candidate)
  std::vector<Eigen::VectorXd> train_x_;
  std::vector<double> train_y_;
  double y_mean_ = 0, y_sd_ = 1, best_y_ = 0;
  double length_ = 0.4, noise_ = 1e-2, best_length_ = 0.4, best_noise_ = 1e-2;
  std::size_t fitted_at_ = 0;
  Eigen::LLT<Eigen::MatrixXd> llt_;
  Eigen::VectorXd alpha_;
};

}  // namespace

std::unique_ptr<Strategy> make_model(const CandidateSpace& space, std::uint64_t seed) {
  return std::make_unique<Model>(space, seed);
}

}  // namespace ktune::search_detail
