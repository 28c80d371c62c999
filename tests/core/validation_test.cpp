// Bad input: validate() (and every entry point that validates) throws
// InvalidProblem with a message naming the offending field; degenerate but
// valid problems never produce NaN.
#include "support/compare.h"
#include "support/policies.h"

#include <simpact/diagnostics.h>
#include <simpact/propagative.h>
#include <simpact_scenes/core_scenes.h>

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace simpact {
namespace {

using testing::AllFinite;
using testing::Parameters;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
/// The pinned ball's plastic velocity 1 − λ/1 comes from one LCP pivot on
/// unit numbers: exact up to one rounding.
constexpr double kOneRounding = 1e-15;

/// A valid 3-DOF, 2-contact problem to break one field at a time.
ImpactProblem Valid() {
  ImpactProblem problem = scenes::newtons_cradle(3, 1, 1.0, Eigen::Vector3d(1.0, 2.0, 3.0));
  problem.offsets = Eigen::Vector2d(0.0, 0.1);
  problem.time_of_impact = Eigen::Vector2d(0.0, 0.5);
  return problem;
}

ImpactProblem WithDenseInverseMass(const Eigen::MatrixXd& inverse_mass) {
  ImpactProblem problem = Valid();
  problem.inverse_mass = inverse_mass.sparseView();
  return problem;
}

/// Expects `call` to throw InvalidProblem whose message contains every word.
void ExpectInvalid(const std::function<void()>& call, const std::vector<std::string>& words) {
  try {
    call();
    ADD_FAILURE() << "no InvalidProblem thrown";
  } catch (const InvalidProblem& e) {
    const std::string message = e.what();
    for (const auto& word : words)
      EXPECT_NE(message.find(word), std::string::npos)
          << "message \"" << message << "\" does not mention \"" << word << "\"";
  }
}

/// validate(), resolve() and resolve_plastic() all reject the problem.
void ExpectRejected(const ImpactProblem& problem, const std::vector<std::string>& words) {
  ExpectInvalid([&] { validate(problem); }, words);
  ExpectInvalid([&] { (void)resolve(problem); }, words);
  ExpectInvalid([&] { (void)resolve_plastic(problem); }, words);
}

TEST(Validation, AcceptsTheBaseProblem) { EXPECT_NO_THROW(validate(Valid())); }

TEST(Validation, WrongSizes) {
  {
    ImpactProblem p = Valid();
    p.velocity = Eigen::Vector2d(1.0, 0.0);  // M⁻¹ is 3×3
    ExpectRejected(p, {"inverse_mass"});
  }
  {
    ImpactProblem p = Valid();
    p.normals = Eigen::MatrixXd::Ones(2, 4).sparseView();
    ExpectRejected(p, {"normals"});
  }
  {
    ImpactProblem p = Valid();
    p.offsets = Eigen::Vector3d::Zero();
    ExpectRejected(p, {"offsets"});
  }
  {
    ImpactProblem p = Valid();
    p.time_of_impact = Eigen::VectorXd::Zero(1);
    ExpectRejected(p, {"time_of_impact"});
  }
  {
    ImpactProblem p = Valid();
    p.inverse_mass = Eigen::MatrixXd::Identity(3, 2).sparseView();
    ExpectRejected(p, {"inverse_mass"});
  }
  {
    ImpactProblem p;  // nothing at all
    ExpectRejected(p, {"velocity"});
  }
}

TEST(Validation, NonFiniteEntries) {
  for (const double bad : {kNaN, kInf, -kInf}) {
    SCOPED_TRACE(std::to_string(bad));
    {
      ImpactProblem p = Valid();
      p.velocity[1] = bad;
      ExpectRejected(p, {"velocity"});
    }
    {
      ImpactProblem p = Valid();
      p.offsets[1] = bad;
      ExpectRejected(p, {"offsets"});
    }
    {
      ImpactProblem p = Valid();
      p.time_of_impact[0] = bad;
      ExpectRejected(p, {"time_of_impact"});
    }
    {
      ImpactProblem p = Valid();
      p.normals.coeffRef(1, 2) = bad;
      ExpectRejected(p, {"normals"});
    }
    {
      Eigen::MatrixXd minv = Eigen::Vector3d(1.0, 0.5, 1.0 / 3.0).asDiagonal();
      minv(1, 1) = bad;
      ExpectRejected(WithDenseInverseMass(minv), {"inverse_mass"});
    }
  }
}

TEST(Validation, AsymmetricInverseMass) {
  Eigen::Matrix3d minv = Eigen::Matrix3d::Identity();
  minv(0, 2) = 0.1;  // (2, 0) stays 0
  ExpectRejected(WithDenseInverseMass(minv), {"inverse_mass", "symmetric"});
  // Rounding-level asymmetry (1e-15 ≪ kSymmetryTolerance) is accepted.
  minv(2, 0) = 0.1 + 1e-15;
  EXPECT_NO_THROW(validate(WithDenseInverseMass(minv)));
}

TEST(Validation, IndefiniteInverseMass) {
  // Symmetric with eigenvalues 1.5 and −0.5 in the (0, 1) block.
  Eigen::Matrix3d minv = Eigen::Matrix3d::Identity();
  minv(0, 0) = 0.5;
  minv(1, 1) = 0.5;
  minv(0, 1) = minv(1, 0) = 1.0;
  ExpectRejected(WithDenseInverseMass(minv), {"inverse_mass"});
  // Negative diagonal entry: plainly indefinite.
  ExpectRejected(WithDenseInverseMass(Eigen::Vector3d(1.0, -1.0, 1.0).asDiagonal().toDenseMatrix()),
                 {"inverse_mass"});
  // A PSD matrix whose zero eigenvalue rounds slightly negative is accepted:
  // [[1, 1], [1, 1]] has eigenvalues 2 and 0; perturb by −1e-14 (≪ 1e-10 · 2).
  minv.setIdentity();
  minv.topLeftCorner<2, 2>().setOnes();
  minv(0, 0) -= 1e-14;
  EXPECT_NO_THROW(validate(WithDenseInverseMass(minv)));
}

TEST(Validation, RestitutionOutsideUnitInterval) {
  for (const double r : {-0.1, 1.1, kNaN, kInf}) {
    SCOPED_TRACE(std::to_string(r));
    ImpactProblem p = Valid();
    p.restitution = r;
    ExpectInvalid([&] { validate(p); }, {"restitution"});
    ExpectInvalid([&] { (void)resolve(p); }, {"restitution"});
  }
  for (const double r : {0.0, 1.0}) {
    ImpactProblem p = Valid();
    p.restitution = r;
    EXPECT_NO_THROW(validate(p));
  }
}

TEST(Validation, ZeroNormalRow) {
  ImpactProblem p = Valid();
  p.normals.coeffRef(1, 1) = 0.0;  // stored zeros still make a zero row
  p.normals.coeffRef(1, 2) = 0.0;
  ExpectRejected(p, {"normals", "1"});
  ExpectInvalid([&] { (void)normalized_inner_products(p); }, {"normals"});
}

TEST(Validation, TimeOfImpactPolicyNeedsHints) {
  ImpactProblem p = Valid();
  p.time_of_impact.resize(0);
  EXPECT_NO_THROW(validate(p));  // hints are optional for the problem itself
  ExpectInvalid([&] { (void)resolve(p, Parameters(OrderPolicy::kTimeOfImpact)); },
                {"time_of_impact"});
}

TEST(Validation, PolicyNamesRoundTrip) {
  for (const OrderPolicy policy :
       {OrderPolicy::kMostNegative, OrderPolicy::kLeastNegative, OrderPolicy::kTimeOfImpact,
        OrderPolicy::kIndex, OrderPolicy::kRandom, OrderPolicy::kAll})
    EXPECT_EQ(parse_order_policy(to_string(policy)), policy);
  ExpectInvalid([] { (void)parse_order_policy("fastest"); }, {"fastest"});
  EXPECT_STREQ(to_string(Status::kSuccess), "success");
  EXPECT_STREQ(to_string(Status::kReflectionCapReached), "reflection_cap_reached");
  EXPECT_STREQ(to_string(Status::kBudgetExhausted), "budget_exhausted");
  EXPECT_STREQ(to_string(Status::kInfeasible), "infeasible");
  EXPECT_STREQ(to_string(Status::kLcpFailed), "lcp_failed");
  EXPECT_STREQ(to_string(Status::kFinishedByFallback), "finished_by_fallback");
  EXPECT_STREQ(to_string(Status::kNonFinite), "non_finite");
  EXPECT_STREQ(to_string(Status::kEnergyGain), "energy_gain");
  EXPECT_STREQ(to_string(Status::kStillApproaching), "still_approaching");
  EXPECT_STREQ(to_string(Status::kImpulseOutsideCone), "impulse_outside_cone");
}

// The statuses that carry the input velocity (the adapters fall back on
// them) and those that carry a checked outcome.
TEST(Validation, KeepsInputVelocityListsTheFailures) {
  for (const Status s : {Status::kInfeasible, Status::kLcpFailed, Status::kNonFinite,
                         Status::kEnergyGain, Status::kStillApproaching,
                         Status::kImpulseOutsideCone})
    EXPECT_TRUE(keeps_input_velocity(s)) << to_string(s);
  for (const Status s : {Status::kSuccess, Status::kReflectionCapReached, Status::kBudgetExhausted,
                         Status::kStepLimitReached, Status::kFinishedByFallback})
    EXPECT_FALSE(keeps_input_velocity(s)) << to_string(s);
}

TEST(Validation, DiagnosticsRejectBadInput) {
  EXPECT_THROW((void)pair_gamma(kNaN), InvalidProblem);
  Eigen::Matrix3d minv = Eigen::Matrix3d::Identity();
  minv(0, 2) = 0.1;
  ExpectInvalid([&] { (void)analyze_uniqueness(WithDenseInverseMass(minv)); }, {"inverse_mass"});
}

// ── degenerate but valid problems: never NaN ────────────────────────────────

void ExpectFiniteEverywhere(const ImpactProblem& problem, const std::string& what) {
  SCOPED_TRACE(what);
  for (const OrderPolicy policy :
       {OrderPolicy::kMostNegative, OrderPolicy::kIndex, OrderPolicy::kRandom, OrderPolicy::kAll}) {
    SCOPED_TRACE(to_string(policy));
    for (const double r : {1.0, 0.5, 0.0}) {
      ImpactProblem p = problem;
      p.restitution = r;
      const ImpactResult result = resolve(p, Parameters(policy));
      ASSERT_FALSE(result.outcomes.empty());
      for (const Outcome& o : result.outcomes) {
        EXPECT_TRUE(AllFinite(o.velocity, "velocity"));
        EXPECT_TRUE(AllFinite(o.impulses, "impulses"));
      }
      EXPECT_TRUE(std::isfinite(result.energy_before));
      EXPECT_TRUE(std::isfinite(result.energy_after));
      if (result.indeterminacy) {
        EXPECT_TRUE(std::isfinite(*result.indeterminacy));
      }
      if (result.status != Status::kSuccess) {
        EXPECT_FALSE(result.message.empty());
      }
    }
  }
}

TEST(Degenerate, NeverNaN) {
  ExpectFiniteEverywhere(scenes::newtons_cradle(4, 0, 0.0), "everything at rest");
  {
    ImpactProblem p = scenes::newtons_cradle(3, 0, 0.0);
    p.velocity = Eigen::Vector3d(-1.0, 0.0, 1.0);
    ExpectFiniteEverywhere(p, "all separating");
  }
  {
    ImpactProblem p = scenes::newtons_cradle(3, 1, 1.0);
    p.normals.resize(0, 3);
    ExpectFiniteEverywhere(p, "no contacts");
  }
  {
    // A ball pinned between two walls (opposite normals, c = −1): no finite
    // elastic sequence; the law must stop and fall back.
    ImpactProblem p = ImpactProblem::from_dense(Eigen::MatrixXd::Ones(1, 1),
                                                (Eigen::MatrixXd(2, 1) << 1.0, -1.0).finished(),
                                                Eigen::VectorXd::Ones(1));
    ExpectFiniteEverywhere(p, "opposite walls");
    const ImpactResult result = resolve(p);
    EXPECT_EQ(result.status, Status::kReflectionCapReached);
    // Plastic fallback: the pinned ball stops.
    EXPECT_NEAR(result.outcomes[0].velocity[0], 0.0, kOneRounding);
  }
  {
    // Contact on a locked DOF, approaching through its offset (a kinematic
    // paddle pushing a static body): infeasible, velocity unchanged.
    ImpactProblem p = ImpactProblem::from_dense(
        Eigen::Vector2d(1.0, 0.0).asDiagonal().toDenseMatrix(),
        (Eigen::MatrixXd(2, 2) << 1.0, 0.0, 0.0, 1.0).finished(), Eigen::Vector2d(-1.0, 0.0));
    p.offsets = Eigen::Vector2d(0.0, -2.0);
    ExpectFiniteEverywhere(p, "locked DOF pushed");
    const ImpactResult result = resolve(p);
    EXPECT_EQ(result.status, Status::kInfeasible);
    EXPECT_EQ(result.outcomes[0].velocity, p.velocity);
  }
  {
    // Extreme but representable scales.
    for (const double scale : {1e-150, 1e100}) {
      ImpactProblem p = scenes::newtons_cradle(3, 1, scale);
      ExpectFiniteEverywhere(p, "speed " + std::to_string(scale));
    }
  }
}

}  // namespace
}  // namespace simpact
