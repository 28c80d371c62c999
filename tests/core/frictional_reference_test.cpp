// Reference frictional laws (frictional_reference.h): every Anitescu–Potra
// solution returned satisfies the complementarity conditions of Halm & Posa,
// eq. (31) (a residual check of the law itself), the enumeration finds Lemke's
// solution among its own, budgets and fallbacks are reported; sequential
// resolution dissipates at every impact, honours its order and its limits.
#include "support/compare.h"
#include "support/random_frictional.h"

#include <simpact/frictional_reference.h>

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace simpact {
namespace {

using testing::random_frictional;
using testing::VectorsNear;

/// Residual of the complementarity conditions, relative to the largest
/// pre-impact approach speed (velocities) or the largest normal impulse
/// (impulses): mode solutions are polished to ~1e-13; 1e-8 is the law's own
/// acceptance (feasibility_tolerance 1e-9 of g-normalized speeds, W ≲ 20).
constexpr double kComplementarity = 1e-8;
/// Sequential resolution stops at 1e-7 of the g-normalized approach speed
/// (SequentialParameters); √W_ii ≲ 5 in the random problems: 1e-6 of the
/// largest approach speed bounds what may remain.
constexpr double kSequentialSeparation = 1e-6;
/// Energy gained by an impact, relative to the pre-impact energy: rounding.
constexpr double kDissipationSlack = 1e-12;

double energy(const Eigen::MatrixXd& mass, const Eigen::VectorXd& v) { return 0.5 * v.dot(mass * v); }

// Halm & Posa, eq. (31), at one outcome: non-penetration, normal
// complementarity, the polyhedral Coulomb cone and maximal dissipation.
// Planar: the cone is |Λ_t| ≤ μΛ_n and a slipping contact gets
// Λ_t = −μΛ_n sgn(u_t). 3-D with d = 4: the cone is the L1 ball
// ‖Λ_t‖₁ ≤ μΛ_n, and maximal dissipation means Λ_t·u_t = −μΛ_n ‖u_t‖∞ (the
// dual norm).
::testing::AssertionResult SatisfiesAnitescuPotra(const FrictionalProblem& p,
                                                  const FrictionalOutcome& o) {
  const int m = p.contacts(), dim = p.tangent_dimension();
  const double speed = (Eigen::MatrixXd(p.normals) * p.velocity).cwiseAbs().maxCoeff();
  const double impulse = std::max(o.normal_impulses.cwiseAbs().maxCoeff(), 1e-300);
  const double vtol = kComplementarity * speed, itol = kComplementarity * impulse;
  for (int i = 0; i < m; ++i) {
    const double ln = o.normal_impulses[i], un = o.normal_velocities[i], mu = p.friction[i];
    if (ln < -itol) return ::testing::AssertionFailure() << "contact " << i << ": Λ_n = " << ln;
    if (un < -vtol) return ::testing::AssertionFailure() << "contact " << i << ": u_n⁺ = " << un;
    if (ln > itol && std::abs(un) > vtol)
      return ::testing::AssertionFailure()
             << "contact " << i << ": Λ_n = " << ln << " but u_n⁺ = " << un << " (31c)";
    if (dim == 1) {
      const double lt = o.tangential_impulses[i], ut = o.tangential_velocities[i];
      if (std::abs(lt) > mu * ln + itol)
        return ::testing::AssertionFailure() << "contact " << i << ": |Λ_t| = " << std::abs(lt)
                                             << " > μΛ_n = " << mu * ln;
      if (ln > itol && std::abs(ut) > vtol && std::abs(lt + mu * ln * (ut > 0 ? 1 : -1)) > itol)
        return ::testing::AssertionFailure() << "contact " << i << " slips at " << ut
                                             << " but Λ_t = " << lt << " (expected "
                                             << -mu * ln * (ut > 0 ? 1 : -1) << ")";
    } else {
      const Eigen::Vector2d lt = o.tangential_impulses.segment<2>(2 * i);
      const Eigen::Vector2d ut = o.tangential_velocities.segment<2>(2 * i);
      if (lt.lpNorm<1>() > mu * ln + itol)
        return ::testing::AssertionFailure() << "contact " << i << ": ‖Λ_t‖₁ = " << lt.lpNorm<1>()
                                             << " > μΛ_n = " << mu * ln;
      if (ln > itol && std::abs(lt.dot(ut) + mu * ln * ut.lpNorm<Eigen::Infinity>()) >
                           itol * speed + vtol * mu * ln)
        return ::testing::AssertionFailure()
               << "contact " << i << " is not maximally dissipative: Λ_t·u_t = " << lt.dot(ut)
               << ", expected " << -mu * ln * ut.lpNorm<Eigen::Infinity>();
    }
  }
  return ::testing::AssertionSuccess();
}

struct Case {
  int n, m;
  bool planar;
};

class RandomAnitescuPotra : public ::testing::TestWithParam<Case> {};

TEST_P(RandomAnitescuPotra, EverySolutionSatisfiesTheLawAndLemkesIsAmongThem) {
  const Case c = GetParam();
  int several = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    const auto rp = random_frictional(seed * 31 + 5, c.n, c.m, c.planar);
    const FrictionalResult all = solve_anitescu_potra(rp.problem);
    ASSERT_EQ(all.status, Status::kSuccess) << all.message << " (seed " << seed << ")";
    ASSERT_GE(all.outcomes.size(), 1u);
    several += all.outcomes.size() > 1 ? 1 : 0;
    const double e0 = energy(rp.mass, rp.problem.velocity);
    for (const FrictionalOutcome& o : all.outcomes) {
      EXPECT_TRUE(SatisfiesAnitescuPotra(rp.problem, o)) << "seed " << seed;
      EXPECT_LE(energy(rp.mass, o.velocity), e0 * (1 + kDissipationSlack)) << "seed " << seed;
    }
    AnitescuPotraParameters one;
    one.all_solutions = false;
    const FrictionalResult lemke = solve_anitescu_potra(rp.problem, one);
    ASSERT_EQ(lemke.status, Status::kSuccess) << lemke.message;
    ASSERT_EQ(lemke.outcomes.size(), 1u);
    EXPECT_TRUE(SatisfiesAnitescuPotra(rp.problem, lemke.outcomes[0])) << "seed " << seed;
    double closest = INFINITY;
    for (const FrictionalOutcome& o : all.outcomes)
      closest = std::min(closest, (o.normal_velocities - lemke.outcomes[0].normal_velocities)
                                      .cwiseAbs()
                                      .maxCoeff());
    const double speed = (Eigen::MatrixXd(rp.problem.normals) * rp.problem.velocity).cwiseAbs().maxCoeff();
    EXPECT_LE(closest, kComplementarity * speed)
        << "Lemke's solution is missing from the enumeration (seed " << seed << ")";
  }
  std::cout << "[ anitescu_potra ] n=" << c.n << " m=" << c.m << (c.planar ? " planar" : " 3-D")
            << ": " << several << "/40 problems with several solutions\n";
}

INSTANTIATE_TEST_SUITE_P(Problems, RandomAnitescuPotra,
                         ::testing::Values(Case{3, 1, true}, Case{3, 2, true}, Case{5, 3, true},
                                           Case{6, 2, false}, Case{6, 4, true},
                                           Case{8, 3, false}));

// A unit-mass point in the plane between a floor (normal +y) and a wall
// (normal −x): two contacts whose impulses do not interact (W diagonal), so
// every law has a closed form.
FrictionalProblem corner_point(double vx, double vy, double mu) {
  Eigen::MatrixXd minv = Eigen::Matrix2d::Identity();
  Eigen::MatrixXd jn(2, 2), jt(2, 2);
  jn << 0, 1, -1, 0;  // floor gap y, wall gap −x
  jt << 1, 0, 0, 1;   // floor tangent +x, wall tangent +y
  return FrictionalProblem::from_dense(minv, jn, jt, Eigen::Vector2d(vx, vy),
                                       Eigen::Vector2d::Constant(mu));
}

TEST(AnitescuPotra, PointInACornerComesToRestWithEnoughFriction) {
  // Both contacts strike; simultaneous: each normal impulse stops its own
  // normal velocity, which is the other contact's slip: u = 0 with μ ≥ 1.
  const FrictionalResult r = solve_anitescu_potra(corner_point(1.0, -1.0, 1.0));
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_TRUE(VectorsNear(r.outcomes[0].velocity, Eigen::Vector2d::Zero(), 1e-14, 0.0));
}

TEST(Sequential, OrderDecidesAndEveryImpactDissipates) {
  // μ = 0.5, v = (1, −1). Floor first: Λ_n = 1 stops y, friction takes
  // μ·1 = 0.5 off x → (0.5, 0); then the wall: Λ_n = 0.5, its friction
  // acts along y, which is already 0 → (0, 0). Wall first: (0, −0.5), then
  // the floor: (0, 0). Both end at rest here, but through different paths.
  SequentialParameters params;
  params.record_trajectory = true;
  params.order = {0, 1};
  const FrictionalResult floor_first = resolve_sequential(corner_point(1.0, -1.0, 0.5), params);
  ASSERT_EQ(floor_first.status, Status::kSuccess) << floor_first.message;
  const auto& path = floor_first.outcomes[0].trajectory;
  ASSERT_EQ(path.size(), 3u);
  EXPECT_TRUE(VectorsNear(path[1], Eigen::Vector2d(0.5, 0.0), 1e-14, 0.0));
  EXPECT_TRUE(VectorsNear(path[2], Eigen::Vector2d(0.0, 0.0), 1e-14, 0.0));
  params.order = {1, 0};
  const FrictionalResult wall_first = resolve_sequential(corner_point(1.0, -1.0, 0.5), params);
  EXPECT_TRUE(VectorsNear(wall_first.outcomes[0].trajectory[1], Eigen::Vector2d(0.0, -0.5), 1e-14, 0.0));
  EXPECT_EQ(wall_first.outcomes[0].lcps, 2);
}

TEST(Sequential, RandomProblemsDissipateAtEveryImpactAndEndNonColliding) {
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    const auto rp = random_frictional(seed + 1000, 6, 3, seed % 2 == 0);
    SequentialParameters params;
    params.record_trajectory = true;
    params.order = {2, 0, 1};
    const FrictionalResult r = resolve_sequential(rp.problem, params);
    ASSERT_TRUE(r.status == Status::kSuccess || r.status == Status::kStepLimitReached) << r.message;
    const auto& path = r.outcomes[0].trajectory;
    for (size_t s = 1; s < path.size(); ++s)
      ASSERT_LE(energy(rp.mass, path[s]), energy(rp.mass, path[s - 1]) * (1 + kDissipationSlack))
          << "impact " << s << " gains energy (seed " << seed << ")";
    if (r.status == Status::kSuccess) {
      const double speed = (Eigen::MatrixXd(rp.problem.normals) * rp.problem.velocity).cwiseAbs().maxCoeff();
      EXPECT_GE(r.outcomes[0].normal_velocities.minCoeff(), -kSequentialSeparation * speed);
    }
  }
}

TEST(Sequential, RoundLimitIsReportedWithTheCollidingVelocity) {
  // Slope-like coupling: a point between two walls at ±45° below it (a V):
  // each impact sends it into the other wall; inelastic sticking impacts
  // end it in one pass, so allow only part of a pass.
  Eigen::MatrixXd minv = Eigen::Matrix2d::Identity();
  Eigen::MatrixXd jn(2, 2), jt(2, 2);
  const double s = std::sqrt(0.5);
  jn << s, s, -s, s;
  jt << s, -s, s, s;
  const FrictionalProblem p = FrictionalProblem::from_dense(minv, jn, jt, Eigen::Vector2d(0.3, -1.0),
                                                            Eigen::Vector2d::Constant(0.0));
  SequentialParameters params;
  params.max_rounds = 1;
  params.order = {0};  // contact 1 is never resolved: the impact cannot end
  const FrictionalResult r = resolve_sequential(p, params);
  EXPECT_EQ(r.status, Status::kStepLimitReached);
  EXPECT_FALSE(r.outcomes[0].terminated);
  EXPECT_LT(r.outcomes[0].normal_velocities.minCoeff(), 0.0);
  EXPECT_NE(r.message.find("1 rounds"), std::string::npos) << r.message;
}

TEST(ReferenceLaws, BudgetsAndBadOrdersAreReported) {
  const auto rp = random_frictional(11, 5, 3, true);
  AnitescuPotraParameters tiny;
  tiny.max_mode_combinations = 1;
  const FrictionalResult r = solve_anitescu_potra(rp.problem, tiny);
  EXPECT_EQ(r.status, Status::kBudgetExhausted);
  EXPECT_EQ(r.outcomes.size(), 1u);
  EXPECT_NE(r.message.find("max_mode_combinations"), std::string::npos) << r.message;
  EXPECT_TRUE(SatisfiesAnitescuPotra(rp.problem, r.outcomes[0]));
  SequentialParameters bad;
  bad.order = {0, 3};
  try {
    resolve_sequential(rp.problem, bad);
    ADD_FAILURE() << "order entry 3 accepted for 3 contacts";
  } catch (const InvalidProblem& e) {
    EXPECT_NE(std::string(e.what()).find("order entry 1 is 3"), std::string::npos) << e.what();
  }
  bad.order = {};
  bad.max_rounds = 0;
  EXPECT_THROW(resolve_sequential(rp.problem, bad), InvalidProblem);
}

TEST(ReferenceLaws, NoApproachingContactMeansNoImpulse) {
  const FrictionalProblem p = corner_point(-1.0, 0.5, 1.0);  // leaving both
  const FrictionalResult ap = solve_anitescu_potra(p);
  ASSERT_EQ(ap.outcomes.size(), 1u);
  EXPECT_EQ(ap.outcomes[0].velocity, p.velocity);
  const FrictionalResult seq = resolve_sequential(p);
  EXPECT_EQ(seq.outcomes[0].lcps, 0);
  EXPECT_EQ(seq.outcomes[0].velocity, p.velocity);
}

}  // namespace
}  // namespace simpact
