// Routh set-valued sampling (Halm & Posa, §5): the single-contact closed form,
// Theorem 7 (every increment dissipates), non-penetration, termination,
// Lemma 8, determinism across threads and seeds, low-discrepancy sampling,
// validation.
#include "support/compare.h"
#include "support/random_frictional.h"

#include <simpact/frictional_reference.h>
#include <simpact/routh.h>
#include <simpact_scenes/frictional_scenes.h>

#include <gtest/gtest.h>

#include <Eigen/LU>

#include <cmath>
#include <set>
#include <vector>

namespace simpact {
namespace {

using testing::planar_point;
using testing::random_frictional;
using testing::routh_single_contact;
using testing::VectorsNear;

/// Lemke solves each increment to ~1e-15 relative; a sample chains ≤ 10
/// increments, and the closed form's own arithmetic is a few operations:
/// 1e-12 relative to the pre-impact speed is a 100× margin.
constexpr double kClosedForm = 1e-12;
/// Energy increase allowed per increment, relative to the energy: rounding
/// of ½vᵀMv with M's condition number ≲ 1e3 in the random problems.
constexpr double kDissipationSlack = 1e-12;
/// Non-penetration after the law, relative to the largest pre-impact
/// approach speed: the law's separation_tolerance is 1e-9 of the
/// g-normalized speed; W_ii ≤ ~20 in the random problems, so 1e-8 covers it.
constexpr double kPenetrationSlack = 1e-8;

double energy(const Eigen::MatrixXd& mass, const Eigen::VectorXd& v) { return 0.5 * v.dot(mass * v); }

struct SingleCase {
  double rx, ry, vx, vy, w, mu, step;
};

class SingleContactRouth : public ::testing::TestWithParam<SingleCase> {};

// On one contact the discrete law IS Routh's method, for every step h: an
// increment that ends with the contact stuck solves u_t′ = 0, which fixes
// its tangential impulse exactly as the continuous stick phase does.
TEST_P(SingleContactRouth, MatchesTheClosedFormForAnyStep) {
  const SingleCase c = GetParam();
  const FrictionalProblem p =
      planar_point(2.0, 0.3, c.rx, c.ry, Eigen::Vector3d(c.vx, c.vy, c.w), c.mu);
  const Eigen::MatrixXd jn = Eigen::MatrixXd(p.normals), jt = Eigen::MatrixXd(p.tangents);
  const Eigen::MatrixXd minv = Eigen::MatrixXd(p.inverse_mass);
  const double a = (jn * minv * jn.transpose())(0, 0), b = (jn * minv * jt.transpose())(0, 0),
               cc = (jt * minv * jt.transpose())(0, 0);
  const double un = jn.row(0).dot(p.velocity), ut = jt.row(0).dot(p.velocity);
  ASSERT_LT(un, 0.0);
  ASSERT_LE(std::abs(b / cc), c.mu) << "the closed form covers slip that ends in sticking";
  const auto expected = routh_single_contact(a, b, cc, un, ut, c.mu);
  const Eigen::VectorXd v_expected = p.velocity + minv * (jn.row(0).transpose() * expected.normal +
                                                          jt.row(0).transpose() * expected.tangential);
  RouthParameters params;
  params.step = c.step;
  params.max_steps = 1000;
  // Both increment solvers (routh.h, "LCP solvers").
  for (IncrementSolver solver : {IncrementSolver::kLemke, IncrementSolver::kBoxPivoting})
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      params.seed = seed;
      params.increment_solver = solver;
      const FrictionalResult r = sample_routh(p, params);
      ASSERT_EQ(r.status, Status::kSuccess) << r.message;
      const FrictionalOutcome& o = r.outcomes[0];
      EXPECT_TRUE(o.terminated);
      EXPECT_EQ(o.increment_fallbacks, 0) << to_string(solver);
      const double speed = p.velocity.cwiseAbs().maxCoeff();
      EXPECT_TRUE(VectorsNear(o.velocity, v_expected, kClosedForm * speed, 0.0))
          << to_string(solver) << ", seed " << seed << (expected.stuck ? " (ends stuck)" : " (ends sliding)");
      EXPECT_NEAR(o.normal_impulses[0], expected.normal, kClosedForm * expected.normal);
      EXPECT_NEAR(o.tangential_impulses[0], expected.tangential, kClosedForm * expected.normal);
    }
  // Sequential and simultaneous (Anitescu–Potra) coincide with Routh on one
  // contact whenever the contact ends stuck or sliding one way.
  const FrictionalResult seq = resolve_sequential(p);
  const FrictionalResult ap = solve_anitescu_potra(p);
  ASSERT_EQ(ap.outcomes.size(), 1u);
  const double speed = p.velocity.cwiseAbs().maxCoeff();
  EXPECT_TRUE(VectorsNear(seq.outcomes[0].velocity, v_expected, kClosedForm * speed, 0.0));
  EXPECT_TRUE(VectorsNear(ap.outcomes[0].velocity, v_expected, kClosedForm * speed, 0.0));
}

INSTANTIATE_TEST_SUITE_P(
    SlidingToSticking, SingleContactRouth,
    ::testing::Values(
        // slides forward, then sticks (tiny steps: many increments)
        SingleCase{0.3, -0.5, 1.0, -1.0, 0.0, 0.9, 0.01},
        // same with one big step: the first increment already ends it
        SingleCase{0.3, -0.5, 1.0, -1.0, 0.0, 0.9, 10.0},
        // slides backwards, spinning, then sticks
        SingleCase{-0.2, -0.4, -0.6, -2.0, 1.5, 1.2, 0.05},
        // corner struck off-centre, moderate step
        SingleCase{0.5, -1.0, 0.4, -0.44, 0.0, 1.0, 0.3},
        // too little friction to stop the slip: slides throughout
        SingleCase{0.1, -0.3, 3.0, -0.5, 0.0, 0.6, 0.02},
        // no slip at all: sticks from the start
        SingleCase{0.25, -0.5, 0.0, -1.0, 0.0, 1.0, 0.1}));

TEST(RouthSingleContact, ClosedFormCasesAreWhatTheirNamesSay) {
  // Guards the parameterization above: case 1 really slides then sticks,
  // case 5 really slides throughout.
  auto classify = [](const SingleCase& c) {
    const FrictionalProblem p =
        planar_point(2.0, 0.3, c.rx, c.ry, Eigen::Vector3d(c.vx, c.vy, c.w), c.mu);
    const Eigen::MatrixXd jn = Eigen::MatrixXd(p.normals), jt = Eigen::MatrixXd(p.tangents);
    const Eigen::MatrixXd minv = Eigen::MatrixXd(p.inverse_mass);
    return routh_single_contact((jn * minv * jn.transpose())(0, 0),
                                (jn * minv * jt.transpose())(0, 0),
                                (jt * minv * jt.transpose())(0, 0), jn.row(0).dot(p.velocity),
                                jt.row(0).dot(p.velocity), c.mu);
  };
  EXPECT_TRUE(classify({0.3, -0.5, 1.0, -1.0, 0.0, 0.9, 0.01}).stuck);
  EXPECT_FALSE(classify({0.1, -0.3, 3.0, -0.5, 0.0, 0.6, 0.02}).stuck);
}

struct RandomCase {
  int n, m;
  bool planar;
  IncrementSolver solver;
};

class RandomRouth : public ::testing::TestWithParam<RandomCase> {};

// Theorem 7 along every sample's trajectory; post-impact velocities never
// penetrate; the termination rate within N is measured and reported. With
// box pivoting, the increments it leaves to Lemke are counted too.
TEST_P(RandomRouth, EveryIncrementDissipatesAndNoSamplePenetrates) {
  const RandomCase rc = GetParam();
  int samples = 0, terminated = 0, lcps = 0, fallbacks = 0;
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    const auto rp = random_frictional(seed * 7919 + static_cast<std::uint64_t>(rc.n), rc.n, rc.m,
                                      rc.planar);
    RouthParameters params;
    params.seed = seed;
    params.record_trajectory = true;
    params.max_steps = 20;
    params.increment_solver = rc.solver;
    RouthSampler sampler(rp.problem, params);
    const double approach = -(Eigen::MatrixXd(rp.problem.normals) * rp.problem.velocity).minCoeff();
    for (std::uint64_t k = 0; k < 8; ++k) {
      const FrictionalResult r = sampler.sample(k);
      ASSERT_TRUE(r.status == Status::kSuccess || r.status == Status::kStepLimitReached)
          << r.message << " (seed " << seed << ", sample " << k << ")";
      const FrictionalOutcome& o = r.outcomes[0];
      ++samples;
      terminated += o.terminated ? 1 : 0;
      lcps += o.lcps;
      fallbacks += o.increment_fallbacks;
      ASSERT_GE(o.trajectory.size(), 2u);
      for (size_t s = 1; s < o.trajectory.size(); ++s) {
        const double before = energy(rp.mass, o.trajectory[s - 1]);
        const double after = energy(rp.mass, o.trajectory[s]);
        ASSERT_LE(after, before + kDissipationSlack * before)
            << "increment " << s << " gains energy (seed " << seed << ", sample " << k << ")";
      }
      EXPECT_LE(o.energy_change, kDissipationSlack * energy(rp.mass, rp.problem.velocity));
      EXPECT_NEAR(o.energy_change,
                  energy(rp.mass, o.velocity) - energy(rp.mass, rp.problem.velocity),
                  1e-10 * energy(rp.mass, rp.problem.velocity))
          << "reported ΔE disagrees with ½vᵀMv";
      // Non-penetration: after the law (or its Anitescu–Potra fallback).
      EXPECT_GE(o.normal_velocities.minCoeff(), -kPenetrationSlack * approach)
          << "seed " << seed << ", sample " << k;
      EXPECT_TRUE(testing::AllFinite(o.velocity, "velocity"));
    }
  }
  const double rate = static_cast<double>(terminated) / samples;
  RecordProperty("termination_rate_within_20", std::to_string(rate));
  RecordProperty("mean_lcps", std::to_string(static_cast<double>(lcps) / samples));
  std::cout << "[ routh ] n=" << rc.n << " m=" << rc.m << (rc.planar ? " planar" : " 3-D") << ", "
            << to_string(rc.solver) << ": terminated within N=20: " << terminated << "/" << samples
            << ", mean LCPs " << static_cast<double>(lcps) / samples << ", " << fallbacks
            << " left to Lemke\n";
  // With the automatic step a sample needs a handful of increments; 20 is
  // generous, so nearly all random impacts end by themselves.
  EXPECT_GE(rate, 0.9);
  // Box pivoting leaves an increment to Lemke only when its staggered
  // rounds or pivoting steps run out: rare (a few per thousand here).
  EXPECT_LE(fallbacks, lcps / 100);
}

INSTANTIATE_TEST_SUITE_P(
    Problems, RandomRouth,
    ::testing::Values(RandomCase{3, 1, true, IncrementSolver::kLemke}, RandomCase{3, 2, true, IncrementSolver::kLemke},
                      RandomCase{6, 3, true, IncrementSolver::kLemke}, RandomCase{6, 2, false, IncrementSolver::kLemke},
                      RandomCase{9, 4, false, IncrementSolver::kLemke}, RandomCase{12, 5, true, IncrementSolver::kLemke},
                      RandomCase{3, 1, true, IncrementSolver::kBoxPivoting},
                      RandomCase{6, 3, true, IncrementSolver::kBoxPivoting},
                      RandomCase{6, 2, false, IncrementSolver::kBoxPivoting},
                      RandomCase{9, 4, false, IncrementSolver::kBoxPivoting},
                      RandomCase{12, 5, true, IncrementSolver::kBoxPivoting},
                      RandomCase{18, 6, false, IncrementSolver::kBoxPivoting}));

TEST(RouthSampling, NonCollidingVelocityTakesNoIncrement) {
  // Lemma 8: J_n v ≥ 0 → v unchanged, no LCP.
  FrictionalProblem p = planar_point(1.0, 0.2, 0.3, -0.5, Eigen::Vector3d(2.0, 0.5, 0.0), 1.0);
  const FrictionalResult r = sample_routh(p);
  EXPECT_EQ(r.status, Status::kSuccess);
  EXPECT_EQ(r.outcomes[0].lcps, 0);
  EXPECT_TRUE(r.outcomes[0].terminated);
  EXPECT_EQ(r.outcomes[0].velocity, p.velocity);
}

TEST(RouthSampling, AutomaticStepIsTwiceTheLargestStoppingImpulse) {
  const FrictionalProblem p =
      planar_point(2.0, 0.3, 0.3, -0.5, Eigen::Vector3d(0.0, -1.5, 0.0), 1.0);
  // W_nn = 1/m + rx²/I.
  const double wnn = 0.5 + 0.09 / 0.3;
  EXPECT_NEAR(RouthSampler(p).step(), 2.0 * 1.5 / wnn, 1e-15);
  RouthParameters fixed;
  fixed.step = 0.7;
  EXPECT_EQ(RouthSampler(p, fixed).step(), 0.7);
}

TEST(RouthSampling, SetIsBitwiseIdenticalForAnyThreadCount) {
  const auto rp = random_frictional(42, 6, 3, false);
  RouthParameters params;
  params.seed = 99;
  RouthSampler sampler(rp.problem, params);
  RouthSetParameters set;
  set.samples = 300;
  set.threads = 1;
  const RouthOutcomeSet one = sampler.approximate(set);
  for (int threads : {2, 3, 8}) {
    set.threads = threads;
    const RouthOutcomeSet many = sampler.approximate(set);
    EXPECT_EQ(many.threads_used, threads);
    EXPECT_TRUE(one.velocities == many.velocities) << threads << " threads";
    EXPECT_TRUE(one.normal_velocities == many.normal_velocities);
    EXPECT_TRUE(one.tangential_velocities == many.tangential_velocities);
    EXPECT_EQ(one.lcps, many.lcps);
  }
  // Sample k of the set is sample(k).
  for (int k : {0, 17, 299}) {
    const FrictionalResult r = sampler.sample(static_cast<std::uint64_t>(k));
    EXPECT_TRUE(r.outcomes[0].velocity == one.velocities.col(k)) << "sample " << k;
    EXPECT_EQ(r.outcomes[0].lcps, one.lcps[static_cast<size_t>(k)]);
  }
}

TEST(RouthSampling, SeedsChangeTheOutcomeAndRepeatIt) {
  const auto rp = random_frictional(7, 5, 3, true);
  RouthParameters a, b;
  a.seed = 1;
  b.seed = 2;
  const FrictionalResult ra = sample_routh(rp.problem, a), ra2 = sample_routh(rp.problem, a);
  const FrictionalResult rb = sample_routh(rp.problem, b);
  EXPECT_TRUE(ra.outcomes[0].velocity == ra2.outcomes[0].velocity);
  EXPECT_FALSE(ra.outcomes[0].velocity == rb.outcomes[0].velocity);
}

TEST(RouthSampling, LowDiscrepancySamplerIsDeterministicAndSpreads) {
  const auto rp = random_frictional(3, 4, 2, true);
  RouthParameters params;
  params.sampler = ImpulseSampler::kLowDiscrepancy;
  params.seed = 5;
  RouthSetParameters set;
  set.samples = 256;
  const RouthOutcomeSet x = approximate_routh_set(rp.problem, params, set);
  const RouthOutcomeSet y = approximate_routh_set(rp.problem, params, set);
  EXPECT_TRUE(x.velocities == y.velocities);
  EXPECT_EQ(x.status, Status::kSuccess) << x.message;
  // Caps differ between samples, so outcomes spread (a constant cap would
  // give one outcome), and the set is not the uniform sampler's.
  std::set<double> distinct;
  for (int k = 0; k < set.samples; ++k) distinct.insert(x.normal_velocities(0, k));
  EXPECT_GT(distinct.size(), 20u);
  params.sampler = ImpulseSampler::kUniform;
  const RouthOutcomeSet uniform = approximate_routh_set(rp.problem, params, set);
  EXPECT_FALSE(uniform.velocities == x.velocities);
}

TEST(RouthSampling, StepLimitFallsBackToAnitescuPotraAndSaysSo) {
  // N = 1 with a tiny step cannot end the impact.
  const FrictionalProblem p =
      planar_point(1.0, 0.2, 0.3, -0.5, Eigen::Vector3d(0.5, -2.0, 0.0), 1.0);
  RouthParameters params;
  params.step = 1e-3;
  params.max_steps = 1;
  const FrictionalResult r = sample_routh(p, params);
  EXPECT_EQ(r.status, Status::kStepLimitReached);
  EXPECT_NE(r.message.find("Anitescu-Potra"), std::string::npos) << r.message;
  EXPECT_FALSE(r.outcomes[0].terminated);
  EXPECT_TRUE(r.outcomes[0].finished_by_fallback);
  EXPECT_EQ(r.outcomes[0].lcps, 2);
  EXPECT_GE(r.outcomes[0].normal_velocities[0], -1e-12);
  params.finish_with_anitescu_potra = false;
  const FrictionalResult raw = sample_routh(p, params);
  EXPECT_EQ(raw.status, Status::kStepLimitReached);
  EXPECT_FALSE(raw.outcomes[0].finished_by_fallback);
  EXPECT_LT(raw.outcomes[0].normal_velocities[0], -1.0) << "Algorithm 1 verbatim stays colliding";
}

// Two contacts that push against each other: W = J M⁻¹ Jᵀ = [[1, −c], [−c, 1]]
// with c = 0.99, both approaching at 1. Each alone stops with an impulse
// of 1, so the single-contact step is h = 2; together they need the
// plastic impulses λ = W⁻¹ (1, 1) = 1/(1 − c) = 100 each, and increments
// capped by h bring the approach down by only ~(1 − c) h per increment: the
// 100 increments run out. Under the automatic rule the sample is drawn
// again with the simultaneous step (h_i = 2 · 100, routh.h "Automatic
// step") and ends: frictionless and inelastic, its outcome is the plastic
// impact, v⁺ = v⁻ + M⁻¹ Jᵀ λ = 0, exactly.
TEST(RouthSampling, SingleContactStepThatRunsOutIsDrawnAgainUnderTheSimultaneousStep) {
  const double c = 0.99;
  const double plastic = 1.0 / (1.0 - c);
  Eigen::Matrix3d minv = Eigen::Matrix3d::Identity();
  minv(0, 1) = minv(1, 0) = -c;
  Eigen::MatrixXd jn = Eigen::MatrixXd::Zero(2, 3), jt = Eigen::MatrixXd::Zero(2, 3);
  jn(0, 0) = jn(1, 1) = 1.0;
  jt(0, 2) = jt(1, 2) = 1.0;  // planar tangents along a free DOF, μ = 0
  const FrictionalProblem p =
      FrictionalProblem::from_dense(minv, jn, jt, Eigen::Vector3d(-1.0, -1.0, 0.0), Eigen::Vector2d::Zero());
  RouthParameters params;
  params.automatic_step = AutomaticStep::kSingleContact;
  const FrictionalResult single = sample_routh(p, params);
  EXPECT_EQ(single.status, Status::kStepLimitReached) << "the cause: the single-contact step alone runs out";
  params.automatic_step = AutomaticStep::kAutomatic;
  const FrictionalResult r = sample_routh(p, params);
  ASSERT_EQ(r.status, Status::kSuccess) << r.message;
  EXPECT_NE(r.message.find("simultaneous step"), std::string::npos) << r.message;
  const FrictionalOutcome& o = r.outcomes[0];
  EXPECT_TRUE(o.terminated);
  EXPECT_FALSE(o.finished_by_fallback);
  EXPECT_GT(o.lcps, params.max_steps) << "the first draw's increments are counted";
  // The step in force: h_i = 2 max(Λ_j, λ*_i) = 2 · 100 for both contacts
  // (λ* by box pivoting: exact to rounding), against the sampler's h = 2.
  EXPECT_NEAR(o.step, 2.0 * plastic, 1e-9);
  EXPECT_EQ(single.outcomes[0].step, RouthSampler(p, params).step());
  // To 1e-9 relative: the sample stops where u_n reaches the separation
  // tolerance (1e-9 of the approach), and rounding of 100-sized impulses.
  EXPECT_NEAR(o.normal_impulses[0], plastic, 1e-9 * plastic);
  EXPECT_NEAR(o.normal_impulses[1], plastic, 1e-9 * plastic);
  EXPECT_NEAR(o.velocity[0], 0.0, 1e-9);
  EXPECT_NEAR(o.velocity[1], 0.0, 1e-9);
  EXPECT_EQ(o.velocity[2], 0.0);
  // A problem the single-contact step ends is not drawn again: the same
  // sample under both rules, bit for bit.
  const FrictionalProblem easy =
      FrictionalProblem::from_dense(Eigen::Matrix3d::Identity(), jn, jt, Eigen::Vector3d(-1.0, -0.5, 0.0),
                                    Eigen::Vector2d::Zero());
  params.automatic_step = AutomaticStep::kSingleContact;
  const FrictionalResult a = sample_routh(easy, params);
  params.automatic_step = AutomaticStep::kAutomatic;
  const FrictionalResult b = sample_routh(easy, params);
  EXPECT_EQ(a.status, Status::kSuccess);
  EXPECT_EQ(a.outcomes[0].velocity, b.outcomes[0].velocity);
  EXPECT_EQ(a.outcomes[0].lcps, b.outcomes[0].lcps);
}

// A column of 8 boxes landing flat (frictional_scenes.h): 32 redundant
// corner contacts, increment LCPs of 224 variables. Lemke's first path
// failed on 1–4 of these 10 samples (a near-tie resolved within rounding,
// times a column entry ~1e6, left a basic variable at −1e-4 of the data);
// its retries with other covering vectors (core/lcp.h) must carry every
// sample through, and the law's residual checks must hold.
// Box pivoting (routh.h, "LCP solvers") must carry them through as well,
// leaving at most one increment in ten to Lemke.
TEST(RouthLargeClusters, EightStackedBoxesSampleWithoutLcpFailure) {
  const FrictionalProblem p = scenes::falling_box_stack(8);
  const Eigen::MatrixXd mass = Eigen::MatrixXd(p.inverse_mass).inverse();
  const double before = energy(mass, p.velocity);
  const double approach = 0.44;  // the column's landing speed
  for (IncrementSolver solver : {IncrementSolver::kLemke, IncrementSolver::kBoxPivoting}) {
    int lcps = 0, fallbacks = 0;
    for (std::uint64_t seed = 0; seed < 10; ++seed) {
      RouthParameters params;
      params.seed = seed;
      params.increment_solver = solver;
      const FrictionalResult r = sample_routh(p, params);
      EXPECT_NE(r.status, Status::kLcpFailed) << to_string(solver) << ", seed " << seed << ": " << r.message;
      const FrictionalOutcome& o = r.outcomes[0];
      lcps += o.lcps;
      fallbacks += o.increment_fallbacks;
      EXPECT_TRUE(o.terminated || o.finished_by_fallback) << "seed " << seed;
      EXPECT_LE(o.energy_change, kDissipationSlack * before) << "seed " << seed;
      EXPECT_LT(o.energy_change, -0.1 * before) << "seed " << seed << ": a plastic landing dissipates";
      EXPECT_GE(o.normal_velocities.minCoeff(), -kPenetrationSlack * approach) << "seed " << seed;
    }
    EXPECT_LE(fallbacks, lcps / 10) << to_string(solver);
  }
}

TEST(RouthSampling, FinalIncrementOfAlgorithmTwoEndsNearlyEndedSamples) {
  const FrictionalProblem p =
      planar_point(1.0, 0.2, 0.3, -0.5, Eigen::Vector3d(0.5, -2.0, 0.0), 1.0);
  RouthParameters params;
  params.max_steps = 1;
  params.finish_with_anitescu_potra = false;
  RouthSetParameters set;
  set.samples = 64;
  const RouthOutcomeSet plain = approximate_routh_set(p, params, set);
  set.epsilon = 100.0;  // a final cap far above what is left: ends everything
  const RouthOutcomeSet finished = approximate_routh_set(p, params, set);
  int colliding_before = 0, colliding_after = 0;
  for (int k = 0; k < set.samples; ++k) {
    colliding_before += plain.colliding[static_cast<size_t>(k)];
    colliding_after += finished.colliding[static_cast<size_t>(k)];
  }
  EXPECT_GT(colliding_before, 0);
  EXPECT_EQ(colliding_after, 0);
}

TEST(RouthSampling, ContactNoImpulseCanMoveIsInfeasible) {
  // The contact acts on a locked DOF only (zero row/column of M⁻¹).
  Eigen::MatrixXd minv = Eigen::Vector2d(0.0, 1.0).asDiagonal();
  Eigen::MatrixXd jn(1, 2), jt(1, 2);
  jn << 1.0, 0.0;
  jt << 0.0, 1.0;
  const FrictionalProblem p = FrictionalProblem::from_dense(
      minv, jn, jt, Eigen::Vector2d(-1.0, 0.0), Eigen::VectorXd::Constant(1, 0.5));
  const FrictionalResult r = sample_routh(p);
  EXPECT_EQ(r.status, Status::kInfeasible);
  EXPECT_NE(r.message.find("contact 0"), std::string::npos) << r.message;
  EXPECT_EQ(r.outcomes[0].velocity, p.velocity);
}

TEST(RouthSampling, ThreeDimensionalConeDirectionsMatter) {
  // A sphere-like point body sliding diagonally: with d = 4 the friction
  // impulse can only act along ±t1, ±t2 (a square cone), with d = 32 nearly
  // against the slip. Both stop the normal motion and dissipate.
  Eigen::MatrixXd minv = Eigen::Matrix3d::Identity();
  Eigen::MatrixXd jn(1, 3), jt(2, 3);
  jn << 0, 0, 1;
  jt << 1, 0, 0, 0, 1, 0;
  FrictionalProblem p = FrictionalProblem::from_dense(minv, jn, jt, Eigen::Vector3d(2.0, 1.0, -1.0),
                                                      Eigen::VectorXd::Constant(1, 0.5));
  // Closed form for the circular cone: the slip (2, 1) is reduced along its
  // own direction by μ Λ_n = 0.5.
  const Eigen::Vector3d circular(2.0 - 0.5 * 2.0 / std::sqrt(5.0), 1.0 - 0.5 / std::sqrt(5.0), 0.0);
  p.cone_directions = 64;
  const FrictionalResult fine = sample_routh(p);
  ASSERT_EQ(fine.status, Status::kSuccess) << fine.message;
  // Friction acts along a vertex (or edge) of the 64-gon maximizing the
  // dissipation: its direction is off the slip's by at most half the
  // spacing, π/64, so the velocity is off by at most μΛ_n · 2 sin(π/128).
  const double kPi = 3.14159265358979323846;
  EXPECT_TRUE(VectorsNear(fine.outcomes[0].velocity, circular, 0.5 * 2 * std::sin(kPi / 128) + 1e-12, 0.0));
  p.cone_directions = 4;
  const FrictionalResult square = sample_routh(p);
  ASSERT_EQ(square.status, Status::kSuccess) << square.message;
  // Square cone, slip mostly along t1: the impulse goes to the −t1 vertex.
  EXPECT_TRUE(VectorsNear(square.outcomes[0].velocity, Eigen::Vector3d(1.5, 1.0, 0.0), 1e-12, 0.0));
}

TEST(RouthValidation, BadInputsNameTheProblem) {
  const FrictionalProblem good =
      planar_point(1.0, 0.2, 0.3, -0.5, Eigen::Vector3d(0.5, -2.0, 0.0), 1.0);
  auto message = [](const FrictionalProblem& p, const RouthParameters& params = {}) {
    try {
      sample_routh(p, params);
    } catch (const InvalidProblem& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  FrictionalProblem p = good;
  p.friction[0] = -0.1;
  EXPECT_NE(message(p).find("friction entry 0"), std::string::npos) << message(p);
  p = good;
  p.friction.resize(2);
  p.friction << 1, 1;
  EXPECT_NE(message(p).find("friction has 2 entries"), std::string::npos) << message(p);
  p = good;
  p.tangents = Eigen::MatrixXd::Ones(3, 3).sparseView();
  EXPECT_NE(message(p).find("tangents have 3 rows"), std::string::npos) << message(p);
  p = good;
  p.cone_directions = 4;
  EXPECT_NE(message(p).find("planar"), std::string::npos) << message(p);
  p = good;
  p.velocity[1] = NAN;
  EXPECT_NE(message(p).find("velocity"), std::string::npos) << message(p);
  RouthParameters bad;
  bad.step = -1.0;
  EXPECT_NE(message(good, bad).find("step"), std::string::npos);
  bad = {};
  bad.max_steps = 0;
  EXPECT_NE(message(good, bad).find("max_steps"), std::string::npos);
  RouthSetParameters set;
  set.samples = 0;
  EXPECT_THROW(approximate_routh_set(good, {}, set), InvalidProblem);
  EXPECT_THROW(parse_impulse_sampler("sobol"), InvalidProblem);
  EXPECT_EQ(parse_impulse_sampler("low_discrepancy"), ImpulseSampler::kLowDiscrepancy);
  EXPECT_STREQ(to_string(Status::kStepLimitReached), "step_limit_reached");
}

// The README's frictional snippet, verbatim apart from the checks.
TEST(RouthReadme, SnippetRunsAndGivesTheDocumentedOutcomes) {
  Eigen::MatrixXd Jn(2, 3), Jt(2, 3);
  Jn << 0, 1, 0.5, 0, 1, -0.5;
  Jt << 1, 0, 1, 1, 0, 1;
  auto p = simpact::FrictionalProblem::from_dense(Eigen::Vector3d(1, 1, 2.4).asDiagonal(), Jn, Jt,
                                                  Eigen::Vector3d(0, -0.4429, 0),
                                                  Eigen::Vector2d(1, 1));
  simpact::RouthParameters params;
  params.seed = 7;
  auto one = simpact::sample_routh(p, params);
  simpact::RouthSetParameters set;
  set.samples = 1 << 10;
  auto all = simpact::approximate_routh_set(p, params, set);
  auto ap = simpact::solve_anitescu_potra(p);
  auto seq = simpact::resolve_sequential(p, {{0, 1}});
  EXPECT_EQ(one.status, Status::kSuccess);
  EXPECT_EQ(all.terminated_count, set.samples);
  ASSERT_EQ(ap.outcomes.size(), 1u);  // simultaneous: the block stops
  EXPECT_TRUE(VectorsNear(ap.outcomes[0].velocity, Eigen::Vector3d::Zero(), 1e-12, 0.0));
  // A first, then B: the block pivots about B (left corner), A lifts off.
  EXPECT_GT(seq.outcomes[0].normal_velocities[0], 0.05);
  EXPECT_NEAR(seq.outcomes[0].normal_velocities[1], 0.0, 1e-12);
}

}  // namespace
}  // namespace simpact
