#include <simpact/frictional_reference.h>

#include "core/frictional_space.h"
#include "core/validation.h"
#include "core/lcp.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <Eigen/QR>

namespace simpact {

namespace {

template <typename... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  internal::fail_invalid(parts...);
}

// Regularization of the feasibility QP, relative to the largest diagonal of
// AᵀA: it makes the QP strictly convex (unique x) while moving a consistent
// solution by ~1e-12 relative, four orders inside kResidualTolerance.
constexpr double kQpRegularization = 1e-14;
// Accepted residual of the mode equations A x = c, per row, relative to that
// row's magnitude max(|c_j|, Σ|A_jk x_k|). Lemke on the QP's KKT system is
// accurate to ~1e-13; an inconsistent mode leaves O(1) residuals.
constexpr double kResidualTolerance = 1e-8;

// Per-contact modes (see frictional_reference.h): 0 separate, 1 stick,
// 2 … 1+d slide on direction k, 2+d … 1+2d slide on directions k, k+1
// (3-D only).
enum ModeKind { kSeparate, kStick, kSlide, kSlidePair };

struct Mode {
  ModeKind kind;
  int k;
};

Mode decode(int code, int d) {
  if (code == 0) return {kSeparate, 0};
  if (code == 1) return {kStick, 0};
  if (code < 2 + d) return {kSlide, code - 2};
  return {kSlidePair, code - 2 - d};
}

int modes_per_contact(const internal::FrictionalSpace& sp) {
  return sp.tangent_dim == 1 ? 2 + sp.d : 2 + 2 * sp.d;
}

// Solves one combination of modes for the contacts in `set` from contact
// velocities u. On success fills lambda (size m(1+d)) and returns true.
class ModeSolver {
 public:
  ModeSolver(const internal::FrictionalSpace& sp, double feasibility_tolerance)
      : sp_(sp), tol_(feasibility_tolerance) {}

  // u: contact velocities ū (m(1+d)); ut: tangential velocities (rows of J_t).
  bool solve(const std::vector<int>& set, const std::vector<int>& codes, const Eigen::VectorXd& u,
             const Eigen::VectorXd& ut, Eigen::VectorXd& lambda) {
    const int d = sp_.d;
    vars_.clear();
    equations_.clear();
    rhs_.clear();
    inequalities_.clear();
    // Variables: λ_n of every non-separating contact, then its directions.
    std::vector<int> normal_var(set.size(), -1);
    for (size_t j = 0; j < set.size(); ++j) {
      const Mode mode = decode(codes[j], d);
      if (mode.kind == kSeparate) continue;
      const int i = set[j];
      normal_var[j] = static_cast<int>(vars_.size());
      vars_.push_back(sp_.normal_row(i));
      if (mode.kind == kStick)
        for (int k = 0; k < d; ++k) vars_.push_back(sp_.direction_row(i, k));
      if (mode.kind == kSlide) vars_.push_back(sp_.direction_row(i, mode.k));
      if (mode.kind == kSlidePair) {
        vars_.push_back(sp_.direction_row(i, mode.k));
        vars_.push_back(sp_.direction_row(i, (mode.k + 1) % d));
      }
    }
    const int nv = static_cast<int>(vars_.size());
    lambda = Eigen::VectorXd::Zero(sp_.rows());
    if (nv > 0) {
      auto velocity_row = [&](const Eigen::MatrixXd& op, int row, double target) {
        Eigen::VectorXd a(nv);
        for (int v = 0; v < nv; ++v) a[v] = op(row, vars_[static_cast<size_t>(v)]);
        equations_.push_back(a);
        rhs_.push_back(target);
      };
      for (size_t j = 0; j < set.size(); ++j) {
        const Mode mode = decode(codes[j], d);
        if (mode.kind == kSeparate) continue;
        const int i = set[j], nvar = normal_var[j];
        velocity_row(sp_.wbar, sp_.normal_row(i), -u[sp_.normal_row(i)]);  // u_n′ = 0
        if (mode.kind == kStick) {
          for (int t = 0; t < sp_.tangent_dim; ++t) {
            const int row = i * sp_.tangent_dim + t;
            velocity_row(sp_.tbar, row, -ut[row]);  // u_t′ = 0
          }
          Eigen::VectorXd b = Eigen::VectorXd::Zero(nv);  // μλ_n − Σλ_D ≥ 0
          b[nvar] = sp_.mu[i];
          for (int k = 0; k < d; ++k) b[nvar + 1 + k] = -1.0;
          inequalities_.push_back(b);
        } else {
          Eigen::VectorXd a = Eigen::VectorXd::Zero(nv);  // Σλ_D = μλ_n
          a[nvar] = sp_.mu[i];
          a[nvar + 1] = -1.0;
          if (mode.kind == kSlidePair) {
            a[nvar + 2] = -1.0;
            equations_.push_back(a);
            rhs_.push_back(0.0);
            // −d_k·u_t′ = −d_{k+1}·u_t′: equal dissipation rates on the pair.
            const int rk = sp_.direction_row(i, mode.k), rk1 = sp_.direction_row(i, (mode.k + 1) % d);
            Eigen::VectorXd e(nv);
            for (int v = 0; v < nv; ++v)
              e[v] = sp_.wbar(rk, vars_[static_cast<size_t>(v)]) -
                     sp_.wbar(rk1, vars_[static_cast<size_t>(v)]);
            equations_.push_back(e);
            rhs_.push_back(-(u[rk] - u[rk1]));
          } else {
            equations_.push_back(a);
            rhs_.push_back(0.0);
          }
        }
      }
      Eigen::VectorXd x;
      if (!feasible_impulses(nv, x)) return false;
      for (int v = 0; v < nv; ++v) lambda[vars_[static_cast<size_t>(v)]] = x[v];
    }

    // Velocity inequalities at v⁺.
    const Eigen::VectorXd after = u + sp_.wbar * lambda;
    const double slack = tol_ * sp_.approach_scale;
    for (size_t j = 0; j < set.size(); ++j) {
      const Mode mode = decode(codes[j], d);
      const int i = set[j];
      if (mode.kind == kSeparate) {
        if (after[i] / sp_.scale[i] < -slack) return false;
      } else if (mode.kind == kSlide || mode.kind == kSlidePair) {
        // γ = −d_k·u_t′ must be the largest −d_j·u_t′ (maximal dissipation)
        // and ≥ 0. The d_j are unit vectors of one tangent plane, so the
        // raw values compare directly; the slack uses the contact's largest
        // direction-row normalization.
        const int rk = sp_.direction_row(i, mode.k);
        double row_scale = 0.0;
        for (int k = 0; k < d; ++k) row_scale = std::max(row_scale, sp_.scale[sp_.direction_row(i, k)]);
        const double gamma = -after[rk];
        if (gamma < -slack * row_scale) return false;
        for (int k = 0; k < d; ++k)
          if (-after[sp_.direction_row(i, k)] > gamma + slack * row_scale) return false;
      }
    }
    return true;
  }

 private:
  // min ½‖A x − c‖² + ½ε‖x‖² over x ≥ 0, B x ≥ 0, as the monotone LCP of
  // its KKT conditions; accepted if A x = c holds to kResidualTolerance.
  bool feasible_impulses(int nv, Eigen::VectorXd& x) {
    const int ne = static_cast<int>(equations_.size()), ni = static_cast<int>(inequalities_.size());
    Eigen::MatrixXd a(ne, nv);
    Eigen::VectorXd c(ne);
    for (int r = 0; r < ne; ++r) {
      // Rows mix velocities and impulses; unit max-norm rows balance them.
      const double norm = equations_[static_cast<size_t>(r)].cwiseAbs().maxCoeff();
      if (norm == 0.0) {
        if (rhs_[static_cast<size_t>(r)] != 0.0) return false;  // 0 = c ≠ 0
        a.row(r).setZero();
        c[r] = 0.0;
        continue;
      }
      a.row(r) = equations_[static_cast<size_t>(r)].transpose() / norm;
      c[r] = rhs_[static_cast<size_t>(r)] / norm;
    }
    Eigen::MatrixXd q = a.transpose() * a;
    const double eps = kQpRegularization * std::max(q.diagonal().maxCoeff(), 1e-300);
    q.diagonal().array() += eps;
    Eigen::MatrixXd kkt = Eigen::MatrixXd::Zero(nv + ni, nv + ni);
    Eigen::VectorXd rhs = Eigen::VectorXd::Zero(nv + ni);
    kkt.topLeftCorner(nv, nv) = q;
    for (int r = 0; r < ni; ++r) {
      kkt.block(nv + r, 0, 1, nv) = inequalities_[static_cast<size_t>(r)].transpose();
      kkt.block(0, nv + r, nv, 1) = -inequalities_[static_cast<size_t>(r)];
    }
    rhs.head(nv) = -a.transpose() * c;
    // Only feasibility matters here (A x = c, x ≥ 0, B x ≥ 0), and it is
    // checked below on x itself; so an inaccurate QP optimum is still
    // usable (Lemke's residual test is about the KKT system, which loses
    // relative accuracy when the mode's right-hand sides nearly vanish).
    const internal::LcpResult r = internal::solve_lcp_lemke(kkt, rhs);
    if (r.status != internal::LcpStatus::kSolved && r.status != internal::LcpStatus::kInaccurate) {
      ++qp_failures;
      return false;
    }
    x = r.z.head(nv);
    polish(a, c, nv, x);
    const double size = std::max(x.cwiseAbs().maxCoeff(), 1e-300);
    for (const Eigen::VectorXd& b : inequalities_)
      if (b.dot(x) < -kResidualTolerance * size * b.cwiseAbs().sum()) return false;
    const Eigen::VectorXd residual = a * x - c;
    // Per row, relative to the row's own magnitude, with a floor at the
    // largest right-hand side: a row whose terms all nearly cancel (a slip
    // exactly between two cone directions, a contact that barely
    // approaches) is judged against the problem's scale, not against its
    // rounding noise.
    const Eigen::VectorXd magnitude = (a.cwiseAbs() * x.cwiseAbs()).cwiseMax(c.cwiseAbs());
    const double floor = c.cwiseAbs().maxCoeff();
    for (int e = 0; e < ne; ++e)
      if (std::abs(residual[e]) > kResidualTolerance * std::max({magnitude[e], floor, 1e-300}))
        return false;
    return true;
  }

  // The regularization leaves A x − c at ~1e-12 relative. Re-solving the
  // equations exactly (minimum norm) on the QP's support removes that bias;
  // the polished x is kept only if it stays in the impulse cone.
  void polish(const Eigen::MatrixXd& a, const Eigen::VectorXd& c, int nv, Eigen::VectorXd& x) const {
    std::vector<int> support;
    for (int k = 0; k < nv; ++k)
      if (x[k] > 0.0) support.push_back(k);
    if (support.empty()) return;
    Eigen::MatrixXd as(a.rows(), static_cast<Eigen::Index>(support.size()));
    for (size_t k = 0; k < support.size(); ++k) as.col(static_cast<Eigen::Index>(k)) = a.col(support[k]);
    const Eigen::VectorXd xs = as.completeOrthogonalDecomposition().solve(c);
    Eigen::VectorXd polished = Eigen::VectorXd::Zero(nv);
    for (size_t k = 0; k < support.size(); ++k) polished[support[k]] = xs[static_cast<Eigen::Index>(k)];
    const double scale = x.cwiseAbs().maxCoeff();
    if (polished.minCoeff() < -kResidualTolerance * scale) return;
    polished = polished.cwiseMax(0.0);
    for (const Eigen::VectorXd& b : inequalities_)
      if (b.dot(polished) < -kResidualTolerance * scale * b.cwiseAbs().sum()) return;
    if ((as * xs - c).cwiseAbs().maxCoeff() <= (a * x - c).cwiseAbs().maxCoeff()) x = polished;
  }

  const internal::FrictionalSpace& sp_;
  double tol_;
  std::vector<int> vars_;
  std::vector<Eigen::VectorXd> equations_, inequalities_;
  std::vector<double> rhs_;

 public:
  int qp_failures = 0;
};

// Normalized max-difference of two contact-velocity vectors.
double contact_distance(const internal::FrictionalSpace& sp, const Eigen::VectorXd& a,
                        const Eigen::VectorXd& b) {
  return ((a - b).array() / sp.scale.array()).abs().maxCoeff();
}

}  // namespace

FrictionalResult solve_anitescu_potra(const FrictionalProblem& problem,
                                      const AnitescuPotraParameters& parameters) {
  if (!(parameters.dedup_tolerance >= 0.0) || !(parameters.feasibility_tolerance >= 0.0))
    fail("anitescu_potra tolerances must be >= 0");
  if (parameters.validate_input) validate(problem);
  internal::FrictionalSpace sp;
  sp.build(problem);
  const int m = sp.m;
  FrictionalResult result;

  if (!sp.colliding(sp.u0, parameters.feasibility_tolerance)) {
    result.outcomes.resize(1);
    sp.fill_outcome(problem, Eigen::VectorXd::Zero(sp.rows()), result.outcomes[0]);
    return result;
  }

  const int per = modes_per_contact(sp);
  double combos = std::pow(static_cast<double>(per), m);
  const bool enumerate =
      parameters.all_solutions && combos <= static_cast<double>(parameters.max_mode_combinations);
  if (enumerate) {
    ModeSolver solver(sp, parameters.feasibility_tolerance);
    std::vector<int> set(static_cast<size_t>(m));
    for (int i = 0; i < m; ++i) set[static_cast<size_t>(i)] = i;
    std::vector<int> codes(static_cast<size_t>(m), 0);
    std::vector<Eigen::VectorXd> found_u;
    Eigen::VectorXd lambda;
    const std::int64_t total = static_cast<std::int64_t>(combos);
    for (std::int64_t combo = 0; combo < total; ++combo) {
      std::int64_t rest = combo;
      for (int i = 0; i < m; ++i) {
        codes[static_cast<size_t>(i)] = static_cast<int>(rest % per);
        rest /= per;
      }
      if (!solver.solve(set, codes, sp.u0, sp.ut0, lambda)) continue;
      const Eigen::VectorXd after = sp.u0 + sp.wbar * lambda;
      bool duplicate = false;
      for (const Eigen::VectorXd& seen : found_u)
        if (contact_distance(sp, seen, after) <= parameters.dedup_tolerance * sp.approach_scale)
          duplicate = true;
      if (duplicate) continue;
      found_u.push_back(after);
      FrictionalOutcome outcome;
      sp.fill_outcome(problem, lambda, outcome);
      outcome.lcps = 1;
      result.outcomes.push_back(std::move(outcome));
    }
    if (!result.outcomes.empty()) return result;
    result.message = "mode enumeration found no solution (" + std::to_string(solver.qp_failures) +
                     " feasibility QPs failed); one solution by Lemke instead";
  }

  Eigen::VectorXd lambda;
  std::string why;
  if (!internal::anitescu_potra_lemke(sp, sp.u0, {}, lambda, &why)) {
    result.status = Status::kLcpFailed;
    result.message = "Anitescu-Potra LCP: " + why + ": velocity returned unchanged";
    result.outcomes.resize(1);
    sp.fill_outcome(problem, Eigen::VectorXd::Zero(sp.rows()), result.outcomes[0]);
    result.outcomes[0].terminated = false;
    return result;
  }
  result.outcomes.resize(1);
  sp.fill_outcome(problem, lambda, result.outcomes[0]);
  result.outcomes[0].lcps = 1;
  if (!enumerate) {
    result.status = parameters.all_solutions ? Status::kBudgetExhausted : Status::kSuccess;
    if (parameters.all_solutions)
      result.message = std::to_string(per) + "^" + std::to_string(m) +
                       " mode combinations exceed max_mode_combinations: one solution (Lemke), "
                       "others may exist";
  }
  return result;
}

FrictionalResult resolve_sequential(const FrictionalProblem& problem,
                                    const SequentialParameters& parameters) {
  if (parameters.validate_input) validate(problem);
  if (parameters.max_rounds < 1) fail("sequential max_rounds ", parameters.max_rounds, " must be >= 1");
  const int m = problem.contacts();
  std::vector<int> order = parameters.order;
  if (order.empty())
    for (int i = 0; i < m; ++i) order.push_back(i);
  for (size_t p = 0; p < order.size(); ++p)
    if (order[p] < 0 || order[p] >= m)
      fail("order entry ", p, " is ", order[p], ": contacts are numbered 0 to ", m - 1);

  internal::FrictionalSpace sp;
  sp.build(problem);
  FrictionalResult result;
  result.outcomes.resize(1);
  FrictionalOutcome& out = result.outcomes[0];
  if (parameters.record_trajectory) out.trajectory.push_back(problem.velocity);

  ModeSolver solver(sp, parameters.separation_tolerance);
  const int per = modes_per_contact(sp);
  Eigen::VectorXd total = Eigen::VectorXd::Zero(sp.rows());
  Eigen::VectorXd u = sp.u0, lambda;
  const double tol = parameters.separation_tolerance;
  bool done = !sp.colliding(u, tol);
  for (int round = 0; round < parameters.max_rounds && !done; ++round) {
    for (int i : order) {
      if (!sp.colliding(u, tol)) {
        done = true;
        break;
      }
      if (u[i] / sp.scale[i] >= -tol * sp.approach_scale) continue;  // contact i not colliding
      const Eigen::VectorXd ut = sp.ut0 + sp.tbar * total;
      bool solved = false;
      // Stick first, then slides: for one contact the velocity is unique, the
      // order only picks among equal answers.
      for (int code = 1; code < per && !solved; ++code)
        solved = solver.solve({i}, {code}, u, ut, lambda);
      if (!solved && !internal::anitescu_potra_lemke(sp, u, {i}, lambda)) {
        result.status = Status::kLcpFailed;
        result.message = "single-contact impact at contact " + std::to_string(i) +
                         " found no solution: velocity of the previous impact returned";
        sp.fill_outcome(problem, total, out);
        out.terminated = false;
        return result;
      }
      ++out.lcps;
      total += lambda;
      u = sp.u0 + sp.wbar * total;
      if (parameters.record_trajectory) out.trajectory.push_back(problem.velocity + sp.y * total);
    }
    if (!sp.colliding(u, tol)) done = true;
  }
  sp.fill_outcome(problem, total, out);
  out.terminated = done;
  if (!done) {
    result.status = Status::kStepLimitReached;
    result.message = "sequential resolution still colliding after " +
                     std::to_string(parameters.max_rounds) + " rounds: colliding velocity returned";
  }
  return result;
}

}  // namespace simpact
