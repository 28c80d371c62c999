// routh_pile_floor — what an exact Routh increment solver must pay at least
// on a landing wall of boxes (issue #15: "a landing pile of 100 boxes
// resolved by the Routh law at most 10x stock's mean step").
//
// Every exact solver of an increment LCP (pivoting, active-set or Newton)
// solves at least one linear system in the cluster's contact rows per
// active set it tries. This benchmark runs the wall with stock SI (its mean
// step, the target's unit) and with simpact at the default Routh cap (so it
// is fast: the large clusters are found and reported, then handed to the
// base solver), and for every impact cluster it rebuilds the rows from the
// report (normal and two tangents per contact, B; M⁻¹ from the bodies) and
// times ONE sparse factorisation of
//   - the Delassus matrix W = B M⁻¹ Bᵀ + ε I (SimplicialLDLT, AMD), and
//   - the saddle-point matrix [M Bᵀ; B −ε I] (quasi-definite, the same),
// ε = 1e-9 × the mean diagonal (the pattern and the work of an exact solve;
// the value is irrelevant to the timing). Summed over the run and divided by
// the steps, each is a floor per step for "one factorisation per cluster";
// the target's budget, 10 × stock's mean step, over the saddle-point floor
// is how many factorisations per cluster an exact solver could afford.
//
// Usage: routh_pile_floor [--quick] [--csv FILE]   (--quick: 30 boxes, 60 steps)
// Exit status 1 if a size had no impact cluster or a factorisation failed.
#include "benchmark_options.h"

#include <simpact_scenes/bullet_scenes.h>
#include <simpact_worlds/bullet_world.h>

#include <btBulletDynamicsCommon.h>

#include <Eigen/Sparse>
#include <Eigen/SparseCholesky>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <unordered_map>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using Sparse = Eigen::SparseMatrix<double>;
using Triplet = Eigen::Triplet<double>;
using simpact::scenes::BulletWorld;
using simpact::scenes::SolverKind;

constexpr double kRate = 240.0;
/// Regularisation of both matrices, relative to W's mean diagonal: far below
/// any entry that matters, enough to make the singular W (a face's four
/// corners have rank three) factorisable.
constexpr double kRegularisation = 1e-9;
constexpr double kTargetRatio = 10.0;  ///< issue #15: ≤ 10 × stock's mean step

struct Floor {
  int clusters = 0;
  int failed = 0;        ///< factorisations that did not succeed
  int largest = 0;       ///< contacts
  double delassus = 0;   ///< Σ one W factorisation [s]
  double saddle = 0;     ///< Σ one saddle-point factorisation [s]
  double largest_delassus = 0, largest_saddle = 0;  ///< of the largest cluster [s]
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Times one factorisation of W and of the saddle-point matrix for the
// cluster of `report` and adds them to `floor`.
void measure(const simpact::bullet::ImpactReport& report, Floor& floor) {
  const int m = static_cast<int>(report.contacts.size());
  std::unordered_map<const btCollisionObject*, int> index;
  for (size_t i = 0; i < report.bodies.size(); ++i) index[report.bodies[i]] = static_cast<int>(i);
  const int k = static_cast<int>(report.bodies.size());
  if (m == 0 || k == 0) return;
  // B: per contact the normal and the two tangents, [d, r × d] on each side.
  std::vector<Triplet> rows;
  for (int i = 0; i < m; ++i) {
    const auto& c = report.contacts[static_cast<size_t>(i)];
    const btVector3 directions[3] = {c.normal, c.tangent1, c.tangent2};
    for (int side = 0; side < 2; ++side) {
      const btCollisionObject* body = side == 0 ? c.a : c.b;
      const auto found = index.find(body);
      if (found == index.end()) continue;  // static or kinematic partner
      const double sign = side == 0 ? 1.0 : -1.0;
      const btVector3 arm =
          (side == 0 ? c.point_on_a : c.point_on_b) - btRigidBody::upcast(body)->getCenterOfMassPosition();
      for (int d = 0; d < 3; ++d) {
        const btVector3 turn = arm.cross(directions[d]);
        for (int e = 0; e < 3; ++e) {
          rows.emplace_back(3 * i + d, 6 * found->second + e, sign * double(directions[d][e]));
          rows.emplace_back(3 * i + d, 6 * found->second + 3 + e, sign * double(turn[e]));
        }
      }
    }
  }
  Sparse b(3 * m, 6 * k);
  b.setFromTriplets(rows.begin(), rows.end());
  std::vector<Triplet> inverse, mass;
  for (int j = 0; j < k; ++j) {
    const btRigidBody* body = btRigidBody::upcast(report.bodies[static_cast<size_t>(j)]);
    const btMatrix3x3& inertia_inverse = body->getInvInertiaTensorWorld();
    const btMatrix3x3 inertia = inertia_inverse.inverse();
    for (int e = 0; e < 3; ++e) {
      inverse.emplace_back(6 * j + e, 6 * j + e, double(body->getInvMass()));
      mass.emplace_back(6 * j + e, 6 * j + e, 1.0 / double(body->getInvMass()));
      for (int f = 0; f < 3; ++f) {
        inverse.emplace_back(6 * j + 3 + e, 6 * j + 3 + f, double(inertia_inverse[e][f]));
        mass.emplace_back(6 * j + 3 + e, 6 * j + 3 + f, double(inertia[e][f]));
      }
    }
  }
  Sparse inverse_mass(6 * k, 6 * k);
  inverse_mass.setFromTriplets(inverse.begin(), inverse.end());
  Sparse w = b * inverse_mass * b.transpose();
  const double epsilon = kRegularisation * w.diagonal().mean();
  for (int r = 0; r < w.rows(); ++r) w.coeffRef(r, r) += epsilon;
  // [M Bᵀ; B −ε I]
  std::vector<Triplet> saddle_entries = mass;
  for (int o = 0; o < b.outerSize(); ++o)
    for (Sparse::InnerIterator it(b, o); it; ++it) {
      saddle_entries.emplace_back(6 * k + it.row(), it.col(), it.value());
      saddle_entries.emplace_back(it.col(), 6 * k + it.row(), it.value());
    }
  for (int r = 0; r < 3 * m; ++r) saddle_entries.emplace_back(6 * k + r, 6 * k + r, -epsilon);
  Sparse saddle(6 * k + 3 * m, 6 * k + 3 * m);
  saddle.setFromTriplets(saddle_entries.begin(), saddle_entries.end());

  Clock::time_point start = Clock::now();
  Eigen::SimplicialLDLT<Sparse> by_delassus(w);
  const double delassus = seconds_since(start);
  start = Clock::now();
  Eigen::SimplicialLDLT<Sparse> by_saddle(saddle);
  const double saddle_seconds = seconds_since(start);
  if (by_delassus.info() != Eigen::Success || by_saddle.info() != Eigen::Success) {
    std::fprintf(stderr, "cluster of %d contacts: a factorisation failed\n", m);
    ++floor.failed;
  }
  ++floor.clusters;
  floor.delassus += delassus;
  floor.saddle += saddle_seconds;
  if (m > floor.largest) {
    floor.largest = m;
    floor.largest_delassus = delassus;
    floor.largest_saddle = saddle_seconds;
  }
}

// A brick-bond wall of about n boxes, √n columns (benchmark_scaling's pile).
void build_wall(BulletWorld& world, int n) {
  simpact::scenes::BoxPileOptions pile;
  pile.columns = std::max(1, static_cast<int>(std::lround(std::sqrt(double(n)))));
  pile.layers = std::max(1, n / pile.columns);
  simpact::scenes::box_pile(world, pile);
}

}  // namespace

int main(int argc, char** argv) {
  const auto options = simpact::demos::parse_benchmark_options(argc, argv, "");
  if (!options) return 64;
  const std::vector<int> sizes = options->quick ? std::vector<int>{30} : std::vector<int>{30, 100, 289};
  const int steps = options->quick ? 60 : 240;
  std::printf("Landing box wall, %d steps at %.0f Hz: one sparse factorisation per impact cluster\n"
              "(W = B M^-1 B^T, and the saddle-point [M B^T; B -eps I]) against stock SI's mean step\n\n",
              steps, kRate);
  std::printf("%6s %9s %9s %12s %14s %14s %16s %16s %12s\n", "boxes", "clusters", "largest", "stock ms",
              "W floor ms", "saddle ms", "largest W ms", "largest sad. ms", "budget/sad.");
  std::ofstream csv;
  if (!options->csv.empty()) {
    csv.open(options->csv);
    csv << "boxes,clusters,largest_contacts,stock_mean_step_ms,delassus_floor_ms_per_step,"
           "saddle_floor_ms_per_step,largest_delassus_ms,largest_saddle_ms,factorisations_in_budget\n";
  }
  bool all_factorised = true;
  for (const int n : sizes) {
    double stock_seconds = 0.0;
    {
      simpact::scenes::WorldOptions stock;
      stock.solver = SolverKind::kStockSi;
      BulletWorld world(stock);
      build_wall(world, n);
      for (int s = 0; s < steps; ++s) {
        const Clock::time_point start = Clock::now();
        world.step(1.0 / kRate);
        stock_seconds += seconds_since(start);
      }
    }
    Floor floor;
    simpact::scenes::WorldOptions capped;
    capped.solver = SolverKind::kSimpact;
    capped.simpact.law = simpact::bullet::ImpactLaw::kAuto;  // default cap: the large clusters are reported
    capped.simpact.on_impact = [&](const simpact::bullet::ImpactReport& report) { measure(report, floor); };
    BulletWorld world(capped);
    build_wall(world, n);
    for (int s = 0; s < steps; ++s) world.step(1.0 / kRate);
    all_factorised = all_factorised && floor.failed == 0 && floor.clusters > 0;
    const double stock_ms = 1e3 * stock_seconds / steps;
    const double delassus_ms = 1e3 * floor.delassus / steps, saddle_ms = 1e3 * floor.saddle / steps;
    // Factorisations per cluster the target leaves room for: 10 × stock's
    // step, less stock's own step (the base solve still runs), over the
    // saddle-point floor of one per cluster.
    const double budget = saddle_ms > 0.0 ? (kTargetRatio - 1.0) * stock_ms / saddle_ms : 0.0;
    std::printf("%6d %9d %9d %12.3f %14.3f %14.3f %16.2f %16.2f %12.1f\n", n, floor.clusters, floor.largest,
                stock_ms, delassus_ms, saddle_ms, 1e3 * floor.largest_delassus, 1e3 * floor.largest_saddle, budget);
    if (csv)
      csv << n << ',' << floor.clusters << ',' << floor.largest << ',' << stock_ms << ',' << delassus_ms << ','
          << saddle_ms << ',' << 1e3 * floor.largest_delassus << ',' << 1e3 * floor.largest_saddle << ','
          << budget << '\n';
  }
  std::printf("\nbudget/sad.: factorisations of the saddle-point matrix per cluster that the target\n"
              "(%.0fx stock's mean step, of which 1x is the base solve) leaves room for, if every\n"
              "cluster had one; a Routh sample takes 3-9 increments, each at least one active set.\n",
              kTargetRatio);
  return all_factorised ? 0 : 1;  // no cluster, or a failed factorisation: the floor means nothing
}
