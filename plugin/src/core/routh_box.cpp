#include "core/routh_box.h"

#include "core/inertia.h"

#include <Eigen/LU>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace simpact::internal {

namespace {
const double kHalfRoot = std::sqrt(0.5);
// Acceptance tolerances as multiples of the decision tolerances.
constexpr double kAcceptance = kBoxAcceptanceTolerance / kBoxDecisionTolerance;
}  // namespace

bool simultaneous_normal_impulses(const FrictionalProblem& problem, const FrictionalSpace& space,
                                  const Eigen::VectorXd& velocity_scale, double impulse_scale,
                                  Eigen::VectorXd& lambda) {
  const int m = space.m;
  BoxQp qp;
  set_contact_rows(qp, problem.normals, problem.inverse_mass);
  Eigen::VectorXd q(m), hi(m), w_tolerance(m);
  const Eigen::VectorXd lo = Eigen::VectorXd::Zero(m);
  const Eigen::VectorXd x_tolerance = Eigen::VectorXd::Constant(m, kBoxDecisionTolerance * impulse_scale);
  for (int i = 0; i < m; ++i) {
    const int row = space.normal_row(i);
    q[i] = space.u0[row];
    hi[i] = space.inert[static_cast<size_t>(i)] ? 0.0 : std::numeric_limits<double>::infinity();
    w_tolerance[i] = kBoxDecisionTolerance * velocity_scale[row];
  }
  if (!qp.solve(q, lo, hi, w_tolerance, x_tolerance)) return false;
  lambda = qp.x();
  return lambda.allFinite();
}

bool RouthBoxIncrement::applicable(int tangent_dimension, int directions) {
  return (tangent_dimension == 2 && directions == 4) || (tangent_dimension == 1 && directions == 2);
}

bool RouthBoxIncrement::applicable(const FrictionalSpace& space) { return applicable(space.tangent_dim, space.d); }

void RouthBoxIncrement::build(const FrictionalProblem& problem, const FrictionalSpace& space,
                              const Eigen::VectorXd& velocity_scale, double impulse_scale) {
  space_ = &space;
  m_ = space.m;
  per_ = 1 + space.tangent_dim;
  friction_factor_ = space.tangent_dim == 2 ? kHalfRoot : 1.0;
  const int n = space.n, variables = per_ * m_;

  // B: per contact the normal row, then the tangent rows (rotated by 45° in 3-D).
  std::vector<Eigen::Triplet<double>> entries;
  for (int i = 0; i < m_; ++i) {
    for (SparseRowMatrix::InnerIterator it(problem.normals, i); it; ++it)
      entries.emplace_back(per_ * i, it.index(), it.value());
    if (per_ == 2) {
      for (SparseRowMatrix::InnerIterator it(problem.tangents, i); it; ++it)
        entries.emplace_back(per_ * i + 1, it.index(), it.value());
    } else {
      for (int row = 0; row < 2; ++row) {
        const double sign_b = row == 0 ? 1.0 : -1.0;  // t2's sign in t_b = (t1 − t2)/√2
        for (SparseRowMatrix::InnerIterator it(problem.tangents, 2 * i + row); it; ++it) {
          entries.emplace_back(per_ * i + 1, it.index(), kHalfRoot * it.value());
          entries.emplace_back(per_ * i + 2, it.index(), sign_b * kHalfRoot * it.value());
        }
      }
    }
  }
  SparseRowMatrix b(variables, n);
  b.setFromTriplets(entries.begin(), entries.end());
  set_contact_rows(qp_, b, problem.inverse_mass);

  // Decision tolerances in the data's units (routh.cpp's residual scales).
  wtol_.resize(variables);
  xtol_.resize(variables);
  cap_.setZero(m_);
  bound_.setZero(m_);
  q_.setZero(variables);
  lo_.setZero(variables);
  hi_.setZero(variables);
  for (int i = 0; i < m_; ++i) {
    double tangential = 0.0;
    for (int k = 0; k < space.d; ++k)
      tangential = std::max(tangential, velocity_scale[space.direction_row(i, k)]);
    wtol_[per_ * i] = kBoxDecisionTolerance * velocity_scale[space.normal_row(i)];
    xtol_[per_ * i] = kBoxDecisionTolerance * impulse_scale;
    for (int t = 1; t < per_; ++t) {
      wtol_[per_ * i + t] = kBoxDecisionTolerance * tangential;
      xtol_[per_ * i + t] = kBoxDecisionTolerance * impulse_scale * std::max(1.0, space.mu[i]);
    }
  }
  rounds_ = steps_ = 0;
}

bool RouthBoxIncrement::solve(const Eigen::VectorXd& q, Eigen::VectorXd& z) {
  const FrictionalSpace& sp = *space_;
  const int m = m_;
  rounds_ = steps_ = 0;
  warm_ = true;
  for (int i = 0; i < m; ++i) {
    cap_[i] = std::max(q[i], 0.0);
    q_[per_ * i] = q[m + sp.normal_row(i)];
    if (per_ == 2) {
      q_[per_ * i + 1] = q[m + sp.direction_row(i, 0)];  // +t
    } else {
      const double u1 = q[m + sp.direction_row(i, 0)], u2 = q[m + sp.direction_row(i, 1)];  // +t1, +t2
      q_[per_ * i + 1] = kHalfRoot * (u1 + u2);
      q_[per_ * i + 2] = kHalfRoot * (u1 - u2);
    }
    lo_[per_ * i] = 0.0;
    hi_[per_ * i] = cap_[i];
  }
  Eigen::VectorXd x, w;
  // Friction bounds: first from the normal impulses of the last solve (the
  // warm state), then moved towards those of each new solve. A contact whose
  // move changes direction halves its relaxation: plain staggering can
  // alternate between two active sets forever (a sliding contact whose
  // friction lifts its own normal: full bound → no normal impulse → no
  // bound → full normal impulse …) and never visit the one between them.
  relaxation_.setOnes(m);
  last_move_.setZero(m);
  bool newton_ready = false;
  int newton_steps = 0;
  for (int i = 0; i < m; ++i)
    bound_[i] = friction_factor_ * sp.mu[i] * std::clamp(qp_.x()[per_ * i], 0.0, cap_[i]);
  for (int round = 0; round < kBoxStaggeredRounds; ++round) {
    ++rounds_;
    if (round > 0 && newton_ready && newton_steps < kBoxNewtonSteps) {
      // After the first box solve, and after any that kept its active set:
      // the normals of that active set's exact tied solution are where the
      // staggering converges while it holds (a Newton step of the
      // piecewise-linear fixed point); the next box solve moves the active
      // set where those bounds ask.
      ++newton_steps;
      for (int i = 0; i < m; ++i)
        bound_[i] = friction_factor_ * sp.mu[i] * std::clamp(tied_[per_ * i], 0.0, cap_[i]);
    } else if (round > 0) {
      for (int i = 0; i < m; ++i) {
        const double target = friction_factor_ * sp.mu[i] * std::clamp(qp_.x()[per_ * i], 0.0, cap_[i]);
        const double move = target - bound_[i];
        if (move * last_move_[i] < 0.0) relaxation_[i] *= 0.5;
        last_move_[i] = move;
        bound_[i] += relaxation_[i] * move;
      }
    }
    for (int i = 0; i < m; ++i)
      for (int t = 1; t < per_; ++t) {
        lo_[per_ * i + t] = -bound_[i];
        hi_[per_ * i + t] = bound_[i];
      }
    const int budget = box_step_limit(per_ * m_) - steps_;
    if (budget <= 0) return false;
    const bool solved = qp_.solve(q_, lo_, hi_, wtol_, xtol_, budget);
    steps_ += qp_.steps();
    if (!solved) return false;
    const bool stable = round == 0 || qp_.steps() == 0;
    // The active set's exact solution with the bounds tied to the normals,
    // its violators moved (a few active-set steps).
    if (refine_active_set(x, w, round > 0 && qp_.steps() == 0 ? kBoxActiveSetSteps : 1)) {
      to_lcp(x, w, z);
      return true;
    }
    newton_ready = stable && tied_valid_;
    // The fixed-bound solution itself, when its bounds already match.
    x = qp_.x();
    w = qp_.w();
    if (conditions_hold(x, w, kAcceptance)) {
      to_lcp(x, w, z);
      return true;
    }
  }
  return false;
}

bool RouthBoxIncrement::refine_active_set(Eigen::VectorXd& x, Eigen::VectorXd& w, int steps) {
  const FrictionalSpace& sp = *space_;
  const int variables = per_ * m_;
  states_.resize(static_cast<size_t>(variables));
  for (int j = 0; j < variables; ++j) states_[static_cast<size_t>(j)] = qp_.state(j);
  x = qp_.x();
  tied_valid_ = false;
  for (int step = 0; step < steps; ++step) {
    if (!exact_active_set(x)) return false;
    if (step == 0) {
      tied_ = x;
      tied_valid_ = true;
    }
    qp_.multiply(x, w);
    w += q_;
    if (conditions_hold(x, w, kAcceptance)) return true;
    // Move the variable whose condition fails worst (in its tolerance's
    // units) to the state it asks for. One at a time: moving every violator
    // at once (primal-dual active set) diverges on near-dependent contacts.
    int worst = -1;
    BoxQp::State worst_state = BoxQp::State::kFree;
    double worst_excess = 1.0;
    for (int i = 0; i < m_; ++i) {
      const int normal = per_ * i;
      const double c = friction_factor_ * sp.mu[i] * std::max(x[normal], 0.0);
      for (int t = 0; t < per_; ++t) {
        const int j = normal + t;
        const double lo = t == 0 ? 0.0 : -c, hi = t == 0 ? cap_[i] : c;
        if (hi - lo <= xtol_[j]) continue;  // fixed at its bound
        const BoxQp::State s = states_[static_cast<size_t>(j)];
        double excess = 0.0;
        BoxQp::State to = s;
        switch (s) {
          case BoxQp::State::kClamped:
            if (x[j] < lo) { excess = (lo - x[j]) / xtol_[j]; to = BoxQp::State::kLower; }
            else if (x[j] > hi) { excess = (x[j] - hi) / xtol_[j]; to = BoxQp::State::kUpper; }
            break;
          case BoxQp::State::kLower:
            excess = -w[j] / wtol_[j];
            to = BoxQp::State::kClamped;
            break;
          case BoxQp::State::kUpper:
            excess = w[j] / wtol_[j];
            to = BoxQp::State::kClamped;
            break;
          case BoxQp::State::kFree:
            excess = std::numeric_limits<double>::infinity();
            to = BoxQp::State::kClamped;
            break;
        }
        if (excess > worst_excess) {
          worst_excess = excess;
          worst = j;
          worst_state = to;
        }
      }
    }
    if (worst < 0) return conditions_hold(x, w, kAcceptance);
    states_[static_cast<size_t>(worst)] = worst_state;
  }
  return false;
}

bool RouthBoxIncrement::exact_active_set(Eigen::VectorXd& x) const {
  const FrictionalSpace& sp = *space_;
  const int variables = per_ * m_;
  std::vector<int> clamped;
  for (int j = 0; j < variables; ++j)
    if (states_[static_cast<size_t>(j)] == BoxQp::State::kClamped) clamped.push_back(j);
  const int k = static_cast<int>(clamped.size());
  std::vector<int> slot(static_cast<size_t>(variables), -1);
  for (int a = 0; a < k; ++a) slot[static_cast<size_t>(clamped[static_cast<size_t>(a)])] = a;
  // Non-clamped values: normals at their bound; a bounded friction follows
  // its normal (tie = ±c_i / λ_n,i when the normal is clamped, else a
  // constant ±c_i).
  Eigen::VectorXd constant = Eigen::VectorXd::Zero(variables);
  std::vector<double> tie(static_cast<size_t>(variables), 0.0);
  for (int i = 0; i < m_; ++i) {
    const int normal = per_ * i;
    const BoxQp::State sn = states_[static_cast<size_t>(normal)];
    if (sn == BoxQp::State::kUpper) constant[normal] = cap_[i];
    for (int t = 1; t < per_; ++t) {
      const int f = normal + t;
      const BoxQp::State s = states_[static_cast<size_t>(f)];
      if (s == BoxQp::State::kClamped) continue;
      const double sign = s == BoxQp::State::kUpper ? 1.0 : s == BoxQp::State::kLower ? -1.0 : 0.0;
      const double slope = sign * friction_factor_ * sp.mu[i];
      if (sn == BoxQp::State::kClamped) tie[static_cast<size_t>(f)] = slope;
      else constant[f] = slope * constant[normal];
    }
  }
  if (k == 0) {
    x = constant;
    return true;
  }
  Eigen::VectorXd w_constant;
  qp_.multiply(constant, w_constant);
  w_constant += q_;
  Eigen::MatrixXd system(k, k);
  Eigen::VectorXd rhs(k);
  for (int a = 0; a < k; ++a) {
    const int row = clamped[static_cast<size_t>(a)];
    rhs[a] = -w_constant[row];
    for (int c = 0; c < k; ++c) {
      const int col = clamped[static_cast<size_t>(c)];
      double value = qp_.entry(row, col);
      if (col % per_ == 0)
        for (int t = 1; t < per_; ++t)
          if (tie[static_cast<size_t>(col + t)] != 0.0)
            value += tie[static_cast<size_t>(col + t)] * qp_.entry(row, col + t);
      system(a, c) = value;
    }
  }
  const Eigen::VectorXd solution = system.partialPivLu().solve(rhs);
  if (!solution.allFinite()) return false;
  x = constant;
  for (int a = 0; a < k; ++a) x[clamped[static_cast<size_t>(a)]] = solution[a];
  for (int f = 0; f < variables; ++f)
    if (tie[static_cast<size_t>(f)] != 0.0) x[f] = tie[static_cast<size_t>(f)] * x[f - f % per_];
  return true;
}

bool RouthBoxIncrement::conditions_hold(const Eigen::VectorXd& x, const Eigen::VectorXd& w, double scale) const {
  const FrictionalSpace& sp = *space_;
  for (int i = 0; i < m_; ++i) {
    const int normal = per_ * i;
    const double xn = x[normal], wn = w[normal], xt = scale * xtol_[normal], wt = scale * wtol_[normal];
    if (!(xn >= -xt && xn <= cap_[i] + xt)) return false;
    if (cap_[i] > xt) {
      if (xn <= xt) {
        if (wn < -wt) return false;
      } else if (xn >= cap_[i] - xt) {
        if (wn > wt) return false;
      } else if (std::abs(wn) > wt) {
        return false;
      }
    }
    const double c = friction_factor_ * sp.mu[i] * std::max(xn, 0.0);
    for (int t = 1; t < per_; ++t) {
      const int f = normal + t;
      const double xf = x[f], wf = w[f], ft = scale * xtol_[f], vt = scale * wtol_[f];
      if (c <= ft) {
        if (std::abs(xf) > ft) return false;
        continue;
      }
      if (std::abs(xf) > c + ft) return false;
      if (xf >= c - ft) {
        if (wf > vt) return false;
      } else if (xf <= -c + ft) {
        if (wf < -vt) return false;
      } else if (std::abs(wf) > vt) {
        return false;
      }
    }
  }
  return true;
}

void RouthBoxIncrement::to_lcp(const Eigen::VectorXd& x, const Eigen::VectorXd& w, Eigen::VectorXd& z) const {
  const FrictionalSpace& sp = *space_;
  const int m = m_, rows = sp.rows();
  z.setZero(2 * m + rows);
  for (int i = 0; i < m; ++i) {
    const int normal = per_ * i;
    const double lambda = std::clamp(x[normal], 0.0, cap_[i]);
    z[m + sp.normal_row(i)] = lambda;
    if (lambda >= cap_[i] - xtol_[normal]) z[i] = std::max(0.0, -w[normal]);  // β at the cap
    double smallest;  // min_k d_k · u_t′
    if (per_ == 2) {
      z[m + sp.direction_row(i, 0)] = std::max(x[normal + 1], 0.0);
      z[m + sp.direction_row(i, 1)] = std::max(-x[normal + 1], 0.0);
      smallest = -std::abs(w[normal + 1]);
    } else {
      const double l1 = kHalfRoot * (x[normal + 1] + x[normal + 2]);
      const double l2 = kHalfRoot * (x[normal + 1] - x[normal + 2]);
      z[m + sp.direction_row(i, 0)] = std::max(l1, 0.0);   // +t1
      z[m + sp.direction_row(i, 1)] = std::max(l2, 0.0);   // +t2
      z[m + sp.direction_row(i, 2)] = std::max(-l1, 0.0);  // −t1
      z[m + sp.direction_row(i, 3)] = std::max(-l2, 0.0);  // −t2
      const double v1 = kHalfRoot * (w[normal + 1] + w[normal + 2]);
      const double v2 = kHalfRoot * (w[normal + 1] - w[normal + 2]);
      smallest = -std::max(std::abs(v1), std::abs(v2));
    }
    z[m + rows + i] = std::max(0.0, -smallest);  // γ
  }
}

}  // namespace simpact::internal
