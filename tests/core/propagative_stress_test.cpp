// Seeded stress test of the propagative laws (elastic, restitution,
// plastic) on BADLY SCALED problems: mass ratios 1e-3..1e3 between DOFs,
// overall inverse-mass scales 1e-12..1e6, near-null directions of M⁻¹ and
// infinitely massive DOFs. A fuzzing audit found 2,948 of 257k `success`
// results leaving a contact approaching. Every result that
// keeps_input_velocity() does not flag must now be physical.
#include <simpact/propagative.h>

#include <Eigen/Eigenvalues>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>

namespace simpact {
namespace {

/// Problems per run: the audit's failure rate was ~1 %, so two thousand
/// problems meet it (94 of 4000 approached before the fix) while the test
/// stays a few seconds.
constexpr int kStressProblems = 2000;
/// Judged as a user would, relative to the problem: an approach faster than
/// 1e-6 of the largest g-normalized pre-impact speed; an energy gain above
/// 1e-6 of that speed's energy ½ S².
constexpr double kApproachSlack = 1e-6;
constexpr double kEnergySlack = 1e-6;

TEST(PropagativeStress, BadlyScaledProblemsNeverReturnUnphysicalOutcomes) {
  std::mt19937_64 rng(20261124);
  std::uniform_real_distribution<double> unit(-1.0, 1.0), u01(0.0, 1.0);
  int problems = 0, usable = 0, success = 0, failed = 0, approach = 0, energy = 0, non_finite = 0;
  for (int k = 0; k < kStressProblems; ++k) {
    const int n = 1 + static_cast<int>(u01(rng) * 7);
    const int m = 1 + static_cast<int>(u01(rng) * 6);
    Eigen::MatrixXd a(n, n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) a(i, j) = unit(rng);
    Eigen::VectorXd d(n);
    for (int i = 0; i < n; ++i) d[i] = std::pow(10.0, 1.5 * unit(rng));
    if (n > 1 && u01(rng) < 0.2) d[0] = 0.0;  // an infinitely massive DOF
    Eigen::MatrixXd inverse_mass = std::pow(10.0, -3.0 + 9.0 * unit(rng)) * d.asDiagonal() *
                                   (a * a.transpose() + 0.01 * Eigen::MatrixXd::Identity(n, n)) *
                                   d.asDiagonal();
    if (n > 1 && u01(rng) < 0.2) {
      Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(inverse_mass);
      Eigen::VectorXd ev = eig.eigenvalues();
      ev[0] = 1e-9 * ev[n - 1];
      inverse_mass = eig.eigenvectors() * ev.asDiagonal() * eig.eigenvectors().transpose();
      inverse_mass = (0.5 * (inverse_mass + inverse_mass.transpose())).eval();
    }
    Eigen::MatrixXd jn(m, n);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) jn(i, j) = unit(rng);
    Eigen::VectorXd v(n);
    for (int j = 0; j < n; ++j) v[j] = unit(rng);
    ImpactProblem p = ImpactProblem::from_dense(inverse_mass, jn, v);
    const double r = u01(rng);
    p.restitution = r < 0.4 ? 0.0 : r < 0.7 ? 1.0 : u01(rng);
    PropagativeParameters params;
    params.policy = u01(rng) < 0.5 ? OrderPolicy::kMostNegative : OrderPolicy::kRandom;
    params.seed = static_cast<std::uint64_t>(k);
    ImpactResult result;
    try {
      result = resolve(p, params);
    } catch (const InvalidProblem&) {
      continue;  // rounding made M⁻¹ indefinite: rejected up front, fine
    }
    ++problems;
    const Outcome& o = result.outcomes.at(0);
    if (keeps_input_velocity(result.status)) {
      ++failed;
      EXPECT_EQ(o.velocity, p.velocity) << "problem " << k;
      continue;
    }
    ++usable;
    success += result.status == Status::kSuccess;
    if (!o.velocity.allFinite() || !o.impulses.allFinite()) {
      ++non_finite;
      continue;
    }
    const Eigen::MatrixXd w = jn * inverse_mass * jn.transpose();
    const Eigen::VectorXd u0 = jn * v, u1 = jn * o.velocity;
    double speed = 0.0;
    for (int i = 0; i < m; ++i)
      if (w(i, i) > 0.0) speed = std::max(speed, std::abs(u0[i]) / std::sqrt(w(i, i)));
    bool approaching = false;
    for (int i = 0; i < m; ++i)
      if (w(i, i) > 0.0 && u1[i] / std::sqrt(w(i, i)) < -kApproachSlack * speed) approaching = true;
    approach += approaching;
    energy += 0.5 * o.impulses.dot(u0 + u1) > kEnergySlack * 0.5 * speed * speed;
  }
  std::cout << "[ propagative stress ] " << problems << " problems: " << success << " success, "
            << usable << " usable, " << failed << " failed (input velocity); among usable: "
            << approach << " approaching, " << energy << " gaining energy, " << non_finite
            << " non-finite\n";
  EXPECT_GT(success, problems / 2) << "the law must still work on most problems";
  EXPECT_EQ(approach, 0);
  EXPECT_EQ(energy, 0);
  EXPECT_EQ(non_finite, 0);
}

}  // namespace
}  // namespace simpact
