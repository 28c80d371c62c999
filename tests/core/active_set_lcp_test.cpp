// The sparse primal–dual active-set LCP method (core/active_set_lcp.h):
// checked by the LCP's own conditions and against the exact pivoting
// methods' outcome v⁺ = v⁻ + M⁻¹Jᵀz (unique, where z is not), on touching
// rows, random contact-like problems with dependent rows, and packed ball
// pits through the plastic law.
#include "core/active_set_lcp.h"

#include "core/lcp.h"

#include <simpact/pasquero.h>
#include <simpact/propagative.h>
#include <simpact/variational.h>
#include <simpact_scenes/core_scenes.h>
#include <simpact_scenes/random_problems.h>

#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace simpact {
namespace {

using internal::ActiveSetStats;
using internal::LcpResult;
using internal::LcpStatus;

// Accepted residual, in the units of each row's data scale: the 1e-9 every
// plastic LCP solution is held to (lcp.h, LemkeParameters).
constexpr double kResidual = 1e-9;

// Outcome agreement between two exact solutions of the same plastic LCP,
// relative to the problem's speed: both pass kResidual per row, and an
// outcome is a linear image of their impulses, so they agree to a few
// hundred times that on problems of a few hundred contacts.
constexpr double kOutcomeTolerance = 1e-7;

// The residual the Bullet adapter asks in single precision (float's unit
// roundoff 2⁻²⁴, clustering.h kPlasticResidualTolerance), and the outcome
// agreement that goes with it: a hundred × it, as kOutcomeTolerance is to
// kResidual.
constexpr double kSinglePrecisionResidual = 1.0 / 16777216.0;
constexpr double kSinglePrecisionOutcomeTolerance = 100.0 * kSinglePrecisionResidual;

struct Lcp {
  SparseColMatrix w;
  Eigen::VectorXd q, w_scale, z_scale;
};

// The plastic LCP of a problem: W = J M⁻¹ Jᵀ, q = J v, with data scales of
// the plastic law's kind (velocity max|v| √(W_ii |J_i|²), impulse that /
// W_ii; the law's own are √(2E) √W_ii + a_i, a_i = Σ_k |J_ik v_k|).
Lcp plastic_lcp(const ImpactProblem& p) {
  Lcp lcp;
  const SparseColMatrix jt = SparseColMatrix(p.normals.transpose());
  lcp.w = SparseColMatrix(p.normals * (p.inverse_mass * jt));
  lcp.w = 0.5 * (lcp.w + SparseColMatrix(lcp.w.transpose()));
  lcp.q = p.normals * p.velocity;
  const Eigen::Index k = lcp.q.size();
  lcp.w_scale.resize(k);
  lcp.z_scale.resize(k);
  const double speed = p.velocity.cwiseAbs().maxCoeff();
  for (Eigen::Index i = 0; i < k; ++i) {
    const double wii = lcp.w.coeff(i, i);
    lcp.w_scale[i] = speed * std::sqrt(wii * p.normals.row(i).squaredNorm());
    lcp.z_scale[i] = lcp.w_scale[i] / wii;
  }
  return lcp;
}

// scenes::ball_pit with its contact rows and velocities rounded to single
// precision, as single-precision Bullet gives them: rows dependent only up
// to ~1e-7.
ImpactProblem float_rounded_pit(int side, int layers, double sink, double jitter, double noise, std::uint64_t seed) {
  ImpactProblem problem = scenes::ball_pit(side, layers, sink, jitter, noise, seed);
  for (Eigen::Index i = 0; i < problem.normals.outerSize(); ++i)
    for (SparseRowMatrix::InnerIterator it(problem.normals, i); it; ++it)
      it.valueRef() = static_cast<double>(static_cast<float>(it.value()));
  for (Eigen::Index i = 0; i < problem.velocity.size(); ++i)
    problem.velocity[i] = static_cast<double>(static_cast<float>(problem.velocity[i]));
  return problem;
}

// Calls visit(problem) for every float-rounded pit of 5², 6² and 8² balls
// in 3 and 5 layers, noise 1e-3 and 1e-2, seeds 1 … `seeds`, each under a
// trace naming it.
template <class Visit>
void for_each_float_rounded_pit(std::uint64_t seeds, Visit&& visit) {
  for (const int side : {5, 6, 8}) {
    for (const int layers : {3, 5}) {
      for (const double noise : {1e-3, 1e-2}) {
        for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
          SCOPED_TRACE(std::to_string(side) + "² × " + std::to_string(layers) + " balls, noise " +
                       std::to_string(noise) + ", seed " + std::to_string(seed));
          visit(float_rounded_pit(side, layers, 0.08, 0.05, noise, seed));
        }
      }
    }
  }
}

LcpResult solve(const Lcp& lcp, ActiveSetStats* stats = nullptr) {
  return internal::solve_lcp_active_set(lcp.w, lcp.q, lcp.w_scale, lcp.z_scale, kResidual, stats);
}

/// A struck row of touching balls (W an M-matrix, every contact at rest but
/// the first): every contact is active from the start and one solve settles
/// it. The plastic outcome is the closed form: all balls move together at
/// v/N, contact i carries (N − 1 − i) v / N.
TEST(ActiveSetLcp, StruckTouchingRowSettlesInOneSolveToTheClosedForm) {
  for (const int balls : {2, 10, 1000}) {
    SCOPED_TRACE(std::to_string(balls) + " balls");
    constexpr double kSpeed = 2.0;
    const ImpactProblem problem = scenes::ball_chain(balls, kSpeed);
    const Lcp lcp = plastic_lcp(problem);
    ActiveSetStats stats;
    const LcpResult result = solve(lcp, &stats);
    ASSERT_EQ(result.status, LcpStatus::kSolved) << result.message;
    EXPECT_EQ(stats.factorizations, 1);
    EXPECT_FALSE(stats.interior);
    for (int i = 0; i + 1 < balls; ++i)
      EXPECT_NEAR(result.z[i], kSpeed * (balls - 1 - i) / balls, kResidual * kSpeed) << "contact " << i;
  }
}

/// Random contact-like LCPs (scenes::random_problem with full-rank or
/// block-diagonal M⁻¹, up to twice as many contacts as DOFs, so W is often
/// singular): whenever the method reports
/// kSolved its solution satisfies the LCP, and its outcome equals dense
/// Lemke's. It must settle on most of them (a method that always gave up
/// would pass the first two checks).
TEST(ActiveSetLcp, RandomContactProblemsGiveLemkesOutcome) {
  scenes::Random rng(20261128);
  int solved = 0, compared = 0;
  constexpr int kTrials = 200;
  for (int trial = 0; trial < kTrials; ++trial) {
    const int dofs = rng.integer(2, 20);
    const scenes::InertiaKind kind = rng.chance(0.5) ? scenes::InertiaKind::kFullRank : scenes::InertiaKind::kBlockDiagonal;
    const scenes::RandomProblem random = scenes::random_problem(rng.integer(2, 2 * dofs), dofs, kind, rng);
    const ImpactProblem& p = random.problem;
    const Lcp lcp = plastic_lcp(p);
    if (!(lcp.q.minCoeff() < 0.0)) continue;
    const LcpResult result = solve(lcp);
    ++compared;
    if (result.status != LcpStatus::kSolved) continue;
    ++solved;
    EXPECT_LE(internal::scaled_violation(result.z, result.w, lcp.w_scale, lcp.z_scale), kResidual) << trial;
    internal::LemkeParameters parameters;
    parameters.w_scale = lcp.w_scale;
    parameters.z_scale = lcp.z_scale;
    const LcpResult lemke = internal::solve_psd_lcp(Eigen::MatrixXd(lcp.w), lcp.q, parameters);
    if (lemke.status != LcpStatus::kSolved) continue;
    const Eigen::VectorXd ours = p.velocity + p.inverse_mass * (p.normals.transpose() * result.z);
    const Eigen::VectorXd reference = p.velocity + p.inverse_mass * (p.normals.transpose() * lemke.z);
    const double speed = p.velocity.cwiseAbs().maxCoeff();
    EXPECT_LE((ours - reference).cwiseAbs().maxCoeff(), kOutcomeTolerance * speed) << trial;
  }
  ASSERT_GT(compared, kTrials / 2);
  EXPECT_GE(solved, compared * 9 / 10) << solved << " of " << compared;
}

/// An infeasible PSD LCP (w₁ + w₂ = −2 whatever z is) is never reported
/// solved.
TEST(ActiveSetLcp, InfeasibleProblemIsNotReportedSolved) {
  Eigen::MatrixXd dense(2, 2);
  dense << 1.0, -1.0, -1.0, 1.0;
  const SparseColMatrix w = dense.sparseView();
  const Eigen::VectorXd q = Eigen::VectorXd::Constant(2, -1.0), scale = Eigen::VectorXd::Ones(2);
  const LcpResult result = internal::solve_lcp_active_set(w, q, scale, scale, kResidual);
  EXPECT_NE(result.status, LcpStatus::kSolved);
  EXPECT_FALSE(result.message.empty());
}

TEST(ActiveSetLcp, EmptyProblemIsSolved) {
  const LcpResult result = internal::solve_lcp_active_set(SparseColMatrix(0, 0), Eigen::VectorXd(0),
                                                          Eigen::VectorXd(0), Eigen::VectorXd(0), kResidual);
  EXPECT_EQ(result.status, LcpStatus::kSolved);
}

/// The plastic outcome's certificate, independent of any solver: v⁺ is the
/// kinetic-metric projection of v⁻ onto {J v ≥ 0} exactly when
/// v⁺ = v⁻ + M⁻¹Jᵀλ with λ ≥ 0, J v⁺ ≥ 0 and λᵢ (J v⁺)ᵢ = 0 (the
/// projection's KKT conditions; v⁺ is unique). Checked to `tolerance` × the
/// speed, complementarity per row in velocity × impulse units.
void ExpectPlasticProjection(const ImpactProblem& problem, const ImpactResult& result, double tolerance) {
  ASSERT_EQ(result.status, Status::kSuccess) << result.message;
  const Outcome& outcome = result.outcomes[0];
  const double speed = problem.velocity.cwiseAbs().maxCoeff();
  const Eigen::VectorXd& lambda = outcome.impulses;
  const Eigen::VectorXd moved = problem.velocity + problem.inverse_mass * (problem.normals.transpose() * lambda);
  EXPECT_LE((outcome.velocity - moved).cwiseAbs().maxCoeff(), tolerance * speed);
  EXPECT_GE(lambda.minCoeff(), 0.0);
  const Eigen::VectorXd after = problem.normals * outcome.velocity;
  EXPECT_GE(after.minCoeff(), -tolerance * speed);
  const double impulse = lambda.cwiseAbs().maxCoeff();
  EXPECT_LE(lambda.cwiseProduct(after).cwiseAbs().maxCoeff(), tolerance * speed * std::max(impulse, 1e-300));
  EXPECT_LE(result.energy_after, result.energy_before);
}

/// Packed ball pits (scenes::ball_pit: a lattice filling a box, so the
/// packing is locked sideways; centres moved by up to 0.1–1 mm, so the rows
/// are NEARLY dependent; every contact approaching at the mid-step share of
/// gravity): the hardest plastic LCPs measured, a locked jam with
/// degenerate rows, where neither exact method always meets the 1e-9
/// residual (box pivoting runs out of its step budget). Over a sweep of
/// pits the method alone (PlasticSolver::kActiveSet) must settle at least
/// as often as box pivoting, every solution it reports is the plastic
/// projection (certified above), and where both settle the outcomes agree.
TEST(ActiveSetLcp, PackedBallPitsGiveThePlasticProjection) {
  struct Pit {
    int side, layers;
  };
  int active_solved = 0, box_solved = 0, both = 0, total = 0;
  for (const Pit pit : {Pit{4, 3}, Pit{5, 3}, Pit{4, 5}}) {
    for (const double noise : {1e-4, 1e-3}) {
      for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        SCOPED_TRACE(std::to_string(pit.side) + "² × " + std::to_string(pit.layers) + " balls, noise " +
                     std::to_string(noise) + ", seed " + std::to_string(seed));
        constexpr double kSink = 0.08, kJitter = 0.05;
        const ImpactProblem problem = scenes::ball_pit(pit.side, pit.layers, kSink, kJitter, noise, seed);
        ASSERT_GT(problem.normals.rows(), kDensePlasticContacts);
        PropagativeParameters active, box;
        active.plastic_solver = PlasticSolver::kActiveSet;
        box.plastic_solver = PlasticSolver::kBoxPivoting;
        const ImpactResult by_active = resolve_plastic(problem, active);
        const ImpactResult by_box = resolve_plastic(problem, box);
        ++total;
        const bool a = by_active.status == Status::kSuccess, b = by_box.status == Status::kSuccess;
        active_solved += a ? 1 : 0;
        box_solved += b ? 1 : 0;
        if (a) ExpectPlasticProjection(problem, by_active, kOutcomeTolerance);
        if (!a || !b) continue;
        ++both;
        const double speed = problem.velocity.cwiseAbs().maxCoeff();
        EXPECT_LE((by_active.outcomes[0].velocity - by_box.outcomes[0].velocity).cwiseAbs().maxCoeff(),
                  kOutcomeTolerance * speed);
      }
    }
  }
  EXPECT_GE(active_solved, box_solved);
  EXPECT_GE(active_solved, total / 2) << active_solved << " of " << total;
  EXPECT_GE(both, total / 3);
}

/// The automatic chain (above kDensePlasticContacts: the active set where
/// W's factor is cheap, then box pivoting) on the same pits: whatever it
/// reports solved is the plastic projection, and it solves every pit box
/// pivoting, its last resort, solves alone.
TEST(ActiveSetLcp, AutomaticChainSolvesWhatBoxPivotingSolves) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const ImpactProblem problem = scenes::ball_pit(4, 3, 0.08, 0.05, 1e-4, seed);
    PropagativeParameters automatic, box;
    box.plastic_solver = PlasticSolver::kBoxPivoting;
    const ImpactResult result = resolve_plastic(problem, automatic);
    if (resolve_plastic(problem, box).status == Status::kSuccess || result.status == Status::kSuccess)
      ExpectPlasticProjection(problem, result, kOutcomeTolerance);
  }
}

/// The polish (step 3) on its own: from a solution of a packed pit's LCP
/// disturbed by 1e-8 of each row's impulse scale (so the residual check
/// fails), its sweeps keep z ≥ 0 and w = W z + q and bring the residual
/// back within the tolerance.
// A packed pit's plastic LCP (5² × 3 balls) and its solution with every
// impulse moved by up to `size` × its scale (clipped at 0), for the polish.
struct Disturbed {
  Lcp lcp;
  Eigen::VectorXd z;
};
Disturbed disturbed_pit_solution(double size) {
  Disturbed d{plastic_lcp(scenes::ball_pit(5, 3, 0.08, 0.05, 1e-2, 3)), {}};
  const LcpResult exact = solve(d.lcp);
  EXPECT_EQ(exact.status, LcpStatus::kSolved) << exact.message;
  scenes::Random rng(20261128);
  d.z = exact.z;
  for (Eigen::Index i = 0; i < d.z.size(); ++i)
    d.z[i] = std::max(0.0, d.z[i] + size * d.lcp.z_scale[i] * rng.uniform(-1.0, 1.0));
  return d;
}

TEST(ActiveSetLcp, PolishTakesADisturbedSolutionBackWithinTheResidual) {
  const Disturbed disturbed = disturbed_pit_solution(1e-8);
  const Lcp& lcp = disturbed.lcp;
  Eigen::VectorXd z = disturbed.z;
  Eigen::VectorXd w = lcp.w * z + lcp.q;
  ASSERT_GT(internal::scaled_violation(z, w, lcp.w_scale, lcp.z_scale), 3 * kResidual);
  internal::polish_lcp(lcp.w, z, w);
  EXPECT_GE(z.minCoeff(), 0.0);
  const Eigen::VectorXd direct = lcp.w * z + lcp.q;
  EXPECT_LE((w - direct).cwiseQuotient(lcp.w_scale).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LE(internal::scaled_violation(z, w, lcp.w_scale, lcp.z_scale), kResidual);
}

/// The final polish's length on its own: from the same pit's solution
/// disturbed by 1e-6 of each impulse scale, the short polish
/// (kActiveSetPolishSweeps) does not reach the residual and the final one
/// (kActiveSetFinalPolishSweeps) does — the sweeps keep converging where a
/// few of them stop short.
TEST(ActiveSetLcp, FinalPolishGoesFurtherThanTheShortOne) {
  const Disturbed disturbed = disturbed_pit_solution(1e-6);
  const Lcp& lcp = disturbed.lcp;
  const Eigen::VectorXd& z = disturbed.z;
  const Eigen::VectorXd w = lcp.w * z + lcp.q;
  Eigen::VectorXd short_z = z, short_w = w, long_z = z, long_w = w;
  internal::polish_lcp(lcp.w, short_z, short_w, internal::kActiveSetPolishSweeps);
  internal::polish_lcp(lcp.w, long_z, long_w, internal::kActiveSetFinalPolishSweeps);
  EXPECT_GT(internal::scaled_violation(short_z, short_w, lcp.w_scale, lcp.z_scale), kResidual);
  EXPECT_LE(internal::scaled_violation(long_z, long_w, lcp.w_scale, lcp.z_scale), kResidual);
  EXPECT_GE(long_z.minCoeff(), 0.0);
}

/// Packed pits whose contact rows are rounded to single precision, as
/// single-precision Bullet gives them: rows dependent only up to ~1e-7, on
/// which the interior point's iterates can stall just above the residual.
/// Some of them are solved by the polish (which one depends on rounding, so
/// the test counts), and every one the polish solves passes the residual
/// check and, through the plastic law, is the plastic projection.
TEST(ActiveSetLcp, PitsWithSinglePrecisionRowsAreSolvedByThePolish) {
  int polished = 0, final_polished = 0, total = 0;
  for_each_float_rounded_pit(3, [&](const ImpactProblem& problem) {
    const Lcp lcp = plastic_lcp(problem);
    ActiveSetStats stats;
    const LcpResult result = solve(lcp, &stats);
    ++total;
    if (!stats.polished) return;
    ++polished;
    if (stats.final_polish) ++final_polished;
    ASSERT_EQ(result.status, LcpStatus::kSolved) << result.message;
    EXPECT_LE(internal::scaled_violation(result.z, result.w, lcp.w_scale, lcp.z_scale), kResidual);
    PropagativeParameters active;
    active.plastic_solver = PlasticSolver::kActiveSet;
    const ImpactResult plastic = resolve_plastic(problem, active);
    if (plastic.status == Status::kSuccess) ExpectPlasticProjection(problem, plastic, kOutcomeTolerance);
  });
  RecordProperty("polished", polished);
  RecordProperty("final_polished", final_polished);
  EXPECT_GE(polished, 1) << "of " << total;
  EXPECT_GE(final_polished, 1) << "of " << total;
}

/// PropagativeParameters::plastic_residual_tolerance reaches the plastic
/// solvers: on packed pits whose rows are rounded to single precision, the
/// sparse solver alone (kActiveSet) settles strictly more of them at 2⁻²⁴
/// (what the Bullet adapter asks in single precision) than at the default
/// 1e-9, and each one it settles at 2⁻²⁴ is the plastic projection to
/// kSinglePrecisionOutcomeTolerance.
TEST(ActiveSetLcp, PlasticResidualToleranceSettlesSinglePrecisionPits) {
  int strict_solved = 0, loose_solved = 0, total = 0;
  for_each_float_rounded_pit(2, [&](const ImpactProblem& problem) {
    PropagativeParameters strict;
    strict.plastic_solver = PlasticSolver::kActiveSet;
    PropagativeParameters relaxed = strict;
    relaxed.plastic_residual_tolerance = kSinglePrecisionResidual;
    ++total;
    strict_solved += resolve_plastic(problem, strict).status == Status::kSuccess;
    const ImpactResult result = resolve_plastic(problem, relaxed);
    if (result.status != Status::kSuccess) return;
    ++loose_solved;
    ExpectPlasticProjection(problem, result, kSinglePrecisionOutcomeTolerance);
  });
  RecordProperty("settled_at_1e-9", strict_solved);
  RecordProperty("settled_at_2^-24", loose_solved);
  EXPECT_GT(loose_solved, strict_solved) << "of " << total;
}

/// Box pivoting honours the tolerance too: a float-rounded pit (6² × 5
/// balls) it leaves at 1e-9 (its pivoting stops at its step limit a few
/// decision tolerances short on dependent rows) and settles at 2⁻²⁴, as the
/// plastic projection. (No smaller pit of 4–5² × 3–5 balls, noise 1e-3 or
/// 1e-2, seeds 1–4, shows the difference.)
TEST(PlasticResidualTolerance, ReachesBoxPivoting) {
  const ImpactProblem problem = float_rounded_pit(6, 5, 0.08, 0.05, 1e-3, 1);
  PropagativeParameters box;
  box.plastic_solver = PlasticSolver::kBoxPivoting;
  EXPECT_EQ(resolve_plastic(problem, box).status, Status::kLcpFailed);
  box.plastic_residual_tolerance = kSinglePrecisionResidual;
  ExpectPlasticProjection(problem, resolve_plastic(problem, box), kSinglePrecisionOutcomeTolerance);
}

/// PropagativeParameters::plastic_residual_tolerance out of its range is
/// refused by name, by both entry points, before any work; both ends of
/// the range are accepted (a struck touching row, which Lemke solves to
/// rounding, settles at either).
TEST(PlasticResidualTolerance, IsValidated) {
  const ImpactProblem problem = scenes::ball_pit(3, 2, 0.08, 0.05, 1e-3, 1);
  for (const double bad : {0.0, -1e-9, std::nan(""), std::numeric_limits<double>::infinity(),
                           0.5 * kMinPlasticResidualTolerance, 2.0 * kMaxPlasticResidualTolerance}) {
    SCOPED_TRACE(bad);
    PropagativeParameters parameters;
    parameters.plastic_residual_tolerance = bad;
    for (const bool plastic_only : {false, true}) {
      try {
        if (plastic_only)
          resolve_plastic(problem, parameters);
        else
          resolve(problem, parameters);
        ADD_FAILURE() << "accepted";
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("plastic_residual_tolerance"), std::string::npos) << e.what();
      }
    }
  }
  for (const double edge : {kMinPlasticResidualTolerance, kMaxPlasticResidualTolerance}) {
    PropagativeParameters parameters;
    parameters.plastic_residual_tolerance = edge;
    const ImpactResult at_edge = resolve_plastic(scenes::ball_chain(10, 2.0), parameters);
    EXPECT_EQ(at_edge.status, Status::kSuccess) << edge << ": " << at_edge.message;
  }
}

/// The other laws' internal plastic solves take the same parameter:
/// Pasquero's plastic fallback at its iteration cap and the variational
/// law's enumeration (every sequence capped at one reflection ends in the
/// plastic outcome) return resolve_plastic's outcome at the tolerance they
/// are given. The pit (8² × 3 float-rounded balls, the first of
/// for_each_float_rounded_pit's whose plastic outcome the tolerance
/// changes) settles at both tolerances with different bits, which the test
/// asserts, so it fails if either law ignores the parameter. Out-of-range
/// values are refused by name, naming the law's parameter struct.
TEST(PlasticResidualTolerance, ReachesPasqueroAndVariational) {
  const ImpactProblem problem = float_rounded_pit(8, 3, 0.08, 0.05, 1e-3, 1);
  std::vector<Eigen::VectorXd> plastic;
  for (const double tolerance : {kResidual, kSinglePrecisionResidual}) {
    PropagativeParameters parameters;
    parameters.plastic_residual_tolerance = tolerance;
    const ImpactResult result = resolve_plastic(problem, parameters);
    ASSERT_EQ(result.status, Status::kSuccess) << tolerance << ": " << result.message;
    plastic.push_back(result.outcomes[0].velocity);
  }
  ASSERT_FALSE(plastic[0] == plastic[1]) << "the tolerance no longer changes this pit's plastic outcome";
  for (int k = 0; k < 2; ++k) {
    const double tolerance = k == 0 ? kResidual : kSinglePrecisionResidual;
    SCOPED_TRACE(tolerance);
    PasqueroParameters pasquero;
    pasquero.max_iterations = 1;
    pasquero.plastic_residual_tolerance = tolerance;
    const PasqueroResult by_pasquero = resolve_pasquero(problem, pasquero);
    ASSERT_EQ(by_pasquero.status, Status::kReflectionCapReached) << by_pasquero.message;
    EXPECT_TRUE(by_pasquero.velocity == plastic[static_cast<size_t>(k)]);
    VariationalParameters variational;
    variational.max_reflections = 1;
    variational.plastic_residual_tolerance = tolerance;
    const VariationalResult by_variational = resolve_variational(problem, variational);
    EXPECT_TRUE(by_variational.on_vertex) << by_variational.message;
    // One vertex: the projection returns it up to its own rounding, far
    // below the two tolerances' difference.
    EXPECT_LE((by_variational.velocity - plastic[static_cast<size_t>(k)]).cwiseAbs().maxCoeff(),
              1e-3 * (plastic[0] - plastic[1]).cwiseAbs().maxCoeff())
        << by_variational.message;
  }
  const ImpactProblem chain = scenes::ball_chain(10, 2.0);
  PasqueroParameters pasquero;
  pasquero.plastic_residual_tolerance = 2.0 * kMaxPlasticResidualTolerance;
  VariationalParameters variational;
  variational.plastic_residual_tolerance = std::nan("");
  const auto refused = [](auto&& call, const std::string& owner) {
    try {
      call();
      ADD_FAILURE() << owner << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(owner + ": plastic_residual_tolerance"), std::string::npos) << e.what();
    }
  };
  refused([&] { resolve_pasquero(chain, pasquero); }, "PasqueroParameters");
  refused([&] { resolve_variational(chain, variational); }, "VariationalParameters");
}

TEST(ActiveSetLcp, IsDeterministic) {
  const ImpactProblem problem = scenes::ball_pit(5, 4, 0.08, 0.05, 1e-4, 7);
  const Lcp lcp = plastic_lcp(problem);
  const LcpResult a = solve(lcp), b = solve(lcp);
  ASSERT_EQ(a.status, b.status);
  EXPECT_TRUE(a.z == b.z);
}

}  // namespace
}  // namespace simpact
