// The pipeline stages both adapters share (plugin/src/bullet/cluster_stages.h)
// on their own: the plan (strike, restitution, friction → law, the Routh
// cap), the base-solver hand-off (hidden points and muted restitutions
// given back exactly, in any interleaving) and the energy restore.
#include "bullet/cluster_stages.h"

#include <BulletCollision/NarrowPhaseCollision/btManifoldPoint.h>
#include <BulletCollision/NarrowPhaseCollision/btPersistentManifold.h>

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include <cmath>
#include <cstdlib>
#include <vector>

namespace {

namespace internal = simpact::bullet::internal;
using internal::PlannedLaw;
using simpact::bullet::ImpactLaw;
using simpact::bullet::ImpactSettings;

btManifoldPoint Point(double restitution, double friction) {
  btManifoldPoint p;
  p.m_combinedRestitution = btScalar(restitution);
  p.m_combinedFriction = btScalar(friction);
  return p;
}

// Plans one cluster of `points` (u, restitution, friction) under `law`.
internal::ClusterPlan Plan(ImpactLaw law, const std::vector<std::array<double, 3>>& points,
                           int max_contacts = 8, bool plastic = false) {
  ImpactSettings settings;
  settings.law = law;
  settings.routh.max_contacts = max_contacts;
  settings.resolve_plastic_impacts = plastic;
  internal::ClusterPlan plan(internal::StrikeThresholds{0.1, 0.1});
  std::vector<btManifoldPoint> storage;
  storage.reserve(points.size());
  for (const auto& [u, restitution, friction] : points) {
    storage.push_back(Point(restitution, friction));
    plan.add(u, storage.back(), nullptr);
  }
  internal::decide_law(settings, static_cast<int>(points.size()), plan);
  return plan;
}

TEST(ClusterPlan, TheRestitutionIsTheSmallestOfTheStrikingPoints) {
  // The resting point (u = −0.05, above −threshold) does not strike: its
  // R = 0.2 is not the cluster's.
  const internal::ClusterPlan plan = Plan(ImpactLaw::kPropagative, {{-1.0, 0.7, 0.0}, {-2.0, 0.5, 0.0}, {-0.05, 0.2, 0.0}});
  EXPECT_TRUE(plan.impact);
  EXPECT_EQ(plan.restitution, 0.5);
  EXPECT_EQ(plan.law, PlannedLaw::kPropagative);
  EXPECT_FALSE(Plan(ImpactLaw::kPropagative, {{-0.05, 1.0, 0.0}}).impact);
  EXPECT_EQ(Plan(ImpactLaw::kPropagative, {{-0.05, 1.0, 0.0}}).law, PlannedLaw::kNone);
}

// A point of a manifold that carried load in the last base solve strikes
// only above the sustained threshold (ImpactSettings::sustained_threshold);
// a point of an unloaded manifold, or a synthetic one, above the impact
// threshold. The load is the manifold's, not the point's: Bullet re-creates
// the corner points of a resting box with no impulse of their own.
TEST(ClusterPlan, LoadedManifoldsStrikeOnlyAboveTheSustainedThreshold) {
  const internal::StrikeThresholds thresholds{0.1, 0.4};
  btPersistentManifold loaded(nullptr, nullptr, 0, btScalar(0.02), btScalar(0.02));
  btManifoldPoint carrying = Point(0.0, 0.5), fresh = Point(0.0, 0.5);
  carrying.m_appliedImpulse = btScalar(0.3);
  loaded.addManifoldPoint(carrying);
  loaded.addManifoldPoint(fresh);
  btPersistentManifold unloaded(nullptr, nullptr, 0, btScalar(0.02), btScalar(0.02));
  unloaded.addManifoldPoint(fresh);
  ASSERT_TRUE(internal::carried_load(&loaded));
  ASSERT_FALSE(internal::carried_load(&unloaded));
  ASSERT_FALSE(internal::carried_load(nullptr));
  EXPECT_EQ(thresholds.of(&loaded), 0.4);
  EXPECT_EQ(thresholds.of(&unloaded), 0.1);
  EXPECT_EQ(thresholds.of(nullptr), 0.1);
  for (const double u : {-0.2, -0.5}) {
    internal::ClusterPlan on_loaded(thresholds), on_unloaded(thresholds), synthetic(thresholds);
    on_loaded.add(u, loaded.getContactPoint(1), &loaded);  // the fresh point of the loaded manifold
    on_unloaded.add(u, unloaded.getContactPoint(0), &unloaded);
    synthetic.add(u, fresh, nullptr);
    EXPECT_EQ(on_loaded.impact, u < -0.4) << u;
    EXPECT_TRUE(on_unloaded.impact) << u;
    EXPECT_TRUE(synthetic.impact) << u;
    EXPECT_EQ(on_loaded.threshold(), 0.1);  // the cluster's impact threshold stays the impact one
  }
}

TEST(ClusterPlan, AutoPicksByFrictionAndRestitution) {
  EXPECT_EQ(Plan(ImpactLaw::kAuto, {{-1.0, 0.5, 0.0}}).law, PlannedLaw::kPropagative);  // frictionless
  EXPECT_EQ(Plan(ImpactLaw::kAuto, {{-1.0, 1.0, 0.3}}).law, PlannedLaw::kPropagative);  // elastic
  EXPECT_EQ(Plan(ImpactLaw::kAuto, {{-1.0, 0.0, 0.3}}).law, PlannedLaw::kRouth);        // plastic
  EXPECT_EQ(Plan(ImpactLaw::kAuto, {{-1.0, 0.4, 0.3}}).law, PlannedLaw::kRouthRestitution);
  EXPECT_EQ(Plan(ImpactLaw::kAuto, {{-1.0, 0.4, 0.3}}).applied(), simpact::bullet::AppliedLaw::kRouthRestitution);
  EXPECT_EQ(Plan(ImpactLaw::kAuto, {{-1.0, 0.4, 0.3}}).routh_restitution(), double(btScalar(0.4)));  // stored in btScalar
  EXPECT_EQ(Plan(ImpactLaw::kAuto, {{-1.0, 0.0, 0.3}}).routh_restitution(), 0.0);
  // Plastic and frictionless: the base solver's unless resolve_plastic_impacts.
  EXPECT_EQ(Plan(ImpactLaw::kAuto, {{-1.0, 0.0, 0.0}}).law, PlannedLaw::kNone);
  EXPECT_EQ(Plan(ImpactLaw::kAuto, {{-1.0, 0.0, 0.0}}, 8, true).law, PlannedLaw::kPropagative);
  // Restitution above 1 (a host's combiner) is clamped.
  EXPECT_EQ(Plan(ImpactLaw::kAuto, {{-1.0, 1.5, 0.3}}).restitution, 1.0);
}

TEST(ClusterPlan, RouthRestitutionTakesEveryImpactClusterWithItsRestitution) {
  const internal::ClusterPlan frictional = Plan(ImpactLaw::kRouthRestitution, {{-1.0, 0.4, 0.3}});
  EXPECT_EQ(frictional.law, PlannedLaw::kRouthRestitution);
  EXPECT_EQ(frictional.routh_restitution(), double(btScalar(0.4)));
  EXPECT_TRUE(frictional.routh());
  EXPECT_EQ(Plan(ImpactLaw::kRouthRestitution, {{-1.0, 0.4, 0.0}}).law, PlannedLaw::kRouthRestitution);
  EXPECT_EQ(Plan(ImpactLaw::kRouthRestitution, {{-1.0, 1.0, 0.3}}).routh_restitution(), 1.0);
  // Law routh stays inelastic whatever the cluster's restitution.
  EXPECT_EQ(Plan(ImpactLaw::kRouth, {{-1.0, 0.4, 0.3}}).routh_restitution(), 0.0);
}

TEST(ClusterPlan, TheRouthCapLeavesOversizedClustersToTheBaseOrThePropagativeLaw) {
  const std::vector<std::array<double, 3>> three = {{-1.0, 0.4, 0.3}, {-1.0, 0.4, 0.3}, {-1.0, 0.4, 0.3}};
  const internal::ClusterPlan routh = Plan(ImpactLaw::kRouth, three, 2);
  EXPECT_TRUE(routh.oversized);
  EXPECT_EQ(routh.law, PlannedLaw::kBaseSolver);
  const internal::ClusterPlan blend = Plan(ImpactLaw::kAuto, three, 2);
  EXPECT_TRUE(blend.oversized);
  EXPECT_EQ(blend.law, PlannedLaw::kPropagative);  // R > 0: its friction left to the base solver
  EXPECT_FALSE(Plan(ImpactLaw::kAuto, three, 3).oversized);
}

// A manifold of `n` points whose restitutions are 0.1, 0.2, … (their ids).
struct Manifold {
  btPersistentManifold manifold;
  explicit Manifold(int n) {
    for (int i = 0; i < n; ++i) {
      btManifoldPoint p;
      p.m_combinedRestitution = btScalar(0.1 * (i + 1));
      p.m_appliedImpulse = btScalar(i + 1);  // identifies the point
      manifold.addManifoldPoint(p);
    }
  }
  std::vector<double> ids() const {
    std::vector<double> out;
    for (int i = 0; i < manifold.getNumContacts(); ++i) out.push_back(double(manifold.getContactPoint(i).m_appliedImpulse));
    return out;
  }
  std::vector<double> restitutions() const {
    std::vector<double> out;
    for (int i = 0; i < manifold.getNumContacts(); ++i)
      out.push_back(double(manifold.getContactPoint(i).m_combinedRestitution));
    return out;
  }
};

TEST(BaseSolverHandoff, GivesBackHiddenPointsAndRestitutionsInAnyOrder) {
  for (const bool mute_first : {true, false}) {
    Manifold a(4), b(3);
    const std::vector<double> ids_a = a.ids(), ids_b = b.ids();
    const std::vector<double> r_a = a.restitutions(), r_b = b.restitutions();
    internal::BaseSolverHandoff handoff;
    // Slots 0 and 3 of `a` take part in the hiding swaps (a restore that
    // gave back restitutions by slot in the wrong order would put them on
    // other points).
    const auto mute = [&] {
      handoff.mute_restitution(a.manifold.getContactPoint(0));
      handoff.mute_restitution(a.manifold.getContactPoint(3));
      handoff.mute_restitution(b.manifold.getContactPoint(0));
    };
    if (mute_first) mute();
    handoff.hide({{&a.manifold, 0}, {&b.manifold, 2}, {&a.manifold, 2}});
    EXPECT_EQ(a.manifold.getNumContacts(), 2);
    EXPECT_EQ(b.manifold.getNumContacts(), 2);
    // Visible: a's points 2 and 4 (ids), b's 1 and 2.
    EXPECT_EQ(a.ids(), (std::vector<double>{4, 2}));
    EXPECT_EQ(b.ids(), (std::vector<double>{1, 2}));
    if (!mute_first) mute();
    handoff.restore();
    EXPECT_TRUE(handoff.empty());
    EXPECT_EQ(a.ids(), ids_a);
    EXPECT_EQ(b.ids(), ids_b);
    EXPECT_EQ(a.restitutions(), r_a) << "mute first: " << mute_first;
    EXPECT_EQ(b.restitutions(), r_b) << "mute first: " << mute_first;
  }
}

}  // namespace

namespace restore {

// A 6-coordinate body metric M (SPD, fixed seed) and the exact elastic
// reflection of v* along an impulse response p in it: E(v⁺) = E(v*).
struct Reflection {
  Eigen::MatrixXd mass;
  Eigen::VectorXd before, after;
  double energy(const Eigen::VectorXd& v) const { return 0.5 * v.dot(mass * v); }
};

Reflection Reflect() {
  Reflection r;
  std::srand(7);
  const Eigen::MatrixXd a = Eigen::MatrixXd::Random(6, 6);
  r.mass = a * a.transpose() + Eigen::MatrixXd::Identity(6, 6);
  r.before = Eigen::VectorXd::Random(6);
  // A near head-on strike: the reflection moves most of the energy
  // (E(Δ) ≈ 3.9 E(v*) here), as in the fuzzed worlds.
  const Eigen::VectorXd p = r.before + 0.3 * Eigen::VectorXd::Random(6);  // M⁻¹ jᵀ
  r.after = r.before - 2.0 * (p.dot(r.mass * r.before) / p.dot(r.mass * p)) * p;
  return r;
}

}  // namespace restore

/// Stage "restore energy" (cluster_stages.h): an outcome that gains a few
/// 1e-9 of E(v*) by rounding (as nearly conflicting joints give) is scaled
/// back to E(v*) to rounding, moving by at most kEnergyRestoreMaxShrink of
/// its change; gains at rounding level, dissipation, and gains that would
/// need a larger shrink (not rounding: left to the adapter's check) are
/// left bit for bit.
TEST(RestoreEnergy, ScalesBackRoundingGainsOnly) {
  const restore::Reflection r = restore::Reflect();
  const auto energy = [&](const Eigen::VectorXd& v) { return r.energy(v); };
  const auto before = [&] { return r.before; };
  const double e0 = r.energy(r.before);
  ASSERT_NEAR(r.energy(r.after), e0, 1e-14 * e0);
  const Eigen::VectorXd change = r.after - r.before;
  // The exact outcome stretched by t so that it gains `gain` of E(v*): as
  // ⟨v*, Δ⟩_M = −E(Δ), E(v* + (1 + t)Δ) = E(v*) + (t + t²) E(Δ).
  const auto gaining = [&](double gain) {
    const double stretch = gain * e0 / r.energy(change);
    return Eigen::VectorXd(r.before + (1.0 + stretch) * change);
  };

  // Whether the cluster may gain is asked past the threshold only.
  int asked = 0;
  const auto invariant = [&] {
    ++asked;
    return true;
  };
  const auto may_gain = [] { return false; };

  Eigen::VectorXd velocity = gaining(3e-9);
  double e1 = r.energy(velocity);
  ASSERT_GT(e1, e0 * (1.0 + 1e-9));
  {
    // A cluster whose impact may gain (a moving partner) keeps its outcome.
    Eigen::VectorXd kept = velocity;
    double e_kept = e1;
    EXPECT_FALSE(internal::restore_energy(energy, may_gain, before, e0, kept, e_kept));
    EXPECT_TRUE(kept == velocity);
    EXPECT_EQ(e_kept, e1);
  }
  ASSERT_TRUE(internal::restore_energy(energy, invariant, before, e0, velocity, e1));
  EXPECT_EQ(asked, 1);
  EXPECT_LE(std::abs(e1 - e0), 1e-14 * e0);
  EXPECT_DOUBLE_EQ(e1, r.energy(velocity));
  EXPECT_LE((velocity - r.after).cwiseAbs().maxCoeff(), 1e-8 * change.cwiseAbs().maxCoeff());

  for (const double gain : {1e-13, -1e-3, 1e-5}) {
    SCOPED_TRACE(gain);
    const Eigen::VectorXd original = gain < 0.0 ? Eigen::VectorXd(r.before + 0.5 * change) : gaining(gain);
    velocity = original;
    e1 = r.energy(velocity);
    const double e1_original = e1;
    asked = 0;
    EXPECT_FALSE(internal::restore_energy(energy, invariant, before, e0, velocity, e1));
    EXPECT_TRUE(velocity == original);
    EXPECT_EQ(e1, e1_original);
    EXPECT_EQ(asked, gain > 1e-12 ? 1 : 0);  // kEnergyRestoreThreshold
  }
}
