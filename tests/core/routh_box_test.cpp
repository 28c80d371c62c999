// Box pivoting for the Routh increment (routh.h "LCP solvers", routh_box.h):
// the reformulation must give solutions of Halm & Posa's eq. (75) itself
// (checked by that LCP's residual, not by the box form's), agree with Lemke
// where the solution is unique, and leave sample k independent of the
// samples drawn before it. The law's closed forms and properties under box
// pivoting are routh_test.cpp's tests, run for both solvers.
#include "support/compare.h"
#include "support/random_frictional.h"

#include "core/frictional_space.h"
#include "core/lcp.h"
#include "core/routh_box.h"

#include <simpact/routh.h>
#include <simpact_scenes/frictional_scenes.h>

#include <gtest/gtest.h>

#include <Eigen/LU>

#include <cmath>
#include <random>

namespace simpact {
namespace {

using testing::random_frictional;
using testing::VectorsNear;

/// Lemke's acceptance threshold on the data-scaled residual (lcp.h): the
/// box solution of eq. (75) is held to the same.
constexpr double kResidual = 1e-9;
/// Velocity agreement of two exact solvers on a unique solution: each is
/// within ~1e-14 of it (a direct solve of a well-conditioned system);
/// 1e-11 of the largest approach speed leaves three orders for the
/// condition numbers of the random problems (M⁻¹ eigenvalues 0.1 … ~30).
constexpr double kSameSolution = 1e-11;

// The increment LCP of routh.h for a problem, caps and velocity rows.
struct Increment {
  internal::FrictionalSpace space;
  Eigen::MatrixXd matrix;       // W of eq. (75)
  Eigen::VectorXd w_scale, z_scale, velocity_scale;
  double step = 0.0;
};

Increment increment_of(const FrictionalProblem& p) {
  Increment inc;
  internal::FrictionalSpace& sp = inc.space;
  sp.build(p);
  const int m = sp.m, d = sp.d, rows = sp.rows(), size = (3 + d) * m;
  inc.matrix = Eigen::MatrixXd::Zero(size, size);
  inc.matrix.bottomRightCorner(size - m, size - m) = internal::anitescu_potra_matrix(sp, {});
  for (int i = 0; i < m; ++i) {
    inc.matrix(i, m + i) = -1.0;
    inc.matrix(m + i, i) = 1.0;
  }
  double largest = 0.0;
  for (int i = 0; i < m; ++i) largest = std::max(largest, -sp.u0[i] / sp.wbar(i, i));
  inc.step = 2.0 * largest;
  // routh.cpp's data scales.
  inc.velocity_scale.resize(rows);
  for (int j = 0; j < rows; ++j)
    inc.velocity_scale[j] = std::max(sp.speed_scale * sp.scale[j] + sp.magnitude[j], 1e-300);
  inc.w_scale.resize(size);
  inc.z_scale.resize(size);
  for (int i = 0; i < m; ++i) {
    const double friction_impulse = inc.step * std::max(1.0, sp.mu[i]);
    double sliding = 0.0;
    for (int k = 0; k < d; ++k) sliding = std::max(sliding, inc.velocity_scale[sp.direction_row(i, k)]);
    inc.z_scale[i] = inc.velocity_scale[i];
    inc.w_scale[i] = inc.step;
    inc.z_scale[m + i] = inc.step;
    inc.w_scale[m + i] = inc.velocity_scale[i];
    for (int k = 0; k < d; ++k) {
      const int row = sp.direction_row(i, k);
      inc.z_scale[m + row] = friction_impulse;
      inc.w_scale[m + row] = inc.velocity_scale[row];
    }
    inc.z_scale[m + rows + i] = sliding;
    inc.w_scale[m + rows + i] = friction_impulse;
  }
  return inc;
}

Eigen::VectorXd random_caps(std::mt19937& rng, const Increment& inc) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const int m = inc.space.m, size = static_cast<int>(inc.matrix.rows());
  Eigen::VectorXd q = Eigen::VectorXd::Zero(size);
  for (int i = 0; i < m; ++i) q[i] = inc.step * unit(rng);
  q.segment(m, inc.space.rows()) = inc.space.u0;
  return q;
}

struct Shape {
  int n, m;
  bool planar;
  double max_friction;
};

class BoxIncrement : public ::testing::TestWithParam<Shape> {};

// Every box solution is a solution of eq. (75) to Lemke's residual tolerance.
// The box solve may give up (the sampler then asks Lemke): on these random
// problems, with no contact structure and μ up to 1.5, it may do so at most
// once in fifty.
TEST_P(BoxIncrement, SolvesTheIncrementLcpOfHalmAndPosa) {
  const Shape shape = GetParam();
  std::mt19937 rng(17);
  int solved = 0, attempts = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    FrictionalProblem p = random_frictional(seed * 31 + 5, shape.n, shape.m, shape.planar).problem;
    p.friction *= shape.max_friction / 1.5;
    const Increment inc = increment_of(p);
    internal::RouthBoxIncrement box;
    ASSERT_TRUE(internal::RouthBoxIncrement::applicable(inc.space));
    box.build(p, inc.space, inc.velocity_scale, inc.step);
    // Cold until a solve leaves a state (routh.cpp retries a failed solve
    // from a cold start only when it did not start cold).
    EXPECT_FALSE(box.warm());
    for (int draw = 0; draw < 5; ++draw) {
      const Eigen::VectorXd q = random_caps(rng, inc);
      Eigen::VectorXd z;
      ++attempts;
      const bool ok = box.solve(q, z);
      EXPECT_TRUE(box.warm());
      if (!ok) {
        box.reset();
        EXPECT_FALSE(box.warm());
        continue;
      }
      const Eigen::VectorXd w = inc.matrix * z + q;
      EXPECT_LE(internal::scaled_violation(z, w, inc.w_scale, inc.z_scale), kResidual)
          << "seed " << seed << ", draw " << draw;
      EXPECT_GE(z.minCoeff(), 0.0);
      ++solved;
    }
  }
  EXPECT_GE(solved, attempts - attempts / 50) << solved << " of " << attempts;
}

// Without friction and with W_nn positive definite the capped increment
// (a strictly convex box QP) has one solution: both solvers must find it.
TEST_P(BoxIncrement, FrictionlessAgreesWithLemke) {
  const Shape shape = GetParam();
  std::mt19937 rng(23);
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    FrictionalProblem p = random_frictional(seed * 131 + 3, shape.n, shape.m, shape.planar).problem;
    p.friction.setZero();
    const Increment inc = increment_of(p);
    const int m = inc.space.m;
    const Eigen::MatrixXd wnn = inc.space.wbar.topLeftCorner(m, m);
    if (Eigen::FullPivLU<Eigen::MatrixXd>(wnn).rank() < m) continue;
    internal::RouthBoxIncrement box;
    box.build(p, inc.space, inc.velocity_scale, inc.step);
    const Eigen::VectorXd q = random_caps(rng, inc);
    Eigen::VectorXd z;
    ASSERT_TRUE(box.solve(q, z));
    internal::LemkeParameters lemke;
    lemke.w_scale = inc.w_scale;
    lemke.z_scale = inc.z_scale;
    const internal::LcpResult reference = internal::solve_lcp_lemke(inc.matrix, q, lemke);
    ASSERT_EQ(reference.status, internal::LcpStatus::kSolved) << reference.message;
    const int rows = inc.space.rows();
    const Eigen::VectorXd u_box = inc.space.u0 + inc.space.wbar * z.segment(m, rows);
    const Eigen::VectorXd u_lemke = inc.space.u0 + inc.space.wbar * reference.z.segment(m, rows);
    const double speed = inc.space.u0.head(m).cwiseAbs().maxCoeff();
    EXPECT_TRUE(VectorsNear(u_box.head(m), u_lemke.head(m), kSameSolution * speed, 0.0)) << "seed " << seed;
    EXPECT_TRUE(VectorsNear(z.segment(m, m), reference.z.segment(m, m), kSameSolution * inc.step, 0.0))
        << "seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(Problems, BoxIncrement,
                         ::testing::Values(Shape{3, 1, true, 1.5}, Shape{6, 2, true, 1.5},
                                           Shape{9, 3, false, 1.5}, Shape{12, 4, false, 0.3},
                                           Shape{18, 5, false, 1.5}, Shape{12, 5, true, 1.5}));

TEST(BoxIncrement, CoversDFourInThreeDimensionsAndThePlane) {
  const auto planar = random_frictional(1, 6, 2, true).problem;
  auto spatial = random_frictional(2, 6, 2, false).problem;
  internal::FrictionalSpace a, b, c;
  a.build(planar);
  b.build(spatial);
  spatial.cone_directions = 6;
  c.build(spatial);
  EXPECT_TRUE(internal::RouthBoxIncrement::applicable(a));
  EXPECT_TRUE(internal::RouthBoxIncrement::applicable(b));
  EXPECT_FALSE(internal::RouthBoxIncrement::applicable(c));
}

// The automatic choice: Lemke at or below kLemkeIncrementContacts (bit for
// bit the Lemke solver's sample), box pivoting above.
TEST(RouthBoxPivoting, AutomaticKeepsLemkeForSmallClusters) {
  const FrictionalProblem small = scenes::falling_box_stack(2);  // 8 contacts
  ASSERT_EQ(small.contacts(), kLemkeIncrementContacts);
  RouthParameters automatic, lemke, box;
  lemke.increment_solver = IncrementSolver::kLemke;
  box.increment_solver = IncrementSolver::kBoxPivoting;
  const FrictionalOutcome a = sample_routh(small, automatic).outcomes[0];
  const FrictionalOutcome l = sample_routh(small, lemke).outcomes[0];
  for (Eigen::Index j = 0; j < a.velocity.size(); ++j) EXPECT_EQ(a.velocity[j], l.velocity[j]);
  const FrictionalProblem large = scenes::falling_box_stack(3);  // 12 contacts
  const FrictionalOutcome a3 = sample_routh(large, automatic).outcomes[0];
  const FrictionalOutcome b3 = sample_routh(large, box).outcomes[0];
  for (Eigen::Index j = 0; j < a3.velocity.size(); ++j) EXPECT_EQ(a3.velocity[j], b3.velocity[j]);
}

// Sample k is sample k whatever ran before it: the pivoting's warm state is
// reset per sample, so the set is bitwise identical for any thread count.
TEST(RouthBoxPivoting, SetIsBitwiseIdenticalForAnyThreadCount) {
  const FrictionalProblem p = scenes::falling_box_stack(4);
  RouthParameters params;
  params.increment_solver = IncrementSolver::kBoxPivoting;
  RouthSampler sampler(p, params);
  RouthSetParameters one, two;
  one.samples = two.samples = 24;
  one.threads = 1;
  two.threads = 2;
  const RouthOutcomeSet a = sampler.approximate(one), b = sampler.approximate(two);
  for (int k = 0; k < one.samples; ++k)
    for (Eigen::Index j = 0; j < a.velocities.rows(); ++j) ASSERT_EQ(a.velocities(j, k), b.velocities(j, k));
  // And sample 5 alone is column 5.
  const FrictionalOutcome five = sampler.sample(5).outcomes[0];
  for (Eigen::Index j = 0; j < a.velocities.rows(); ++j) EXPECT_EQ(five.velocity[j], a.velocities(j, 5));
}

// A sample stopped by max_steps finishes with one Anitescu–Potra LCP
// (routh.h, "FALLBACK"); under box pivoting that LCP is the increment
// without caps, solved by box pivoting too, and must end the impact.
TEST(RouthBoxPivoting, AnitescuPotraFallbackEndsTheImpact) {
  const FrictionalProblem p = scenes::falling_box_stack(4);  // 16 contacts
  RouthParameters params;
  params.increment_solver = IncrementSolver::kBoxPivoting;
  params.max_steps = 1;
  // With the simultaneous step one increment ends this impact
  // (AutomaticStep tests below); the single-contact step's does not.
  params.automatic_step = AutomaticStep::kSingleContact;
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    params.seed = seed;
    const FrictionalResult r = sample_routh(p, params);
    ASSERT_EQ(r.status, Status::kStepLimitReached) << r.message;
    const FrictionalOutcome& o = r.outcomes[0];
    EXPECT_TRUE(o.finished_by_fallback);
    EXPECT_EQ(o.increment_fallbacks, 0);
    EXPECT_GE(o.normal_velocities.minCoeff(), -1e-8 * 0.44) << "seed " << seed;
    EXPECT_LT(o.energy_change, 0.0);
  }
}

TEST(RouthBoxPivoting, SolverNamesRoundTrip) {
  for (IncrementSolver s : {IncrementSolver::kAutomatic, IncrementSolver::kLemke, IncrementSolver::kBoxPivoting})
    EXPECT_EQ(parse_increment_solver(to_string(s)), s);
  EXPECT_THROW(parse_increment_solver("dantzig"), InvalidProblem);
}

// ── The automatic step (routh.h, "Automatic step") ─────────────────────────

/// A planar column of `bodies` unit point masses (x, y each), stacked on the
/// ground along y and falling together at `speed`: contact 0 ground → body
/// 0, contact j body j−1 → body j, normal +y, tangent +x, μ = 1. Only the
/// ground contact approaches. W_nn is tridiagonal and positive definite, so
/// the frictionless simultaneous impact is unique: the column stops, contact
/// j takes (bodies − j) · speed. The ground contact alone would stop body 0
/// with Λ_0 = speed (W_00 = 1).
FrictionalProblem point_column(int bodies, double speed) {
  const int n = 2 * bodies;
  Eigen::MatrixXd normals = Eigen::MatrixXd::Zero(bodies, n), tangents = normals;
  for (int j = 0; j < bodies; ++j) {
    normals(j, 2 * j + 1) = 1.0;
    tangents(j, 2 * j) = 1.0;
    if (j > 0) {
      normals(j, 2 * j - 1) = -1.0;
      tangents(j, 2 * j - 2) = -1.0;
    }
  }
  Eigen::VectorXd velocity = Eigen::VectorXd::Zero(n);
  for (int j = 0; j < bodies; ++j) velocity[2 * j + 1] = -speed;
  return FrictionalProblem::from_dense(Eigen::MatrixXd::Identity(n, n), normals, tangents, velocity,
                                       Eigen::VectorXd::Ones(bodies));
}

/// h is a sum of exact products and one pivoting solve of a tridiagonal
/// system: agreement to 1e-12 relative leaves four orders above rounding.
constexpr double kStepAgreement = 1e-12;

TEST(RouthAutomaticStep, ClosedFormsOnAColumnInSeries) {
  constexpr double kSpeed = 0.7;
  for (const int bodies : {1, 3, 12}) {
    SCOPED_TRACE(bodies);
    const FrictionalProblem p = point_column(bodies, kSpeed);
    // Contact j stops bodies − j bodies: h_j = 2 max(speed, (bodies − j) speed).
    Eigen::VectorXd per_contact(bodies);
    for (int j = 0; j < bodies; ++j) per_contact[j] = 2.0 * (bodies - j) * kSpeed;
    const Eigen::VectorXd single = Eigen::VectorXd::Constant(bodies, 2.0 * kSpeed);
    RouthParameters params;
    params.automatic_step = AutomaticStep::kSingleContact;
    EXPECT_TRUE(VectorsNear(RouthSampler(p, params).cap_scales(), single, 0.0, kStepAgreement));
    EXPECT_NEAR(RouthSampler(p, params).step(), 2.0 * kSpeed, kStepAgreement);
    params.automatic_step = AutomaticStep::kSimultaneous;
    EXPECT_TRUE(VectorsNear(RouthSampler(p, params).cap_scales(), per_contact, 0.0, kStepAgreement * bodies));
    EXPECT_NEAR(RouthSampler(p, params).step(), 2.0 * bodies * kSpeed, kStepAgreement * bodies);
    // kAutomatic: single-contact up to kLemkeIncrementContacts contacts.
    params.automatic_step = AutomaticStep::kAutomatic;
    EXPECT_TRUE(VectorsNear(RouthSampler(p, params).cap_scales(),
                            bodies > kLemkeIncrementContacts ? per_contact : single, 0.0,
                            kStepAgreement * bodies));
    // A step the user sets is every contact's, whatever the rule.
    params.step = 0.125;
    EXPECT_TRUE(VectorsNear(RouthSampler(p, params).cap_scales(), Eigen::VectorXd::Constant(bodies, 0.125), 0.0, 0.0));
    EXPECT_EQ(RouthSampler(p, params).step(), 0.125);
  }
}

TEST(RouthAutomaticStep, SimultaneousScalesNeverBelowTheSingleContactStep) {
  // Contacts in parallel share a stop, each taking less than it would
  // alone; every contact keeps at least the single-contact scale, and h is
  // the largest h_i.
  for (int trial = 0; trial < 50; ++trial) {
    const FrictionalProblem p =
        random_frictional(20261127 + static_cast<std::uint64_t>(trial), 6, 1 + trial % 5, trial % 2 == 0).problem;
    RouthParameters single, simultaneous;
    single.automatic_step = AutomaticStep::kSingleContact;
    simultaneous.automatic_step = AutomaticStep::kSimultaneous;
    const RouthSampler a(p, single), b(p, simultaneous);
    EXPECT_GE(b.cap_scales().minCoeff(), a.step()) << trial;
    EXPECT_EQ(b.step(), b.cap_scales().maxCoeff()) << trial;
  }
}

TEST(RouthAutomaticStep, FewerIncrementsOnAStackAndEverySampleIsTheLaws) {
  // A column of 8 boxes (32 contacts) landing: the ground corners must stop
  // all eight boxes. Every sample must pass the law's final checks (status
  // success: non-colliding, cone, ΔE ≤ 0) by Algorithm 1 itself, with at
  // most half the single-contact rule's increments on average (measured:
  // ~4.8 against ~15.8 over these samples; the bound leaves room).
  const FrictionalProblem p = scenes::falling_box_stack(8);
  RouthParameters params;
  params.increment_solver = IncrementSolver::kBoxPivoting;
  double lcps[2] = {0.0, 0.0};
  constexpr int kSamples = 6;
  for (int rule = 0; rule < 2; ++rule) {
    params.automatic_step = rule == 0 ? AutomaticStep::kSingleContact : AutomaticStep::kSimultaneous;
    const RouthSampler sampler(p, params);
    for (int k = 0; k < kSamples; ++k) {
      const FrictionalResult r = sampler.sample(static_cast<std::uint64_t>(k));
      ASSERT_EQ(r.status, Status::kSuccess) << r.message;
      const FrictionalOutcome& o = r.outcomes[0];
      EXPECT_TRUE(o.terminated);
      EXPECT_FALSE(o.finished_by_fallback);
      EXPECT_GE(o.normal_velocities.minCoeff(), -1e-8 * 0.44);
      EXPECT_LT(o.energy_change, 0.0);
      // Vertical momentum (unit masses): only the ground corners (contacts
      // 0–3) push the column up, friction acts along x and z, so
      // Σ ground λ_n = Σ_j (v⁺_y,j − v⁻_y,j); and every box ends not
      // falling (the column has landed).
      double momentum = 0.0;
      for (int box = 0; box < 8; ++box) {
        momentum += o.velocity[6 * box + 1] - p.velocity[6 * box + 1];
        EXPECT_GE(o.velocity[6 * box + 1], -1e-8 * 0.44) << "box " << box;
      }
      EXPECT_NEAR(o.normal_impulses.head(4).sum(), momentum, 1e-12 * 8 * 0.44);
      lcps[rule] += o.lcps;
    }
  }
  EXPECT_LE(lcps[1], 0.5 * lcps[0]) << "single-contact " << lcps[0] / kSamples << ", simultaneous "
                                     << lcps[1] / kSamples << " LCPs per sample";
}

TEST(RouthAutomaticStep, NamesRoundTrip) {
  for (AutomaticStep s : {AutomaticStep::kAutomatic, AutomaticStep::kSingleContact, AutomaticStep::kSimultaneous})
    EXPECT_EQ(parse_automatic_step(to_string(s)), s);
  EXPECT_THROW(parse_automatic_step("cluster"), InvalidProblem);
}

}  // namespace
}  // namespace simpact
