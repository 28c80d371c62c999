// Reproductions found by fuzzing (tests/data/repro/README.md): each input
// once gave `success` with impossible numbers, or cost far too much. The
// loader reads the `simpact resolve` format (keys as in
// plugin/cli/src/resolve.cpp) with nlohmann_json, linked to this test target
// only; the core itself stays Eigen-only.
#include <simpact/propagative.h>
#include <simpact/routh.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <iostream>
#include <string>

namespace simpact {
namespace {

using Json = nlohmann::json;

Json load(const std::string& name) {
  std::ifstream in(std::string(SIMPACT_SOURCE_DIR) + "/tests/data/repro/" + name);
  EXPECT_TRUE(in.good()) << name;
  return Json::parse(in);
}

Eigen::VectorXd vector_of(const Json& j) {
  Eigen::VectorXd v(static_cast<Eigen::Index>(j.size()));
  for (size_t i = 0; i < j.size(); ++i) v[static_cast<Eigen::Index>(i)] = j[i].get<double>();
  return v;
}

Eigen::MatrixXd matrix_of(const Json& j, Eigen::Index cols) {
  Eigen::MatrixXd a(static_cast<Eigen::Index>(j.size()), cols);
  for (size_t r = 0; r < j.size(); ++r)
    for (Eigen::Index c = 0; c < cols; ++c) a(static_cast<Eigen::Index>(r), c) = j[r][static_cast<size_t>(c)].get<double>();
  return a;
}

ImpactProblem impact_problem(const Json& j) {
  const Eigen::VectorXd v = vector_of(j["velocity"]);
  ImpactProblem p = ImpactProblem::from_dense(matrix_of(j["inverse_mass"], v.size()),
                                              matrix_of(j["normals"], v.size()), v);
  if (j.contains("restitution")) p.restitution = j["restitution"].get<double>();
  if (j.contains("offsets")) p.offsets = vector_of(j["offsets"]);
  if (j.contains("toi")) p.time_of_impact = vector_of(j["toi"]);
  return p;
}

// A `simpact resolve` input of law routh (restitution optional).
FrictionalProblem frictional_problem(const Json& j) {
  const Eigen::VectorXd v = vector_of(j["velocity"]);
  FrictionalProblem p = FrictionalProblem::from_dense(
      matrix_of(j["inverse_mass"], v.size()), matrix_of(j["normals"], v.size()),
      matrix_of(j["tangents"], v.size()), v, vector_of(j["friction"]));
  if (j.contains("restitution")) p.restitution = vector_of(j["restitution"]);
  return p;
}

// max |v⁺ − (v⁻ + M⁻¹ (J_nᵀ Λ_n + J_tᵀ Λ_t))|: whether an outcome's
// impulses produce its velocity.
double impulse_mismatch(const FrictionalProblem& p, const FrictionalOutcome& o) {
  const Eigen::VectorXd expected =
      p.velocity + Eigen::MatrixXd(p.inverse_mass) * (Eigen::MatrixXd(p.normals).transpose() * o.normal_impulses +
                                                      Eigen::MatrixXd(p.tangents).transpose() * o.tangential_impulses);
  return (o.velocity - expected).cwiseAbs().maxCoeff();
}

PropagativeParameters propagative_parameters(const Json& j) {
  PropagativeParameters params;
  if (j.contains("policy")) params.policy = parse_order_policy(j["policy"].get<std::string>());
  if (j.contains("seed")) params.seed = j["seed"].get<std::uint64_t>();
  if (j.contains("enumeration_budget")) params.enumeration_budget = j["enumeration_budget"].get<std::int64_t>();
  return params;
}

// Whatever the status, the result must be honest: either a checked outcome
// (no approach, no gain, finite) or the input velocity untouched.
void expect_honest(const ImpactProblem& p, const ImpactResult& r) {
  std::cout << "[ repro ] " << to_string(r.status) << ", " << r.reflections
            << " reflections: " << r.message << "\n";
  ASSERT_FALSE(r.outcomes.empty());
  const Outcome& o = r.outcomes[0];
  if (keeps_input_velocity(r.status)) {
    EXPECT_EQ(o.velocity, p.velocity) << "a failed law returns the input velocity, bit for bit";
    EXPECT_EQ(o.impulses, Eigen::VectorXd::Zero(p.contacts()));
    EXPECT_FALSE(r.message.empty());
    return;
  }
  EXPECT_TRUE(o.velocity.allFinite());
  EXPECT_TRUE(o.impulses.allFinite());
}

// 2 DOF, M⁻¹ = diag(0, 0.087): contact 0 acts only through DOF 0, which is
// infinitely massive, and approaches at −0.88: no impulse can stop it. The
// W + εI solution (impulses 5.9e13, energy ×22,000) used to be accepted.
TEST(Repro, InfeasiblePlasticImpactIsNotSuccess) {
  const Json j = load("plastic_infeasible_33610.json");
  const ImpactProblem p = impact_problem(j);
  const ImpactResult r = resolve(p, propagative_parameters(j));
  EXPECT_EQ(r.status, Status::kInfeasible) << r.message;
  expect_honest(p, r);
}

// Plastic, 19 contacts on 5 DOF: `success` left a contact approaching.
TEST(Repro, PlasticOutcomeNeverLeavesAContactApproaching) {
  const Json j = load("plastic_approaching_17924.json");
  const ImpactProblem p = impact_problem(j);
  const ImpactResult r = resolve(p, propagative_parameters(j));
  expect_honest(p, r);
  if (!keeps_input_velocity(r.status)) {
    const Eigen::VectorXd u = Eigen::MatrixXd(p.normals) * r.outcomes[0].velocity;
    const Eigen::MatrixXd w = Eigen::MatrixXd(p.normals) * Eigen::MatrixXd(p.inverse_mass) *
                              Eigen::MatrixXd(p.normals).transpose();
    const Eigen::VectorXd u0 = Eigen::MatrixXd(p.normals) * p.velocity;
    double speed = 0.0;
    for (int i = 0; i < p.contacts(); ++i) speed = std::max(speed, std::abs(u0[i]) / std::sqrt(w(i, i)));
    for (int i = 0; i < p.contacts(); ++i)
      EXPECT_GE(u[i], -1e-8 * (speed * std::sqrt(w(i, i)) + 10.0)) << "contact " << i;
  }
}

// A constrained metric (rank-deficient M⁻¹) with velocity along its null
// space drives two contacts: reflections alternate and pump energy until
// overflow (~446k reflections, then NaN with `success`). Contacts 0 and 4
// have exactly opposite normals in the metric (c = −1): a jam, whose run is
// stopped at kMaxPairRun with the plastic fallback (or an honest failure).
TEST(Repro, DrivenPairIsStoppedEarlyNotAfterOverflow) {
  const Json j = load("prop_nan_2028658.json");
  const ImpactProblem p = impact_problem(j);
  const ImpactResult r = resolve(p, propagative_parameters(j));
  EXPECT_NE(r.status, Status::kSuccess) << "the sequence cannot end: it is driven";
  EXPECT_LE(r.reflections, kMaxPairRun + kPairRunSlack) << "stopped by the pair-run bound";
  expect_honest(p, r);
  if (!keeps_input_velocity(r.status)) {
    EXPECT_EQ(r.status, Status::kReflectionCapReached) << r.message;
    EXPECT_NE(r.message.find("contacts 4 and 0"), std::string::npos) << r.message;
  }
}

// Routh, 1 DOF with M⁻¹ = 1.1e-16 (an 8.7e15 kg body): Lemke's solution put
// u_n from −0.44 to +1.15 under an inelastic law (energy +1.5e16) and passed
// a residual check relative to its own 4e16 impulses. With a single DOF the
// body's inverse mass is the only scale of the data, so it is not "near
// zero" relative to anything: the right outcome is a plastic stop (the one
// DOF is along every normal, v⁺ = 0, all 2.57e15 J dissipated). Lemke on
// the LCP as stated cannot find it (W̄ ~ 1e-17 sits below its relative
// pivot tolerance next to the β rows' ±1); in data units it does.
TEST(Repro, RouthStopsAHeavyBodyWithoutGainingEnergy) {
  const Json j = load("routh_energy_gain_28183.json");
  const FrictionalProblem p = frictional_problem(j);
  const Eigen::VectorXd& v = p.velocity;
  const double inverse_mass = j["inverse_mass"][0][0].get<double>();
  RouthParameters params;
  params.seed = j["seed"].get<std::uint64_t>();
  params.sampler = parse_impulse_sampler(j["sampler"].get<std::string>());
  params.max_steps = j["max_steps"].get<int>();
  const FrictionalResult r = RouthSampler(p, params).sample(j["step"].get<std::uint64_t>());
  ASSERT_EQ(r.outcomes.size(), 1u);
  const FrictionalOutcome& o = r.outcomes[0];
  std::cout << "[ repro ] " << to_string(r.status) << ", u_n " << o.normal_velocities.transpose()
            << ", energy change " << o.energy_change << ": " << r.message << "\n";
  EXPECT_EQ(r.status, Status::kSuccess) << r.message;
  const double energy = 0.5 * v[0] * v[0] / inverse_mass;
  // Exact to rounding of the O(1) velocities: the outcome is v⁺ = 0.
  EXPECT_NEAR(o.velocity[0], 0.0, 1e-12);
  EXPECT_NEAR(o.energy_change, -energy, 1e-9 * energy);
  EXPECT_GE(o.normal_velocities.minCoeff(), -1e-12);
}

// Routh with restitution on a small cluster (m = 5 and 8: capsules of a
// cone-twist chain resting on boxes, the Bullet adapter's law auto; README
// of tests/data/repro): one increment's LCP, solved by Lemke as stated and
// in data units, missed the 1e-9 residual tolerance by a hair (1.0e-9 to
// 1.9e-9), and the sample failed — the adapter then handed the cluster to
// the base solver. Box pivoting now rescues such an increment (routh.h,
// "LCP solvers"). Lemke alone stays the reference: where it solves every
// increment nothing is rescued and the sample is its sample bit for bit;
// where it fails, the rescued sample must pass every check of the law.
class RouthRescue : public ::testing::TestWithParam<const char*> {};

TEST_P(RouthRescue, BoxPivotingSolvesTheIncrementLemkeMissed) {
  const Json j = load(GetParam());
  const FrictionalProblem p = frictional_problem(j);
  const Eigen::VectorXd& v = p.velocity;
  RouthParameters params;
  params.seed = j["seed"].get<std::uint64_t>();
  params.increment_solver = IncrementSolver::kLemke;
  const FrictionalResult reference = RouthSampler(p, params).sample(0);
  params.increment_solver = IncrementSolver::kAutomatic;
  const FrictionalResult r = RouthSampler(p, params).sample(0);
  ASSERT_EQ(r.outcomes.size(), 1u);
  const FrictionalOutcome& o = r.outcomes[0];
  std::cout << "[ repro ] Lemke alone: " << to_string(reference.status) << " (" << reference.message
            << "); automatic: " << to_string(r.status) << ", " << o.lcps << " LCPs, " << o.increment_rescues
            << " rescued\n";
  EXPECT_EQ(r.status, Status::kSuccess) << r.message;
  EXPECT_TRUE(o.terminated);
  EXPECT_EQ(reference.status == Status::kSuccess, o.increment_rescues == 0)
      << "a rescue happens exactly where Lemke alone fails";
  if (reference.status == Status::kSuccess) {
    EXPECT_EQ(o.velocity, reference.outcomes[0].velocity);
    return;
  }
  // The law's conditions, checked here rather than trusted: no contact
  // approaches (to 1e-9 of the approach, the sampler's separation
  // tolerance), Stronge's restitution never adds energy, and every
  // friction impulse lies in its polyhedral cone (Σ|Λ_t| ≤ μ Λ_n up to the
  // box pivoting's acceptance of 1e-10 relative, here 1e-9).
  const Eigen::VectorXd u0 = Eigen::MatrixXd(p.normals) * v;
  const double approach = std::max(-u0.minCoeff(), 0.0);
  EXPECT_GE(o.normal_velocities.minCoeff(), -1e-9 * approach);
  EXPECT_LE(o.energy_change, 0.0);
  EXPECT_TRUE(o.velocity.allFinite());
  for (int i = 0; i < p.contacts(); ++i) {
    EXPECT_GE(o.normal_impulses[i], 0.0) << "contact " << i;
    const double tangential = std::abs(o.tangential_impulses[2 * i]) + std::abs(o.tangential_impulses[2 * i + 1]);
    EXPECT_LE(tangential, p.friction[i] * o.normal_impulses[i] * (1.0 + 1e-9) + 1e-12) << "contact " << i;
  }
  EXPECT_LE(impulse_mismatch(p, o), 1e-9 * (v.cwiseAbs().maxCoeff() + 1.0));
}

INSTANTIATE_TEST_SUITE_P(Repro, RouthRescue,
                         ::testing::Values("routh_lemke_near_miss_m5.json", "routh_lemke_near_miss_m8.json"));

// Routh with restitution (e = 0.25, μ = 0.25), 3 corner contacts of a box
// sliding at 2.7 m/s and spinning at 4.6 rad/s (BasicDemo's boxes after a
// ball shot in: README of tests/data/repro). A release left contact 2 at
// u_n = −2.19e-10 m/s: an approach every increment LCP accepted as resolved
// (its residual tolerance is relative to the row's data scale, ~0.5 m/s
// here, set by the sliding corners), so each later increment solved to
// λ = 0, while the termination test — relative to the approach scale alone,
// 0.034 m/s — still called it colliding. Algorithm 1 spun for all its
// increments (also 10 000 of them), twice, and the cluster went to the base
// solver. Now the termination test never asks for more than an increment
// resolves (routh.h, "Colliding").
TEST(Repro, RouthTerminationAsksNoMoreThanAnIncrementResolves) {
  const Json j = load("routh_restitution_spin_m3.json");
  const FrictionalProblem p = frictional_problem(j);
  const Eigen::VectorXd& v = p.velocity;
  RouthParameters params;
  params.seed = j["seed"].get<std::uint64_t>();
  const FrictionalResult r = RouthSampler(p, params).sample(0);
  ASSERT_EQ(r.outcomes.size(), 1u);
  const FrictionalOutcome& o = r.outcomes[0];
  std::cout << "[ repro ] " << to_string(r.status) << ", " << o.lcps << " LCPs, u_n " << o.normal_velocities.transpose()
            << ": " << r.message << "\n";
  EXPECT_EQ(r.status, Status::kSuccess) << r.message;
  EXPECT_TRUE(o.terminated);
  EXPECT_FALSE(o.finished_by_fallback);
  EXPECT_LT(o.lcps, params.max_steps) << "one draw, ended by Algorithm 1 itself";
  EXPECT_LE(o.energy_change, 0.0);
  // Every contact at most 1e-9 of the problem's fastest row speed from
  // separating (the termination floor): 5 m/s · 1e-9 is 5e-9 m/s.
  const Eigen::MatrixXd jn = Eigen::MatrixXd(p.normals), jt = Eigen::MatrixXd(p.tangents);
  const double fastest = std::max((jn * v).cwiseAbs().maxCoeff(), (jt * v).cwiseAbs().maxCoeff());
  EXPECT_GE(o.normal_velocities.minCoeff(), -1e-9 * fastest);
  EXPECT_LE(impulse_mismatch(p, o), 1e-12 * (v.cwiseAbs().maxCoeff() + 1.0));
}

// A near-zero effective inverse mass that IS near zero relative to the data:
// the same contact on a 2-DOF problem where the other DOF has inverse mass 1.
// The contact (normal along DOF 1, W_00 = 1e-16 · 0.33) is below the rank
// tolerance and counts as infinitely massive: it takes no impulse, and since
// it approaches, no impulse can stop it (infeasible, input velocity).
// Before, impulses of ~1e16 were applied.
TEST(Repro, NearZeroEffectiveInverseMassIsInert) {
  Eigen::MatrixXd inverse_mass = Eigen::MatrixXd::Zero(2, 2);
  inverse_mass(0, 0) = 1.0;
  inverse_mass(1, 1) = 1.1441790686821198e-16;
  Eigen::MatrixXd normals(2, 2);
  normals << 0.0, 0.57179316404782732,  // the repro's contact 0, along DOF 1
      1.0, 0.0;                          // a resting contact on the light DOF
  ImpactProblem p = ImpactProblem::from_dense(inverse_mass, normals, Eigen::Vector2d(0.0, 0.0));
  p.restitution = 0.0;
  // Resting (u = 0): the inert contact takes no impulse, the other none either.
  ImpactResult r = resolve(p);
  EXPECT_EQ(r.status, Status::kSuccess) << r.message;
  EXPECT_EQ(r.outcomes[0].impulses, Eigen::Vector2d::Zero());
  // Approaching along the inert normal: infeasible, velocity unchanged.
  p.velocity = Eigen::Vector2d(-1.0, -0.76712942416908247);
  r = resolve(p);
  EXPECT_EQ(r.status, Status::kInfeasible) << r.message;
  EXPECT_EQ(r.outcomes[0].velocity, p.velocity);
  // The light DOF alone approaching: stopped exactly, the inert contact idle.
  p.velocity = Eigen::Vector2d(-1.0, 0.0);
  r = resolve(p);
  EXPECT_EQ(r.status, Status::kSuccess) << r.message;
  EXPECT_EQ(r.outcomes[0].impulses[0], 0.0);
  EXPECT_NEAR(r.outcomes[0].velocity[0], 0.0, 1e-15);
  EXPECT_EQ(r.outcomes[0].velocity[1], 0.0);
}

}  // namespace
}  // namespace simpact

namespace simpact {
namespace {

// A kinematic vise: a unit mass between two walls with opposite normals,
// both closing at 1 m/s (offsets −1), R = 1. No sequence ends (every bounce
// speeds the mass up by 2 m/s) and no impulse can stop it (u₁ + u₂ = −2
// whatever the velocity). Before: 10⁶ reflections (the clamp), then the
// plastic fallback's infeasibility. Now the pair run stops at kMaxPairRun.
TEST(Jam, KinematicViseStopsAtMaxPairRun) {
  Eigen::MatrixXd normals(2, 1);
  normals << 1.0, -1.0;
  ImpactProblem p = ImpactProblem::from_dense(Eigen::MatrixXd::Identity(1, 1), normals,
                                              Eigen::VectorXd::Constant(1, 0.25));
  p.offsets = Eigen::Vector2d(-1.0, -1.0);
  const ImpactResult r = resolve(p);
  EXPECT_EQ(r.status, Status::kInfeasible) << r.message;
  EXPECT_EQ(r.reflection_cap, kMaxPairRun);
  EXPECT_EQ(r.outcomes[0].velocity[0], 0.25);
}

// A unit ball wedged between two fixed walls whose normals are 1e-6 rad from
// opposite (a ball in a V-groove of opening 1e-6 rad): Theorem 1 allows
// ⌈π/γ⌉ ≈ 3·10⁶ reflections. The pair is a jam: stopped at kMaxPairRun with
// the plastic outcome, which stops the ball, instead of 10⁶ reflections.
TEST(Jam, BallInANarrowWedgeStopsAtMaxPairRun) {
  const double opening = 1e-6;
  Eigen::MatrixXd normals(2, 2);
  normals << std::cos(opening / 2), std::sin(opening / 2),  //
      -std::cos(opening / 2), std::sin(opening / 2);
  const ImpactProblem p =
      ImpactProblem::from_dense(Eigen::Matrix2d::Identity(), normals, Eigen::Vector2d(-1.0, -0.5));
  const ImpactResult r = resolve(p);
  EXPECT_EQ(r.status, Status::kReflectionCapReached) << r.message;
  EXPECT_EQ(r.reflections, kMaxPairRun);
  EXPECT_NE(r.message.find("jammed"), std::string::npos) << r.message;
  // The plastic outcome stops the ball, up to the wedge's conditioning:
  // impulses of ~1e6 squeeze it (1/(1 − cos 1e-6) ~ 1e12 amplifies
  // rounding to ~1e-4 of the speed), inside the groove (u⁺ ≥ 0).
  const Eigen::Vector2d u = normals * r.outcomes[0].velocity;
  EXPECT_GE(u.minCoeff(), -1e-8);
  EXPECT_LE(r.energy_after, 1e-6 * r.energy_before);
}

}  // namespace
}  // namespace simpact

namespace simpact {
namespace {

// The old duplicate removal compared each new outcome with every kept one;
// this reference does exactly that on the returned set, so it checks that
// the indexed removal kept nothing the quadratic one would have dropped.
// (That it dropped nothing the quadratic one would have kept follows from
// the window being a necessary condition; DedupMatchesQuadraticReference
// checks it on a set small enough to rebuild.)
void expect_distinct(const ImpactProblem& p, const ImpactResult& r, double tolerance, size_t limit) {
  const Eigen::MatrixXd j = Eigen::MatrixXd(p.normals);
  const Eigen::MatrixXd w = j * Eigen::MatrixXd(p.inverse_mass) * j.transpose();
  auto norm = [&](const Eigen::VectorXd& l) { return std::sqrt(std::max(0.0, l.dot(w * l))); };
  const size_t count = std::min(limit, r.outcomes.size());
  for (size_t a = 0; a < count; ++a)
    for (size_t b = a + 1; b < count; ++b) {
      const double scale = std::max(norm(r.outcomes[a].impulses), norm(r.outcomes[b].impulses));
      ASSERT_GT(norm(r.outcomes[a].impulses - r.outcomes[b].impulses), tolerance * scale)
          << "outcomes " << a << " and " << b << " are duplicates";
    }
}

// Resolves a policy-all repro, prints its counts, and checks that the
// comparisons spent on duplicate removal and the indeterminacy stay within a
// few per outcome plus the enumeration budget.
struct AllRun {
  ImpactProblem problem;
  PropagativeParameters params;
  ImpactResult result;
};

AllRun resolve_all_bounded(const Json& j) {
  AllRun run{impact_problem(j), propagative_parameters(j), {}};
  run.result = resolve(run.problem, run.params);
  const ImpactResult& r = run.result;
  std::cout << "[ repro ] " << to_string(r.status) << ": " << r.outcomes.size() << " outcomes, "
            << r.sequences_explored << " sequences, " << r.reflections << " reflections, "
            << r.comparisons << " comparisons\n";
  const double outcomes = static_cast<double>(r.outcomes.size());
  EXPECT_LE(static_cast<double>(r.comparisons),
            4.0 * outcomes + 2.0 * static_cast<double>(run.params.enumeration_budget));
  return run;
}

// Policy all, 4 contacts, budget 1e5: 17.8 s at ba6ab6f. The work is now
// bounded by counts: the comparisons spent on duplicate removal and the
// indeterminacy stay within a few per outcome plus the budget.
TEST(AllPolicy, BudgetBoundsTheComparisonsOfAFourContactProblem) {
  const Json j = load("all_budget_m4_55499.json");
  const AllRun run = resolve_all_bounded(j);
  const ImpactProblem& p = run.problem;
  const PropagativeParameters& params = run.params;
  const ImpactResult& r = run.result;
  EXPECT_LE(r.reflections, params.enumeration_budget);
  expect_distinct(p, r, params.dedup_tolerance, 2000);
}

// Policy all: ~200 s and 34,734 outcomes at ba6ab6f (quadratic duplicate
// removal and indeterminacy).
TEST(AllPolicy, ManyOutcomesCostComparisonsLinearInTheirNumber) {
  const Json j = load("core_seed199_all.json");
  const AllRun run = resolve_all_bounded(j);
  const ImpactProblem& p = run.problem;
  const PropagativeParameters& params = run.params;
  const ImpactResult& r = run.result;
  ASSERT_TRUE(r.indeterminacy.has_value());
  EXPECT_GT(*r.indeterminacy, 0.0);
  expect_distinct(p, r, params.dedup_tolerance, 1500);
}

}  // namespace
}  // namespace simpact
