// Multibody demos (issue #5): MultiBodyImpactSolver on Featherstone
// multibodies (btMultiBodyDynamicsWorld).
//
// 1. Compass gait (Halm & Posa, §5.4.2, Fig. 10; Mathew Halm and Michael Posa,
//    "Set-Valued Rigid-Body Dynamics for Simultaneous, Inelastic, Frictional
//    Impacts", arXiv:2103.15714; see README.md, "Papers"): the wide step of
//    compass_gait() built as a FREE-BASE btMultiBody (trailing leg = floating
//    base, leading leg = a revolute link at the pelvis, point masses at the
//    leg midpoints with a small isotropic inertia ε), law routh, zero
//    gravity, one impact step per seed. Each Bullet sample is set next to
//      * the core sample with the SAME seed (RouthSampler on compass_gait(),
//        contacts in Bullet's order, seed = the report's sample_seed): the
//        Routh caps are drawn per contact, so both draw the same caps;
//      * the core Routh set (RouthSampler::approximate, many seeds), its
//        component ranges and the Anitescu–Potra outcomes.
//    Compared quantities are coordinate-free: each foot's post-impact
//    velocity along the ground normal (+y) and tangent (+x), from Bullet's own
//    contact Jacobian at the model's foot point. Bullet's friction cone is
//    3-D (d = 4: ±t1, ±t2 with t1 = −x, t2 = z for the ground normal +y)
//    where the planar model has ±t; for this planar motion the z rows
//    decouple (masses in the plane z = 0) and ±t1 spans the same in-plane
//    cone, so the sets agree up to ε, the external-force increment and the
//    choice among non-unique LCP solutions (the compass gait violates the paper's
//    Assumption 6). The output lists every difference and writes
//    compass_gait_multibody.svg.
// 2. Newton's cradle on pendulum links (fixed-base revolute multibodies):
//    stock btMultiBodyConstraintSolver next to simpact, and the rigid-body
//    cradle on strings (BulletWorld, stock SI and simpact) as reference.
//
// Options: --quick (fewer samples), --samples K (Bullet seeds), --out DIR.
// Exit status 0 when every stated claim holds (the smoke test relies on it).
#include <simpact/bullet/impact_solver.h>
#include <simpact/bullet/multibody_impact_solver.h>
#include <simpact/frictional_reference.h>
#include <simpact/routh.h>
#include <simpact_scenes/bullet_scenes.h>
#include <simpact_worlds/bullet_world.h>
#include <simpact_scenes/frictional_scenes.h>
#include <simpact_worlds/multibody_world.h>

#include <BulletDynamics/Dynamics/btRigidBody.h>
#include <BulletDynamics/Featherstone/btMultiBody.h>
#include <BulletDynamics/Featherstone/btMultiBodyLinkCollider.h>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

using simpact::bullet::ImpactLaw;
using simpact::bullet::MultiBodyImpactReport;
using simpact::scenes::CompassGait;
using simpact::scenes::CompassGaitOptions;
using simpact::scenes::MultiBodyWorld;
using simpact::scenes::MultiBodyWorldOptions;

// ── Tolerances (each justified where it is used) ────────────────────────────

// Time step of the compass gait's impact step [s]. The solver resolves the
// impact on the mid-step velocity v* = v⁻ + ½ h M⁻¹(−C q̇) (gravity is off):
// the centripetal term of legs turning at 0.25 rad/s is |C q̇| ≈ m ω² l/2 ≈
// 0.03 N, so v* differs from compass_gait()'s v⁻ by ~½ · 1e-4 · 0.1 ≈ 5e-6 m/s.
constexpr double kImpactStep = 1e-4;
// Same-seed agreement of a Bullet sample and the core sample [m/s], when
// Lemke picks the same LCP solution in both: ε = 1e-6 kg m² of inertia per
// leg changes the θ inertia m(l/2)² = 0.25 by 4e-6 relative (≈ 2e-6 m/s on
// a 0.49 m/s impact), the mid-step increment above ≤ 5e-6 m/s; 1e-4 is an
// order of magnitude above both together. A sample outside it is counted as
// "another LCP solution" and must still lie in the core set (next).
constexpr double kSameSeedTolerance = 1e-4;
// Every Bullet outcome must lie within this distance [m/s] (4-vector of the
// feet's normal and tangential velocities) of a core Routh sample. Sampling
// alone leaves gaps in the core set: the largest nearest-neighbour distance
// among core samples (printed as "core spacing") is ≈ 5e-3 m/s for 2^14
// samples, and the farthest of 4000 Bullet outcomes measured 8e-3 m/s from
// its nearest core sample (its same-seed core twin is within 5e-6, so this is
// the core set's sparsity, not a Bullet difference). 0.02 m/s is 4 % of the
// 0.49 m/s approach speed, over twice those gaps, and an order of magnitude
// below the set's extent (0.1–0.2 m/s per component).
constexpr double kSetTolerance = 0.02;
// Fraction of seeds that must match their same-seed core sample. Assumption
// 6 fails for the compass gait, so Lemke on Bullet's 3-D LCP (size 14) may
// pick another solution than on the planar one (size 10). Measured: 4000 of
// 4000 seeds match (double); the claim only needs most of them.
constexpr double kMinSameSeedFraction = 0.8;

// The ε study compares samples on the same LCP branch only: with a large ε
// a sample may switch branch, and branches lie O(0.1 m/s) apart (the set's
// extent), far above any ε effect measured on one branch (≤ 3e-2 at ε = 1e-2).
constexpr double kBranchGap = 0.1;

struct Options {
  bool quick = false;
  int samples = 4000;  // Bullet seeds
  std::string out = ".";
};

// [u_n lead, u_n trail, u_t lead, u_t trail]: core layout (normals, then
// tangents; contact A = lead, B = trail).
using ContactVelocities = Eigen::Vector4d;

struct BulletSample {
  std::uint64_t seed = 0;
  std::uint64_t sample_seed = 0;
  bool ok = false;
  std::string problem;
  ContactVelocities before = ContactVelocities::Zero();
  ContactVelocities after = ContactVelocities::Zero();
  ContactVelocities core_same_seed = ContactVelocities::Zero();
  double out_of_plane = 0.0;  // max |foot velocity along z| after
  double energy_before = 0.0, energy_after = 0.0;
};

simpact::FrictionalProblem permuted(const simpact::FrictionalProblem& p, bool swap) {
  const Eigen::MatrixXd minv(p.inverse_mass), jn(p.normals), jt(p.tangents);
  Eigen::MatrixXd n2 = jn, t2 = jt;
  Eigen::VectorXd mu = p.friction;
  if (swap) {
    n2.row(0) = jn.row(1);
    n2.row(1) = jn.row(0);
    t2.row(0) = jt.row(1);
    t2.row(1) = jt.row(0);
    std::swap(mu[0], mu[1]);
  }
  return simpact::FrictionalProblem::from_dense(minv, n2, t2, p.velocity, mu);
}

ContactVelocities core_velocities(const simpact::FrictionalOutcome& o, bool swap) {
  ContactVelocities u;
  u << o.normal_velocities, o.tangential_velocities;
  if (swap) {
    std::swap(u[0], u[1]);
    std::swap(u[2], u[3]);
  }
  return u;
}

// One Bullet impact step of the compass gait with `seed`.
BulletSample bullet_sample(std::uint64_t seed, const simpact::scenes::FrictionalExample& example,
                           double inertia) {
  BulletSample s;
  s.seed = seed;
  MultiBodyWorldOptions o;
  o.gravity = Eigen::Vector3d::Zero();
  o.config.law = ImpactLaw::kRouth;
  o.config.seed = seed;
  o.config.routh.step = example.step;
  o.config.routh.max_steps = example.max_steps;
  std::vector<MultiBodyImpactReport> reports;
  CompassGait gait;
  bool swap = false;  // Bullet's contact 0 is the trailing foot
  // Velocities of the feet for a velocity vector (Bullet's Jacobian at the
  // model's foot points, at the configuration of the impact step).
  const auto feet = [&](const Eigen::VectorXd& v, double* out_of_plane) {
    const Eigen::Vector3d lead = MultiBodyWorld::point_velocity(*gait.multibody, gait.lead_link, gait.lead_foot, v);
    const Eigen::Vector3d trail = MultiBodyWorld::point_velocity(*gait.multibody, -1, gait.trail_foot, v);
    if (out_of_plane != nullptr) *out_of_plane = std::max(std::abs(lead.z()), std::abs(trail.z()));
    return ContactVelocities(lead.y(), trail.y(), lead.x(), trail.x());
  };
  o.config.on_impact = [&](const MultiBodyImpactReport& r) {
    reports.push_back(r);
    if (r.contacts.size() != 2 || r.multibodies.size() != 1 || r.velocity_after.size() != 7) return;
    const auto on_gait = [](const simpact::bullet::ImpactReport::Contact& c) {
      return btMultiBodyLinkCollider::upcast(c.a) != nullptr ? c.point_on_a : c.point_on_b;
    };
    // The leading foot is the one at smaller x (the walker walks towards −x).
    swap = double(on_gait(r.contacts[0]).x()) > double(on_gait(r.contacts[1]).x());
    s.before = feet(r.velocity_before, nullptr);
    s.after = feet(r.velocity_after, &s.out_of_plane);
    s.energy_before = r.energy_before;
    s.energy_after = r.energy_after;
    s.sample_seed = r.sample_seed;
  };
  MultiBodyWorld world(o);
  CompassGaitOptions gait_options;
  gait_options.inertia = inertia;
  gait = simpact::scenes::add_compass_gait(world, gait_options);
  world.step(kImpactStep);
  if (reports.size() != 1) {
    s.problem = std::to_string(reports.size()) + " impact reports (expected 1)";
    return s;
  }
  const MultiBodyImpactReport& r = reports[0];
  if (r.law != simpact::bullet::AppliedLaw::kRouth || r.contacts.size() != 2 || r.velocity_after.size() != 7) {
    s.problem = std::string("law ") + simpact::bullet::to_string(r.law) + ", " + std::to_string(r.contacts.size()) + " contacts, " +
                std::to_string(r.velocity_after.size()) + " coordinates: " + r.message;
    return s;
  }
  simpact::RouthParameters parameters;
  parameters.step = example.step;
  parameters.max_steps = example.max_steps;
  parameters.seed = s.sample_seed;
  const simpact::FrictionalResult core =
      simpact::RouthSampler(permuted(example.problem, swap), parameters).sample(0);
  s.core_same_seed = core_velocities(core.outcomes.at(0), swap);
  s.ok = true;
  return s;
}

struct CompassResult {
  std::vector<BulletSample> bullet;
  Eigen::MatrixXd core;  // 4 × M
  std::vector<ContactVelocities> anitescu_potra;
  ContactVelocities before = ContactVelocities::Zero();
  bool pass = true;
};

double nearest(const Eigen::MatrixXd& set, const ContactVelocities& u) {
  return (set.colwise() - u).colwise().norm().minCoeff();
}

// ── SVG ─────────────────────────────────────────────────────────────────────

struct Panel {
  double left, top, size;
  double x0, x1, y0, y1;
  double px(double x) const { return left + (x - x0) / (x1 - x0) * size; }
  double py(double y) const { return top + size - (y - y0) / (y1 - y0) * size; }
};

// Points drawn (the SVG stays below ~1 MB; the ranges use every sample).
constexpr Eigen::Index kPlotCore = 4096;
constexpr size_t kPlotBullet = 600;

void write_svg(const std::string& path, const CompassResult& r) {
  const int axes[3][2] = {{2, 0}, {0, 1}, {3, 1}};  // (x, y) components
  const char* names[4] = {"u\u2099 lead (A)", "u\u2099 trail (B)", "u\u209c lead (A)", "u\u209c trail (B)"};
  const double size = 300, margin = 70, gap = 90;
  std::ostringstream svg;
  const double width = margin + 3 * size + 2 * gap + 30, height = size + 175;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << height
      << "' font-family='sans-serif' font-size='12'>\n<rect width='100%' height='100%' fill='white'/>\n";
  svg << "<text x='" << margin << "' y='24' font-size='15' font-weight='bold'>Compass gait wide step: "
         "Routh outcomes, Bullet free-base multibody vs core (compass_gait())</text>\n";
  for (int p = 0; p < 3; ++p) {
    const int cx = axes[p][0], cy = axes[p][1];
    double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
    const auto grow = [&](const ContactVelocities& u) {
      x0 = std::min(x0, u[cx]);
      x1 = std::max(x1, u[cx]);
      y0 = std::min(y0, u[cy]);
      y1 = std::max(y1, u[cy]);
    };
    for (Eigen::Index k = 0; k < r.core.cols(); ++k) grow(r.core.col(k));
    for (const BulletSample& b : r.bullet) grow(b.after);
    grow(r.before);
    const double px = 0.08 * std::max(x1 - x0, 1e-3), py = 0.08 * std::max(y1 - y0, 1e-3);
    Panel panel{margin + p * (size + gap), 50, size, x0 - px, x1 + px, y0 - py, y1 + py};
    svg << "<rect x='" << panel.left << "' y='" << panel.top << "' width='" << size << "' height='" << size
        << "' fill='none' stroke='black'/>\n";
    svg << "<line x1='" << panel.px(0) << "' y1='" << panel.top << "' x2='" << panel.px(0) << "' y2='"
        << panel.top + size << "' stroke='#bbb'/><line x1='" << panel.left << "' y1='" << panel.py(0)
        << "' x2='" << panel.left + size << "' y2='" << panel.py(0) << "' stroke='#bbb'/>\n";
    for (const double x : {panel.x0, 0.5 * (panel.x0 + panel.x1), panel.x1})
      svg << "<text x='" << panel.px(x) << "' y='" << panel.top + size + 15 << "' text-anchor='middle'>"
          << std::round(x * 1000) / 1000 << "</text>";
    for (const double y : {panel.y0, 0.5 * (panel.y0 + panel.y1), panel.y1})
      svg << "<text x='" << panel.left - 5 << "' y='" << panel.py(y) + 4 << "' text-anchor='end'>"
          << std::round(y * 1000) / 1000 << "</text>";
    svg << "\n<text x='" << panel.left + size / 2 << "' y='" << panel.top + size + 34
        << "' text-anchor='middle'>" << names[cx] << " [m/s]</text>\n";
    svg << "<text transform='translate(" << panel.left - 48 << "," << panel.top + size / 2
        << ") rotate(-90)' text-anchor='middle'>" << names[cy] << " [m/s]</text>\n<g fill='#999'>";
    for (Eigen::Index k = 0; k < std::min<Eigen::Index>(r.core.cols(), kPlotCore); ++k)
      svg << "<circle cx='" << panel.px(r.core(cx, k)) << "' cy='" << panel.py(r.core(cy, k)) << "' r='1.2'/>";
    svg << "</g>\n<g fill='none' stroke='#d62728' stroke-width='1.2'>";
    for (size_t k = 0; k < std::min(r.bullet.size(), kPlotBullet); ++k)
      if (const BulletSample& b = r.bullet[k]; b.ok)
        svg << "<circle cx='" << panel.px(b.after[cx]) << "' cy='" << panel.py(b.after[cy]) << "' r='3.5'/>";
    svg << "</g>\n";
    for (const ContactVelocities& a : r.anitescu_potra)
      svg << "<rect x='" << panel.px(a[cx]) - 5 << "' y='" << panel.py(a[cy]) - 5
          << "' width='10' height='10' fill='none' stroke='#1f5fbf' stroke-width='2'/>\n";
    svg << "<circle cx='" << panel.px(r.before[cx]) << "' cy='" << panel.py(r.before[cy])
        << "' r='5' fill='black'/>\n";
  }
  const double ly = 50 + size + 62;
  svg << "<circle cx='" << margin + 5 << "' cy='" << ly << "' r='2' fill='#999'/><text x='" << margin + 15
      << "' y='" << ly + 4 << "'>core Routh samples (RouthSampler on compass_gait())</text>\n";
  svg << "<circle cx='" << margin + 5 << "' cy='" << ly + 20
      << "' r='3.5' fill='none' stroke='#d62728'/><text x='" << margin + 15 << "' y='" << ly + 24
      << "'>Bullet free-base multibody, MultiBodyImpactSolver law routh (one sample per seed)</text>\n";
  svg << "<rect x='" << margin << "' y='" << ly + 35 << "' width='10' height='10' fill='none' stroke='#1f5fbf' "
         "stroke-width='2'/><text x='"
      << margin + 15 << "' y='" << ly + 44 << "'>Anitescu\u2013Potra (core)</text>\n";
  svg << "<circle cx='" << margin + 505 << "' cy='" << ly << "' r='5' fill='black'/><text x='" << margin + 515
      << "' y='" << ly + 4 << "'>pre-impact</text>\n</svg>\n";
  std::ofstream(path) << svg.str();
}

// ── 1. Compass gait ─────────────────────────────────────────────────────────

bool compass_gait_demo(const Options& options) {
  const simpact::scenes::FrictionalExample example = simpact::scenes::compass_gait();
  CompassResult r;
  r.before << example.problem.normals * example.problem.velocity, example.problem.tangents * example.problem.velocity;

  // Core set: Algorithm 2 with the example's h and N.
  simpact::RouthParameters parameters;
  parameters.step = example.step;
  parameters.max_steps = example.max_steps;
  parameters.seed = 12345;
  simpact::RouthSetParameters set;
  set.samples = options.quick ? 1 << 11 : 1 << 14;
  const simpact::RouthOutcomeSet core = simpact::RouthSampler(example.problem, parameters).approximate(set);
  r.core.resize(4, core.normal_velocities.cols());
  r.core << core.normal_velocities, core.tangential_velocities;
  const simpact::FrictionalResult ap = simpact::solve_anitescu_potra(example.problem);
  for (const simpact::FrictionalOutcome& o : ap.outcomes) r.anitescu_potra.push_back(core_velocities(o, false));

  std::printf("1. Compass gait wide step (Halm & Posa, §5.4.2): free-base btMultiBody,\n"
              "   law routh, h = %.2f, N = %d, mu = 5, inertia eps = 1e-6 kg m^2 per leg,\n"
              "   impact step %.0e s, no gravity\n",
              example.step, example.max_steps, kImpactStep);
  int ok = 0, same = 0;
  double worst_same = 0.0, worst_set = 0.0, worst_before = 0.0, worst_plane = 0.0, worst_energy_gain = -1e300;
  for (int seed = 0; seed < options.samples; ++seed) {
    BulletSample b = bullet_sample(static_cast<std::uint64_t>(seed), example, CompassGaitOptions{}.inertia);
    if (!b.ok) {
      std::printf("   seed %d: PROBLEM %s\n", seed, b.problem.c_str());
      r.pass = false;
      continue;
    }
    ++ok;
    const double d_same = (b.after - b.core_same_seed).cwiseAbs().maxCoeff();
    if (d_same <= kSameSeedTolerance) ++same;
    if (d_same <= kSameSeedTolerance) worst_same = std::max(worst_same, d_same);
    worst_set = std::max(worst_set, nearest(r.core, b.after));
    worst_before = std::max(worst_before, (b.before - r.before).cwiseAbs().maxCoeff());
    worst_plane = std::max(worst_plane, b.out_of_plane);
    worst_energy_gain = std::max(worst_energy_gain, b.energy_after - b.energy_before);
    r.bullet.push_back(b);
  }
  // Core set spacing: for each core sample, the distance to its nearest
  // other core sample (the resolution the set comparison can have).
  double spacing = 0.0;
  const Eigen::Index cols = r.core.cols();
  for (Eigen::Index k = 0; k < std::min<Eigen::Index>(cols, 512); ++k) {
    double best = std::numeric_limits<double>::infinity();
    for (Eigen::Index j = 0; j < cols; ++j)
      if (j != k) best = std::min(best, (r.core.col(j) - r.core.col(k)).norm());
    spacing = std::max(spacing, best);
  }
  // Core samples far from every Bullet sample: coverage of the set by Bullet.
  double uncovered = 0.0;
  for (Eigen::Index k = 0; k < cols; ++k) {
    double best = std::numeric_limits<double>::infinity();
    for (const BulletSample& b : r.bullet) best = std::min(best, (b.after - r.core.col(k)).norm());
    uncovered = std::max(uncovered, best);
  }

  const char* names[4] = {"u_n lead (A)", "u_n trail (B)", "u_t lead (A)", "u_t trail (B)"};
  std::printf("\n   %-14s %10s | %10s %10s | %10s %10s | %s\n", "component", "pre", "core min", "core max",
              "Bullet min", "Bullet max", "Anitescu-Potra solutions (core)");
  for (int c = 0; c < 4; ++c) {
    double lo = 1e300, hi = -1e300;
    for (const BulletSample& b : r.bullet) {
      lo = std::min(lo, b.after[c]);
      hi = std::max(hi, b.after[c]);
    }
    std::printf("   %-14s %10.5f | %10.5f %10.5f | %10.5f %10.5f |", names[c], r.before[c], r.core.row(c).minCoeff(),
                r.core.row(c).maxCoeff(), lo, hi);
    for (const ContactVelocities& a : r.anitescu_potra) std::printf(" %9.5f", a[c]);
    std::printf("\n");
  }
  std::printf("\n   Bullet seeds %d (%d resolved by Routh), core set %ld samples (seed 12345)\n", options.samples, ok,
              static_cast<long>(cols));
  std::printf("   pre-impact feet velocities, Bullet (mid-step v*) vs compass_gait(): max |diff| %.2e m/s\n",
              worst_before);
  std::printf("   same seed, Bullet vs core sample: %d of %d within %.0e m/s (largest such diff %.2e m/s)\n", same, ok,
              kSameSeedTolerance, worst_same);
  if (same < ok) std::printf("     the others took another LCP solution (Assumption 6 fails here)\n");
  std::printf("   every Bullet outcome to its nearest core sample: max %.2e m/s (tolerance %.0e; core spacing %.2e)\n",
              worst_set, kSetTolerance, spacing);
  std::printf("   every core sample to its nearest Bullet outcome: max %.2e m/s (coverage by %d seeds)\n", uncovered,
              ok);
  std::printf("   out-of-plane foot velocity after: max %.2e m/s; largest energy change %.3g J (must be <= 0)\n",
              worst_plane, worst_energy_gain);

  // The inertia ε: same seeds, three values.
  std::printf("\n   effect of the legs' inertia eps (same 16 seeds, vs the core sample of the same seed):\n");
  for (const double eps : {1e-2, 1e-4, 1e-6, 1e-8}) {
    double worst = 0.0;
    int matched = 0;
    for (int seed = 0; seed < 16; ++seed) {
      const BulletSample b = bullet_sample(static_cast<std::uint64_t>(seed), example, eps);
      if (!b.ok) continue;
      const double d = (b.after - b.core_same_seed).cwiseAbs().maxCoeff();
      if (d < kBranchGap) {
        worst = std::max(worst, d);
        ++matched;
      }
    }
    std::printf("     eps %.0e kg m^2: max |Bullet - core| %.2e m/s over %d same-branch seeds\n", eps, worst, matched);
  }

  const std::string svg = options.out + "/compass_gait_multibody.svg";
  write_svg(svg, r);
  std::printf("   plot: %s\n", svg.c_str());

  const double fraction = ok > 0 ? double(same) / ok : 0.0;
  bool pass = r.pass && ok == options.samples && worst_set <= kSetTolerance && fraction >= kMinSameSeedFraction &&
              worst_energy_gain <= 0.0;
  std::printf("   claims: %s\n\n", pass ? "hold" : "FAIL");
  return pass;
}

// ── 2. Newton's cradle ──────────────────────────────────────────────────────

// Overlap of touching multibody bobs [m]: sphere–sphere contacts exist only
// at distance ≤ 0; 1e-7 m changes nothing else (see multibody_test.cpp).
constexpr double kOverlap = 1e-7;
constexpr double kCradleStep = 1.0 / 240.0;
// Velocities right after the impact step of a touching cradle: simpact's
// elastic multibody outcome is exact to rounding (tests: 1e-12); gravity is
// perpendicular to the swing at the bottom, so one 240 Hz step adds only
// O(h² g / L) ≈ 2e-4 m/s along x to a moving bob. 1e-3 m/s covers both.
constexpr double kCradleTolerance = 1e-3;

std::vector<double> multibody_cradle(int balls, double restitution, bool simpact, double* energy_ratio) {
  MultiBodyWorldOptions o;
  o.simpact = simpact;
  MultiBodyWorld world(o);
  const double r = 0.05, length = 1.0;
  std::vector<btMultiBody*> bobs;
  for (int i = 0; i < balls; ++i) {
    const double x = i * (2 * r - kOverlap);
    // Bullet's multibody world combines restitution by product: √e per bob
    // gives e per contact (the rigid newtons_cradle() gives each ball e and
    // combines by minimum: e as well). Frictionless, as newtons_cradle()'s
    // balls: the bobs turn with their links, so touching bobs slip on each
    // other and impact friction (propagative_friction, 0 < e < 1) would
    // act on the one cradle and not the other.
    bobs.push_back(world.add_pendulum({x, length, 0}, {x, 0, 0}, r, 1.0, std::sqrt(restitution),
                                      i == 0 ? 1.0 / length : 0.0, 0.0));
  }
  double before = 0.0, after = 0.0;
  for (btMultiBody* b : bobs) before += MultiBodyWorld::kinetic_energy(*b);
  world.step(kCradleStep);
  std::vector<double> v;
  for (btMultiBody* b : bobs) {
    v.push_back(MultiBodyWorld::link_velocity(*b, 0).x());
    after += MultiBodyWorld::kinetic_energy(*b);
  }
  *energy_ratio = after / before;
  return v;
}

std::vector<double> rigid_cradle(int balls, double restitution, bool simpact, double* energy_ratio) {
  simpact::scenes::WorldOptions o;
  o.solver = simpact ? simpact::scenes::SolverKind::kSimpact : simpact::scenes::SolverKind::kStockSi;
  simpact::scenes::BulletWorld world(o);
  simpact::scenes::CradleOptions c;
  c.balls = balls;
  c.restitution = restitution;
  const simpact::scenes::Scene scene = newtons_cradle(world, c);
  double before = 0.0, after = 0.0;
  for (const btRigidBody* b : scene.bodies) before += 0.5 * simpact::scenes::velocity(*b).squaredNorm() / double(b->getInvMass());
  world.step(kCradleStep);
  std::vector<double> v;
  for (const btRigidBody* b : scene.bodies) {
    v.push_back(simpact::scenes::velocity(*b).x());
    after += 0.5 * simpact::scenes::velocity(*b).squaredNorm() / double(b->getInvMass());
  }
  *energy_ratio = after / before;
  return v;
}

std::string format(const std::vector<double>& v) {
  std::string s = "(";
  char buf[32];
  for (size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.4f", i ? ", " : "", v[i] + 0.0);
    s += buf;
  }
  return s + ")";
}

bool cradle_demo() {
  std::printf("2. Newton's cradle, 1 m/s strike, touching, 240 Hz, velocities (x) after the impact step,\n"
              "   energy after/before (kinetic): pendulum links (btMultiBody) and rigid balls on strings\n\n");
  std::printf("   %-5s %-4s %-28s %-44s %s\n", "balls", "e", "solver", "velocities [m/s]", "energy ratio");
  bool pass = true;
  for (const int balls : {3, 5}) {
    for (const double e : {1.0, 0.7}) {
      double ratio = 0.0;
      struct Row {
        const char* name;
        std::vector<double> v;
        double ratio;
      };
      std::vector<Row> rows;
      rows.push_back({"multibody, stock", multibody_cradle(balls, e, false, &ratio), ratio});
      rows.push_back({"multibody, simpact", multibody_cradle(balls, e, true, &ratio), ratio});
      rows.push_back({"rigid (strings), stock SI", rigid_cradle(balls, e, false, &ratio), ratio});
      rows.push_back({"rigid (strings), simpact", rigid_cradle(balls, e, true, &ratio), ratio});
      for (const Row& row : rows)
        std::printf("   %-5d %-4.1f %-28s %-44s %.6f\n", balls, e, row.name, format(row.v).c_str(), row.ratio);
      // Claims: simpact's multibody cradle is the rigid simpact cradle; for
      // e = 1 it is (0, …, 0, 1).
      for (size_t i = 0; i < rows[1].v.size(); ++i) {
        pass = pass && std::abs(rows[1].v[i] - rows[3].v[i]) <= kCradleTolerance;
        if (e == 1.0) pass = pass && std::abs(rows[1].v[i] - (i + 1 == rows[1].v.size() ? 1.0 : 0.0)) <= kCradleTolerance;
      }
    }
  }
  std::printf("   claims (simpact multibody = simpact rigid within %.0e m/s; elastic = (0, ..., 0, 1)): %s\n\n",
              kCradleTolerance, pass ? "hold" : "FAIL");
  return pass;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      options.quick = true;
      options.samples = 48;
    } else if (a == "--samples" && i + 1 < argc) {
      options.samples = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--out" && i + 1 < argc) {
      options.out = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--samples K] [--out DIR]\n", argv[0]);
      return 2;
    }
  }
  const bool compass = compass_gait_demo(options);
  const bool cradle = cradle_demo();
  return compass && cradle ? 0 : 1;
}
