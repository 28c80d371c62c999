#include "core/box_qp.h"

#include "core/inertia.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace simpact::internal {

namespace {
constexpr double kInfinity = std::numeric_limits<double>::infinity();
}  // namespace

void BoxQp::set_rows(const SparseRowMatrix& a, int dense_limit) {
  gram_only_ = false;
  a_ = a;
  a_.makeCompressed();
  at_ = a_.transpose();
  n_ = static_cast<int>(a_.rows());
  r_ = static_cast<int>(a_.cols());
  // Entries of W are sums over A's columns in ascending order whichever way
  // they are formed (the sparse product and entry()'s merge alike), so the
  // dense and the on-demand paths read the same numbers.
  if (n_ > 0 && n_ <= dense_limit) {
    const SparseRowMatrix product = a_ * a_.transpose();
    gram_ = Eigen::MatrixXd(product);
  } else {
    gram_.resize(0, 0);
  }
  diagonal_.resize(n_);
  for (int j = 0; j < n_; ++j) diagonal_[j] = dense() ? gram_(j, j) : a_.row(j).squaredNorm();
  prepare();
}

void BoxQp::set_gram(const Eigen::MatrixXd& w) {
  if (w.rows() != w.cols())
    throw std::invalid_argument("BoxQp::set_gram: W must be square, got " + std::to_string(w.rows()) + " x " +
                                std::to_string(w.cols()));
  gram_only_ = true;
  n_ = static_cast<int>(w.rows());
  r_ = n_;  // rank W ≤ n: the clamped factor's bound
  a_.resize(n_, 0);  // no rows: row_nonzeros() is 0 and nothing reads A
  a_.makeCompressed();
  at_.resize(0, n_);
  gram_ = w;
  diagonal_ = gram_.diagonal();
  prepare();
}

void BoxQp::prepare() {
  scatter_ = Eigen::VectorXd::Zero(r_);
  stuck_mark_.assign(static_cast<size_t>(n_), 0);
  dependent_mark_.assign(static_cast<size_t>(n_), 0);
  stamp_ = 0;
  const int capacity = std::min(n_, r_);
  factor_.setZero(capacity, capacity);
  if (dense()) clamped_columns_.setZero(n_, capacity);
  else clamped_columns_.resize(0, 0);
  reset();
}

void BoxQp::reset() {
  x_ = Eigen::VectorXd::Zero(n_);
  w_.resize(n_);
  state_.assign(static_cast<size_t>(n_), State::kFree);
  clamped_.clear();
  clamped_nonzeros_ = 0;
  steps_ = 0;
}

double BoxQp::entry(int j, int k) const {
  if (dense()) return gram_(j, k);
  double sum = 0.0;
  SparseRowMatrix::InnerIterator a(a_, j), b(a_, k);
  while (a && b) {
    if (a.index() < b.index()) {
      ++a;
    } else if (b.index() < a.index()) {
      ++b;
    } else {
      sum += a.value() * b.value();
      ++a;
      ++b;
    }
  }
  return sum;
}

void BoxQp::multiply(const Eigen::VectorXd& v, Eigen::VectorXd& out) const {
  if (gram_only_) {
    out.noalias() = gram_ * v;
    return;
  }
  g_.noalias() = at_ * v;
  out.noalias() = a_ * g_;
}

void BoxQp::refresh_w() {
  multiply(x_, w_);
  w_ += q_;
}

void BoxQp::set_x(int j, double value) {
  const double change = value - x_[j];
  if (change == 0.0) return;
  x_[j] = value;
  if (dense()) {
    w_.noalias() += change * gram_.col(j);
    return;
  }
  // w += change · W_:j = change · A (A_jᵀ)
  for (SparseRowMatrix::InnerIterator it(a_, j); it; ++it) scatter_[it.index()] = it.value();
  dw_.noalias() = a_ * scatter_;
  for (SparseRowMatrix::InnerIterator it(a_, j); it; ++it) scatter_[it.index()] = 0.0;
  w_.noalias() += change * dw_;
}

double BoxQp::factor_row(int j) {
  const int k = static_cast<int>(clamped_.size());
  y_.resize(k);
  if (dense()) {
    for (int c = 0; c < k; ++c) y_[c] = gram_(clamped_[static_cast<size_t>(c)], j);  // W_Cj
  } else {
    for (SparseRowMatrix::InnerIterator it(a_, j); it; ++it) scatter_[it.index()] = it.value();
    for (int c = 0; c < k; ++c) {
      double sum = 0.0;
      for (SparseRowMatrix::InnerIterator it(a_, clamped_[static_cast<size_t>(c)]); it; ++it)
        sum += it.value() * scatter_[it.index()];
      y_[c] = sum;  // W_Cj
    }
    for (SparseRowMatrix::InnerIterator it(a_, j); it; ++it) scatter_[it.index()] = 0.0;
  }
  if (k > 0) factor_.topLeftCorner(k, k).triangularView<Eigen::Lower>().solveInPlace(y_);  // L⁻¹ W_Cj
  y_owner_ = j;
  return diagonal_[j] - y_.squaredNorm();
}

double BoxQp::schur(int j) {
  const double s = factor_row(j);
  const int k = static_cast<int>(clamped_.size());
  dxc_ = y_;
  if (k > 0) factor_.topLeftCorner(k, k).transpose().triangularView<Eigen::Upper>().solveInPlace(dxc_);
  dxc_ = -dxc_;  // −W_CC⁻¹ W_Cj
  return s;
}

bool BoxQp::independent(int j) {
  return static_cast<Eigen::Index>(clamped_.size()) < factor_.rows() &&
         factor_row(j) > kBoxPivotTolerance * diagonal_[j];
}

void BoxQp::clamp(int j) {
  const int k = static_cast<int>(clamped_.size());
  if (y_owner_ != j) factor_row(j);
  const double s = diagonal_[j] - y_.squaredNorm();
  if (k > 0) factor_.block(k, 0, 1, k) = y_.transpose();
  factor_(k, k) = std::sqrt(std::max(s, 0.0));
  if (dense()) clamped_columns_.col(k) = gram_.col(j);
  clamped_nonzeros_ += row_nonzeros(j);
  clamped_.push_back(j);
  state_[static_cast<size_t>(j)] = State::kClamped;
  y_owner_ = -1;
}

void BoxQp::release(int position, State to) {
  const int k = static_cast<int>(clamped_.size());
  const int j = clamped_[static_cast<size_t>(position)];
  clamped_.erase(clamped_.begin() + position);
  clamped_nonzeros_ -= row_nonzeros(j);
  if (dense())
    for (int c = position; c < k - 1; ++c) clamped_columns_.col(c) = clamped_columns_.col(c + 1);
  state_[static_cast<size_t>(j)] = to;
  y_owner_ = -1;
  // Delete row and column `position` of L: the rows below shift up and the
  // trailing block takes the rank-one update with the deleted column.
  const int tail = k - 1 - position;
  if (tail > 0) {
    Eigen::VectorXd v = factor_.block(position + 1, position, tail, 1);
    for (int row = position; row < k - 1; ++row) {
      factor_.block(row, 0, 1, position) = factor_.block(row + 1, 0, 1, position);
      for (int col = position; col <= row; ++col) factor_(row, col) = factor_(row + 1, col + 1);
    }
    for (int i = 0; i < tail; ++i) {  // L₃₃ L₃₃ᵀ + v vᵀ
      const int d = position + i;
      const double lii = factor_(d, d);
      const double root = std::hypot(lii, v[i]);
      const double c = root / lii, s = v[i] / lii;
      factor_(d, d) = root;
      for (int p = i + 1; p < tail; ++p) {
        const int row = position + p;
        factor_(row, d) = (factor_(row, d) + s * v[p]) / c;
        v[p] = c * v[p] - s * factor_(row, d);
      }
    }
  }
  factor_.row(k - 1).setZero();
}

void BoxQp::refactor() {
  const int k = static_cast<int>(clamped_.size());
  std::vector<int> keep;
  keep.swap(clamped_);
  clamped_nonzeros_ = 0;
  for (int c = 0; c < k; ++c) state_[static_cast<size_t>(keep[static_cast<size_t>(c)])] = State::kFree;
  factor_.setZero();
  y_owner_ = -1;
  // Re-admit in order; a row that has become dependent stays out (free).
  for (int j : keep) {
    if (independent(j)) clamp(j);
  }
}

void BoxQp::solve_clamped(Eigen::VectorXd& rhs) const {
  const int k = static_cast<int>(clamped_.size());
  if (k == 0) return;
  const auto l = factor_.topLeftCorner(k, k);
  l.triangularView<Eigen::Lower>().solveInPlace(rhs);
  l.transpose().triangularView<Eigen::Upper>().solveInPlace(rhs);
}

bool BoxQp::restore_clamped() {
  // Each round releases one clamped variable, so |C| + 1 rounds suffice.
  const size_t rounds = clamped_.size() + 1;
  for (size_t round = 0; round < rounds; ++round) {
    const int k = static_cast<int>(clamped_.size());
    if (k == 0) return true;
    rhs_.resize(k);
    for (int c = 0; c < k; ++c) rhs_[c] = -w_[clamped_[static_cast<size_t>(c)]];
    solve_clamped(rhs_);
    for (int c = 0; c < k; ++c) x_[clamped_[static_cast<size_t>(c)]] += rhs_[c];
    refresh_w();
    int worst = -1;
    double excess = 0.0;
    for (int c = 0; c < k; ++c) {
      const int j = clamped_[static_cast<size_t>(c)];
      const double out = std::max(lo_[j] - x_[j], x_[j] - hi_[j]) - xtol_[j];
      if (out > excess) {
        excess = out;
        worst = c;
      }
    }
    if (worst < 0) return true;
    const int j = clamped_[static_cast<size_t>(worst)];
    release(worst, State::kFree);
    set_x(j, std::clamp(x_[j], lo_[j], hi_[j]));
  }
  return false;
}

bool BoxQp::violated(int j) const {
  if (fixed(j) && state_[static_cast<size_t>(j)] != State::kClamped) return false;
  switch (state_[static_cast<size_t>(j)]) {
    case State::kLower: return w_[j] < -wtol_[j] || std::abs(x_[j] - lo_[j]) > xtol_[j];
    case State::kUpper: return w_[j] > wtol_[j] || std::abs(x_[j] - hi_[j]) > xtol_[j];
    case State::kClamped:
      return std::abs(w_[j]) > wtol_[j] || x_[j] < lo_[j] - xtol_[j] || x_[j] > hi_[j] + xtol_[j];
    case State::kFree: return true;
  }
  return true;
}

bool BoxQp::demote() {
  bool any = false;
  for (size_t c = 0; c < clamped_.size();) {
    const int j = clamped_[c];
    if (x_[j] < lo_[j] - xtol_[j] || x_[j] > hi_[j] + xtol_[j]) {
      release(static_cast<int>(c), State::kFree);
      set_x(j, std::clamp(x_[j], lo_[j], hi_[j]));
      any = true;
    } else {
      ++c;
    }
  }
  for (int j = 0; j < n_; ++j) {
    const State s = state_[static_cast<size_t>(j)];
    if (s == State::kClamped) {
      if (std::abs(w_[j]) > wtol_[j]) {
        // A clamped row whose w drifted: re-establish by driving it.
        for (size_t c = 0; c < clamped_.size(); ++c)
          if (clamped_[c] == j) {
            release(static_cast<int>(c), State::kFree);
            break;
          }
        any = true;
      }
    } else if ((s == State::kLower || s == State::kUpper) && violated(j)) {
      state_[static_cast<size_t>(j)] = State::kFree;
      any = true;
    }
  }
  return any;
}

int BoxQp::most_violated_free() const {
  int best = -1;
  double largest = -1.0;
  for (int j = 0; j < n_; ++j) {
    if (state_[static_cast<size_t>(j)] != State::kFree) continue;
    const double size = std::abs(w_[j]);
    const double violation = wtol_[j] > 0.0 ? size / wtol_[j] : size > 0.0 ? kInfinity : 0.0;
    if (violation > largest) {
      largest = violation;
      best = j;
    }
  }
  return best;
}

bool BoxQp::drive(int j, int max_steps) {
  // Marks: stuck (left C with a zero step in this drive) and dependent (on
  // the current C; refreshed every step). Stamps avoid clearing the array.
  stuck_stamp_ = ++stamp_;
  while (true) {
    if (++steps_ > max_steps) return false;
    dependent_stamp_ = ++stamp_;
    const double s = schur(j);
    const int k = static_cast<int>(clamped_.size());
    const bool room = k < factor_.rows();
    const bool independent_j = room && s > kBoxPivotTolerance * diagonal_[j];
    // Events of other variables can leave j's w at zero (to rounding): its
    // condition then holds where it is. It joins C if it can; if it depends
    // on C it moves to its nearer bound along the null direction (its
    // column is a combination of C's, so no w changes but by rounding) —
    // driving it by the sign of a rounding-level w_j would cycle.
    const bool satisfied = std::abs(w_[j]) <= wtol_[j];
    if (satisfied && independent_j) {
      clamp(j);
      return true;
    }
    const bool null_move = satisfied;
    const double direction =
        null_move ? (hi_[j] - x_[j] <= x_[j] - lo_[j] ? 1.0 : -1.0) : (w_[j] < 0.0 ? 1.0 : -1.0);
    // Δw = W dx with dx_j = direction, dx_C = direction · dxc: from W's
    // columns (n·|C| multiply-adds, contiguous) or as A g with g = Aᵀ dx
    // (nnz of A_C and of A, indexed), whichever is cheaper.
    const double indexed = kBoxIndexedCost * static_cast<double>(clamped_nonzeros_ + a_.nonZeros());
    if (gram_only_ || (dense() && static_cast<double>(n_) * k <= indexed)) {
      dw_ = gram_.col(j);
      if (k > 0) dw_.noalias() += clamped_columns_.leftCols(k) * dxc_;
      dw_ *= direction;  // ±1: exact
    } else {
      g_.setZero(r_);
      for (SparseRowMatrix::InnerIterator it(a_, j); it; ++it) g_[it.index()] += direction * it.value();
      for (int c = 0; c < k; ++c) {
        const double d = direction * dxc_[c];
        if (d == 0.0) continue;
        for (SparseRowMatrix::InnerIterator it(a_, clamped_[static_cast<size_t>(c)]); it; ++it)
          g_[it.index()] += d * it.value();
      }
      dw_.noalias() = a_ * g_;
    }
    const double slope_floor = kBoxDegenerateSlope * std::max(dw_.cwiseAbs().maxCoeff(), 1e-300);

    enum Event { kNone, kJoin, kBound, kClampedUpper, kClampedLower, kBoundedJoins } event = kNone;
    double t = std::numeric_limits<double>::infinity();
    int which = -1;
    if (!null_move && independent_j) {  // j can reach w_j = 0
      const double tj = -w_[j] / dw_[j];
      if (tj < t) {
        t = tj;
        event = kJoin;
      }
    }
    {
      const double tb = direction > 0.0 ? hi_[j] - x_[j] : x_[j] - lo_[j];
      if (tb < t) {
        t = tb;
        event = kBound;
      }
    }
    for (int c = 0; c < k; ++c) {
      const int v = clamped_[static_cast<size_t>(c)];
      const double d = direction * dxc_[c];
      if (d > 0.0) {
        const double tc = (hi_[v] - x_[v]) / d;
        if (tc < t) {
          t = tc;
          event = kClampedUpper;
          which = c;
        }
      } else if (d < 0.0) {
        const double tc = (lo_[v] - x_[v]) / d;
        if (tc < t) {
          t = tc;
          event = kClampedLower;
          which = c;
        }
      }
    }
    // Bounded variables whose w would cross zero join C; the nearest that
    // is independent of C is the event (dependent ones only move by rounding).
    while (room && !null_move) {
      int best = -1;
      double tbest = t;
      for (int v = 0; v < n_; ++v) {
        const State sv = state_[static_cast<size_t>(v)];
        if (v == j || fixed(v)) continue;
        const bool lower = sv == State::kLower && dw_[v] < -slope_floor;
        const bool upper = sv == State::kUpper && dw_[v] > slope_floor;
        if (!lower && !upper) continue;
        const double tv = -w_[v] / dw_[v];
        if (!(tv < tbest)) continue;
        if (tv <= 0.0 && stuck_mark_[static_cast<size_t>(v)] == stuck_stamp_) continue;
        if (dependent_mark_[static_cast<size_t>(v)] == dependent_stamp_) continue;
        best = v;
        tbest = tv;
      }
      if (best < 0) break;
      if (factor_row(best) > kBoxPivotTolerance * diagonal_[best]) {
        t = tbest;
        event = kBoundedJoins;
        which = best;
        break;
      }
      dependent_mark_[static_cast<size_t>(best)] = dependent_stamp_;
    }
    if (event == kNone || !std::isfinite(t)) return false;
    t = std::max(t, 0.0);
    x_[j] += t * direction;
    for (int c = 0; c < k; ++c) x_[clamped_[static_cast<size_t>(c)]] += t * direction * dxc_[c];
    w_.noalias() += t * dw_;
    switch (event) {
      case kJoin:
        w_[j] = 0.0;
        clamp(j);
        return true;
      case kBound:
        set_x(j, direction > 0.0 ? hi_[j] : lo_[j]);
        state_[static_cast<size_t>(j)] = direction > 0.0 ? State::kUpper : State::kLower;
        return true;
      case kClampedUpper:
      case kClampedLower: {
        const int v = clamped_[static_cast<size_t>(which)];
        const bool upper = event == kClampedUpper;
        release(which, upper ? State::kUpper : State::kLower);
        set_x(v, upper ? hi_[v] : lo_[v]);
        if (t == 0.0) stuck_mark_[static_cast<size_t>(v)] = stuck_stamp_;
        break;
      }
      case kBoundedJoins:
        w_[which] = 0.0;
        clamp(which);
        break;
      case kNone: return false;
    }
  }
}

bool BoxQp::solve(const Eigen::VectorXd& q, const Eigen::VectorXd& lo, const Eigen::VectorXd& hi,
                  const Eigen::VectorXd& w_tolerance, const Eigen::VectorXd& x_tolerance, int max_steps) {
  q_ = q;
  lo_ = lo;
  hi_ = hi;
  wtol_ = w_tolerance;
  xtol_ = x_tolerance;
  steps_ = 0;
  const int limit = max_steps > 0 ? max_steps : box_step_limit(n_);
  for (int j = 0; j < n_; ++j) {
    switch (state_[static_cast<size_t>(j)]) {
      case State::kLower: x_[j] = lo_[j]; break;
      case State::kUpper: x_[j] = hi_[j]; break;
      case State::kFree: x_[j] = std::clamp(x_[j], lo_[j], hi_[j]); break;
      case State::kClamped: break;
    }
  }
  refresh_w();
  if (!restore_clamped()) return false;
  demote();
  constexpr int kPasses = 8;
  for (int pass = 0; pass < kPasses; ++pass) {
    // Free variables settle one at a time, the one whose w is largest in
    // its tolerance's units first (ties: the lowest index). Every step that
    // settles or drives one leaves the others free, and none becomes free,
    // so n picks end the pass.
    for (int pick = 0; pick < n_; ++pick) {
      const int j = most_violated_free();
      if (j < 0) break;
      if (fixed(j)) {
        set_x(j, lo_[j]);
        state_[static_cast<size_t>(j)] = State::kLower;
        continue;
      }
      const bool at_lower = x_[j] <= lo_[j] + xtol_[j], at_upper = x_[j] >= hi_[j] - xtol_[j];
      if (at_lower && w_[j] >= -wtol_[j]) {
        set_x(j, lo_[j]);
        state_[static_cast<size_t>(j)] = State::kLower;
        continue;
      }
      if (at_upper && w_[j] <= wtol_[j]) {
        set_x(j, hi_[j]);
        state_[static_cast<size_t>(j)] = State::kUpper;
        continue;
      }
      if (!at_lower && !at_upper && std::abs(w_[j]) <= wtol_[j] && independent(j)) {
        clamp(j);
        continue;
      }
      if (!drive(j, limit)) return false;
    }
    // Polish: a fresh factor and the exact clamped solve remove what the
    // incremental updates accumulated; then every condition is re-checked.
    refactor();
    refresh_w();
    if (!restore_clamped()) return false;
    const bool demoted = demote();
    const bool free = std::find(state_.begin(), state_.end(), State::kFree) != state_.end();
    if (!demoted && !free) return true;
  }
  return false;
}

void set_contact_rows(BoxQp& qp, const SparseRowMatrix& rows, const SparseColMatrix& inverse_mass,
                      const std::function<Eigen::MatrixXd()>& gram) {
  if (largest_block(inverse_mass) <= kMetricRootBlockLimit) {
    qp.set_rows(SparseRowMatrix(rows * metric_root(inverse_mass)));
    return;
  }
  Eigen::MatrixXd w;
  if (gram) {
    w = gram();
  } else {
    const SparseColMatrix response = inverse_mass * SparseColMatrix(rows.transpose());  // M⁻¹ Bᵀ
    w = Eigen::MatrixXd(SparseColMatrix(rows * response));
  }
  if (w.rows() != rows.rows() || w.cols() != rows.rows())
    throw std::invalid_argument("set_contact_rows: W must be " + std::to_string(rows.rows()) + " x " +
                                std::to_string(rows.rows()) + ", got " + std::to_string(w.rows()) + " x " +
                                std::to_string(w.cols()));
  qp.set_gram(0.5 * (w + w.transpose()));
}

}  // namespace simpact::internal
