// The four worked examples of Halm & Posa (§5.4, Appendix A; Mathew Halm and
// Michael Posa, "Set-Valued Rigid-Body Dynamics for Simultaneous, Inelastic,
// Frictional Impacts", arXiv:2103.15714; see README.md, "Papers"): rocking
// block, box sliding into a wall, compass gait, three-disk stack. For each, the
// simultaneous Anitescu–Potra outcome(s), the two sequential outcomes and a
// Routh set (Algorithm 2) are computed and printed as a table, and one SVG per
// example is written in the style of the paper's Figs. 9–11 and 14: post-impact
// contact velocities of the Routh samples (grey dots) and the intermediate
// velocities along some samples' impact processes (light grey), with the
// Anitescu–Potra outcomes in blue and the two sequential resolutions in red and
// yellow, in the planes of two normal velocities and of a contact's tangential
// against its normal velocity.
//
// Usage: routh_examples [--quick] [--samples K] [--seed S] [--threads T]
//                       [--out DIR]
// Default: 2^14 samples per example (a few seconds on two cores); the paper
// uses 2^14 (block), 2^18 (box) and 2^20 (compass gait, disks) — request
// them with --samples. --quick: 256 samples (ctest smoke run).
// Exit status 1 when a law fails (LCP failure, a reference law not ending)
// or a Routh sample gains energy or is still colliding.
#include <simpact/frictional_reference.h>
#include <simpact/routh.h>
#include <simpact_scenes/frictional_scenes.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using simpact::FrictionalOutcome;
using simpact::FrictionalResult;
using simpact::RouthOutcomeSet;
using simpact::Status;
using simpact::scenes::FrictionalExample;

constexpr int kDefaultSamples = 1 << 14;
constexpr int kQuickSamples = 256;
/// Samples whose whole impact process is drawn (light grey): enough to show
/// the region the processes sweep, few enough to keep the SVG small.
constexpr int kTrajectories = 400;
constexpr int kQuickTrajectories = 32;
/// A Routh sample "gains energy" above this fraction of E⁻: rounding of a
/// handful of LCPs on O(1) numbers is ~1e-15; Theorem 7 allows no gain.
constexpr double kEnergyTolerance = 1e-10;

struct Config {
  bool quick = false;
  int samples = 0;  ///< 0: default for the mode
  std::uint64_t seed = 1;
  int threads = 0;
  std::string out = ".";
};

// ── Contact-space helpers ───────────────────────────────────────────────────

Eigen::MatrixXd Normals(const FrictionalExample& e) { return Eigen::MatrixXd(e.problem.normals); }
Eigen::MatrixXd Tangents(const FrictionalExample& e) { return Eigen::MatrixXd(e.problem.tangents); }

/// [u_n; u_t] of a velocity.
Eigen::VectorXd ContactVelocity(const FrictionalExample& e, const Eigen::VectorXd& v) {
  const Eigen::Index m = e.problem.contacts();
  Eigen::VectorXd u(2 * m);
  u << Normals(e) * v, Tangents(e) * v;
  return u;
}

double ApproachSpeed(const FrictionalExample& e) {
  return (Normals(e) * e.problem.velocity).cwiseAbs().maxCoeff();
}

// ── The computation ─────────────────────────────────────────────────────────

struct Reference {
  std::string name;                         ///< "AP #1", "seq A,B"
  Eigen::VectorXd velocity;                 ///< v⁺
  std::vector<Eigen::VectorXd> trajectory;  ///< v⁻ … v⁺ (drawn as a path)
  double energy_change = 0.0;
  int lcps = 0;
  bool sequential = false;
  int order = 0;  ///< which sequential order (colour)
};

struct Run {
  const FrictionalExample* example = nullptr;
  std::vector<Reference> references;
  RouthOutcomeSet set;
  std::vector<std::vector<Eigen::VectorXd>> trajectories;  ///< a few samples' processes
  double seconds = 0.0;                                    ///< Routh set wall time
  int threads = 0;
  bool ok = true;
  std::vector<std::string> problems;
};

void fail(Run& run, const std::string& what) {
  run.ok = false;
  run.problems.push_back(what);
}

Run compute(const FrictionalExample& e, const Config& config) {
  Run run;
  run.example = &e;

  const FrictionalResult ap = simpact::solve_anitescu_potra(e.problem);
  if (ap.status != Status::kSuccess)
    fail(run, std::string("Anitescu-Potra: ") + simpact::to_string(ap.status) + " " + ap.message);
  for (std::size_t k = 0; k < ap.outcomes.size(); ++k) {
    Reference r;
    r.name = "AP #" + std::to_string(k + 1);
    r.velocity = ap.outcomes[k].velocity;
    r.trajectory = {e.problem.velocity, r.velocity};  // one simultaneous jump
    r.energy_change = ap.outcomes[k].energy_change;
    r.lcps = ap.outcomes[k].lcps;
    run.references.push_back(std::move(r));
  }
  for (std::size_t k = 0; k < e.sequential_orders.size(); ++k) {
    simpact::SequentialParameters parameters;
    parameters.order = e.sequential_orders[k].order;
    parameters.record_trajectory = true;
    const FrictionalResult seq = simpact::resolve_sequential(e.problem, parameters);
    if (seq.status != Status::kSuccess)
      fail(run, "sequential " + e.sequential_orders[k].name + ": " +
                    simpact::to_string(seq.status) + " " + seq.message);
    if (seq.outcomes.empty()) continue;
    Reference r;
    r.name = "seq " + e.sequential_orders[k].name;
    r.velocity = seq.outcomes[0].velocity;
    r.trajectory = seq.outcomes[0].trajectory;
    if (r.trajectory.empty()) r.trajectory = {e.problem.velocity, r.velocity};
    r.energy_change = seq.outcomes[0].energy_change;
    r.lcps = seq.outcomes[0].lcps;
    r.sequential = true;
    r.order = static_cast<int>(k);
    run.references.push_back(std::move(r));
  }

  simpact::RouthParameters parameters;
  parameters.step = e.step;
  parameters.max_steps = e.max_steps;
  parameters.seed = config.seed;
  simpact::RouthSetParameters set;
  set.samples = config.samples;
  set.threads = config.threads;
  const auto start = std::chrono::steady_clock::now();
  run.set = simpact::approximate_routh_set(e.problem, parameters, set);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.threads = run.set.threads_used;
  if (run.set.status != Status::kSuccess && run.set.status != Status::kStepLimitReached)
    fail(run,
         std::string("Routh set: ") + simpact::to_string(run.set.status) + " " + run.set.message);

  // The first few samples again, recording their processes: sample k of a
  // seed is the same sample whatever else is drawn (routh.h).
  parameters.record_trajectory = true;
  const simpact::RouthSampler sampler(e.problem, parameters);
  const int traced = std::min(config.samples, config.quick ? kQuickTrajectories : kTrajectories);
  for (int k = 0; k < traced; ++k) {
    const FrictionalResult r = sampler.sample(static_cast<std::uint64_t>(k));
    if (r.outcomes.empty()) continue;
    std::vector<Eigen::VectorXd> path = r.outcomes[0].trajectory;
    if (path.empty() || (path.back() - r.outcomes[0].velocity).norm() > 0.0)
      path.push_back(r.outcomes[0].velocity);  // the fallback's finishing step
    run.trajectories.push_back(std::move(path));
  }

  // The law's claims, checked on every sample: no energy gain, no sample
  // left colliding.
  const double energy = simpact::scenes::kinetic_energy(e, e.problem.velocity);
  int gaining = 0, colliding = 0;
  for (Eigen::Index k = 0; k < run.set.velocities.cols(); ++k) {
    if (run.set.energy_change[k] > kEnergyTolerance * energy) ++gaining;
    if (run.set.colliding[static_cast<std::size_t>(k)]) ++colliding;
  }
  if (gaining > 0) fail(run, std::to_string(gaining) + " Routh samples gain energy");
  if (colliding > 0) fail(run, std::to_string(colliding) + " Routh samples still collide");
  return run;
}

// ── Table ───────────────────────────────────────────────────────────────────

/// Printed with 5 decimals; rounding noise (≤ 1e-9 here) would print as
/// "-0.00000", which reads like a sign.
double printable(double x) { return std::abs(x) < 5e-6 ? 0.0 : x; }

void print_vector_row(const char* label, const Eigen::VectorXd& u, double energy_change, int lcps) {
  std::printf("  %-15s", label);
  for (Eigen::Index i = 0; i < u.size(); ++i) std::printf(" %9.5f", printable(u[i]));
  std::printf("  %9.5f  %4d\n", printable(energy_change), lcps);
}

/// Column header of contact i: its name for the two-contact examples,
/// its number (see the printed key) otherwise.
std::string column(const FrictionalExample& e, const char* kind, int i) {
  if (e.problem.contacts() <= 2)
    return std::string(kind) + " " + e.contact_names[static_cast<std::size_t>(i)];
  return std::string(kind) + std::to_string(i + 1);
}

void print_table(const Run& run) {
  const FrictionalExample& e = *run.example;
  const int m = e.problem.contacts();
  const RouthOutcomeSet& set = run.set;
  const int samples = static_cast<int>(set.velocities.cols());
  const double energy = simpact::scenes::kinetic_energy(e, e.problem.velocity);

  std::printf("\n== %s\n", e.title.c_str());
  std::printf("   h = %g N*s, N = %d, M = %d (paper: %d), mu = %g, E- = %.5f J, S = %.4f m/s\n",
              set.step, e.max_steps, samples, e.paper_samples, e.problem.friction[0], energy,
              ApproachSpeed(e));
  if (m > 2) {
    std::printf("   contacts:");
    for (int i = 0; i < m; ++i)
      std::printf(" %d %s%s", i + 1, e.contact_names[static_cast<std::size_t>(i)].c_str(),
                  i + 1 < m ? "," : "\n");
  }
  std::printf("  %-15s", "u [m/s]");
  for (int i = 0; i < m; ++i) std::printf(" %9s", column(e, "n", i).c_str());
  for (int i = 0; i < m; ++i) std::printf(" %9s", column(e, "t", i).c_str());
  std::printf("  %9s  %4s\n", "dE [J]", "LCPs");
  print_vector_row("pre-impact", ContactVelocity(e, e.problem.velocity), 0.0, 0);
  for (const Reference& r : run.references)
    print_vector_row(r.name.c_str(), ContactVelocity(e, r.velocity), r.energy_change, r.lcps);

  // Ranges of the Routh set's contact velocities.
  Eigen::MatrixXd u(2 * m, samples);
  u << set.normal_velocities, set.tangential_velocities;
  std::printf("  %-15s", "Routh min");
  for (Eigen::Index i = 0; i < 2 * m; ++i) std::printf(" %9.5f", printable(u.row(i).minCoeff()));
  std::printf("  %9.5f\n", printable(set.energy_change.minCoeff()));
  std::printf("  %-15s", "Routh max");
  for (Eigen::Index i = 0; i < 2 * m; ++i) std::printf(" %9.5f", printable(u.row(i).maxCoeff()));
  std::printf("  %9.5f\n", printable(set.energy_change.maxCoeff()));

  // CPU time per sample (wall time × threads), comparable with Halm & Posa,
  // Table 3 (MATLAB + PATH on one core of a 2.4 GHz i5).
  const double per_sample = run.seconds * run.threads / samples;
  const double per_lcp = per_sample / set.mean_lcps();
  std::printf(
      "  Routh: %d samples, %d terminated within N (%.2f %%), %.2f LCPs/sample (paper "
      "%.2f),\n         %.2g CPU s/sample (paper %.2g), %.2g CPU s/LCP (paper %.2g); "
      "%.3f s on %d threads\n",
      samples, set.terminated_count, 100.0 * set.terminated_count / samples, set.mean_lcps(),
      e.paper.lcps_per_sample, per_sample, e.paper.seconds_per_sample, per_lcp,
      e.paper.seconds_per_lcp, run.seconds, run.threads);
  // Coverage: distance from each reference outcome to its closest sample.
  std::printf("  closest sample / S:");
  for (const Reference& r : run.references) {
    const Eigen::VectorXd target = ContactVelocity(e, r.velocity);
    double best = std::numeric_limits<double>::infinity();
    for (int k = 0; k < samples; ++k) best = std::min(best, (u.col(k) - target).norm());
    std::printf("  %s %.4f", r.name.c_str(), best / ApproachSpeed(e));
  }
  std::printf("\n");
  for (const std::string& p : run.problems) std::printf("  PROBLEM: %s\n", p.c_str());
}

// ── SVG ─────────────────────────────────────────────────────────────────────

/// One axis quantity: a contact's normal (or tangential) velocity.
struct Axis {
  int contact = 0;
  bool tangential = false;
};

struct PanelSpec {
  Axis x, y;
};

/// Halm & Posa's plots: normal velocity of A against B, and each contact's
/// tangential against normal velocity (Figs. 9–11); for the disk stack the
/// left and right sides (Fig. 14(b)) and contacts top-left, left-ground,
/// left-right (Fig. 14(c); the right-hand ones are their mirror images).
std::vector<PanelSpec> panels_for(const FrictionalExample& e) {
  if (e.name == "rocking_block") return {{{0, false}, {1, false}}, {{0, true}, {0, false}}};
  if (e.name == "disk_stack")
    return {{{0, false}, {1, false}},
            {{3, false}, {4, false}},
            {{0, true}, {0, false}},
            {{3, true}, {3, false}},
            {{2, true}, {2, false}}};
  return {{{0, true}, {0, false}}, {{0, false}, {1, false}}, {{1, true}, {1, false}}};
}

double pick(const FrictionalExample& e, const Eigen::VectorXd& u, const Axis& a) {
  return u[a.contact + (a.tangential ? e.problem.contacts() : 0)];
}

std::string axis_label(const FrictionalExample& e, const Axis& a) {
  return std::string(a.tangential ? "tangential" : "normal") + " velocity u" +
         (a.tangential ? "\u209c" : "\u2099") + " of " +
         e.contact_names[static_cast<std::size_t>(a.contact)] + " [m/s]";
}

/// Tick spacing 1, 2 or 5 × 10^k giving about `target` ticks over `span`.
double tick_step(double span, int target) {
  const double raw = span / target;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double f : {1.0, 2.0, 5.0})
    if (f * decade >= raw) return f * decade;
  return 10.0 * decade;
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  /// Padded, never degenerate, always showing 0 (the contact boundary).
  void finish() {
    add(0.0);
    double span = hi - lo;
    if (span < 1e-12) span = 1.0;
    lo -= 0.06 * span;
    hi += 0.06 * span;
  }
};

const char* kApColour = "#1f5fbf";
const char* kSeqColours[2] = {"#d62728", "#e8b000"};

class Panel {
 public:
  Panel(double left, double top, double size, Range x, Range y)
      : left_(left), top_(top), size_(size), x_(x), y_(y) {}
  double px(double x) const { return left_ + (x - x_.lo) / (x_.hi - x_.lo) * size_; }
  double py(double y) const { return top_ + size_ - (y - y_.lo) / (y_.hi - y_.lo) * size_; }

  void frame(std::ostringstream& svg, const std::string& xlabel, const std::string& ylabel) const {
    svg << "<rect x='" << left_ << "' y='" << top_ << "' width='" << size_ << "' height='" << size_
        << "' fill='white' stroke='#444'/>\n";
    const double sx = tick_step(x_.hi - x_.lo, 5), sy = tick_step(y_.hi - y_.lo, 5);
    for (double t = std::ceil(x_.lo / sx) * sx; t <= x_.hi; t += sx) {
      const double gx = px(t);
      svg << "<line x1='" << gx << "' y1='" << top_ << "' x2='" << gx << "' y2='" << top_ + size_
          << "' stroke='#eee'/><text x='" << gx << "' y='" << top_ + size_ + 14
          << "' text-anchor='middle'>" << format_tick(t, sx) << "</text>\n";
    }
    for (double t = std::ceil(y_.lo / sy) * sy; t <= y_.hi; t += sy) {
      const double gy = py(t);
      svg << "<line x1='" << left_ << "' y1='" << gy << "' x2='" << left_ + size_ << "' y2='" << gy
          << "' stroke='#eee'/><text x='" << left_ - 5 << "' y='" << gy + 4
          << "' text-anchor='end'>" << format_tick(t, sy) << "</text>\n";
    }
    // u = 0: the contact boundary (separating above / right of it).
    svg << "<line x1='" << px(0) << "' y1='" << top_ << "' x2='" << px(0) << "' y2='"
        << top_ + size_ << "' stroke='#999' stroke-dasharray='4 3'/>\n";
    svg << "<line x1='" << left_ << "' y1='" << py(0) << "' x2='" << left_ + size_ << "' y2='"
        << py(0) << "' stroke='#999' stroke-dasharray='4 3'/>\n";
    svg << "<text x='" << left_ + size_ / 2 << "' y='" << top_ + size_ + 32
        << "' text-anchor='middle'>" << xlabel << "</text>\n";
    svg << "<text transform='translate(" << left_ - 44 << "," << top_ + size_ / 2
        << ") rotate(-90)' text-anchor='middle'>" << ylabel << "</text>\n";
  }

 private:
  static std::string format_tick(double t, double step) {
    if (std::abs(t) < 1e-9 * step) t = 0.0;
    const int decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9)));
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, t);
    return buf;
  }
  double left_, top_, size_;
  Range x_, y_;
};

std::string svg_for(const Run& run) {
  const FrictionalExample& e = *run.example;
  const std::vector<PanelSpec> specs = panels_for(e);
  const int columns = std::min(3, static_cast<int>(specs.size()));
  const int rows = (static_cast<int>(specs.size()) + columns - 1) / columns;
  constexpr double kSize = 300, kLeft = 70, kGap = 80, kTop = 50, kRowGap = 70, kLegend = 70;
  const double width = kLeft + columns * (kSize + kGap);
  const double height = kTop + rows * (kSize + kRowGap) + kLegend;

  const int m = e.problem.contacts();
  const RouthOutcomeSet& set = run.set;
  Eigen::MatrixXd samples(2 * m, set.velocities.cols());
  samples << set.normal_velocities, set.tangential_velocities;
  std::vector<std::vector<Eigen::VectorXd>> paths;  // contact velocities along processes
  for (const auto& t : run.trajectories) {
    std::vector<Eigen::VectorXd> p;
    for (const Eigen::VectorXd& v : t) p.push_back(ContactVelocity(e, v));
    paths.push_back(std::move(p));
  }
  const Eigen::VectorXd pre = ContactVelocity(e, e.problem.velocity);

  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << height
      << "' font-family='sans-serif' font-size='11'>\n<rect width='100%' height='100%' "
         "fill='white'/>\n";
  svg << "<text x='" << kLeft << "' y='24' font-size='15' font-weight='bold'>" << e.title
      << " \u2014 " << set.velocities.cols() << " Routh samples, h = " << set.step
      << ", N = " << e.max_steps << "</text>\n";

  for (std::size_t p = 0; p < specs.size(); ++p) {
    const PanelSpec& spec = specs[p];
    Range xr, yr;
    for (Eigen::Index k = 0; k < samples.cols(); ++k) {
      xr.add(pick(e, samples.col(k), spec.x));
      yr.add(pick(e, samples.col(k), spec.y));
    }
    for (const auto& path : paths)
      for (const Eigen::VectorXd& u : path) {
        xr.add(pick(e, u, spec.x));
        yr.add(pick(e, u, spec.y));
      }
    for (const Reference& r : run.references)
      for (const Eigen::VectorXd& v : r.trajectory) {
        const Eigen::VectorXd u = ContactVelocity(e, v);
        xr.add(pick(e, u, spec.x));
        yr.add(pick(e, u, spec.y));
      }
    xr.finish();
    yr.finish();
    const int col = static_cast<int>(p) % columns, row = static_cast<int>(p) / columns;
    const Panel panel(kLeft + col * (kSize + kGap), kTop + row * (kSize + kRowGap), kSize, xr, yr);
    panel.frame(svg, axis_label(e, spec.x), axis_label(e, spec.y));

    // Impact processes (light grey), then their end points (grey dots).
    svg << "<g fill='none' stroke='#d9d9d9' stroke-width='0.8'>\n";
    for (const auto& path : paths) {
      svg << "<polyline points='";
      for (const Eigen::VectorXd& u : path)
        svg << panel.px(pick(e, u, spec.x)) << ',' << panel.py(pick(e, u, spec.y)) << ' ';
      svg << "'/>\n";
    }
    svg << "</g>\n<g fill='#777'>\n";
    // One dot per half pixel: thousands of samples land on the same spot.
    std::set<std::pair<long, long>> drawn;
    for (Eigen::Index k = 0; k < samples.cols(); ++k) {
      const double x = panel.px(pick(e, samples.col(k), spec.x));
      const double y = panel.py(pick(e, samples.col(k), spec.y));
      if (!drawn.insert({std::lround(2 * x), std::lround(2 * y)}).second) continue;
      svg << "<circle cx='" << x << "' cy='" << y << "' r='1.3'/>";
    }
    svg << "\n</g>\n";

    // Reference laws: sequential paths with their single impacts, AP jumps.
    // The first order is drawn wider underneath, so that both stay visible
    // when the orders coincide (box–wall, compass gait: the contact that
    // does not approach is skipped).
    for (const Reference& r : run.references) {
      const char* colour = r.sequential ? kSeqColours[r.order % 2] : kApColour;
      const bool wide = r.sequential && r.order == 0;
      svg << "<polyline fill='none' stroke='" << colour << "' stroke-width='" << (wide ? 4.5 : 1.6)
          << "'" << (r.sequential ? "" : " stroke-dasharray='5 3'") << " points='";
      for (const Eigen::VectorXd& v : r.trajectory) {
        const Eigen::VectorXd u = ContactVelocity(e, v);
        svg << panel.px(pick(e, u, spec.x)) << ',' << panel.py(pick(e, u, spec.y)) << ' ';
      }
      svg << "'/>\n";
      const Eigen::VectorXd u = ContactVelocity(e, r.velocity);
      const double x = panel.px(pick(e, u, spec.x)), y = panel.py(pick(e, u, spec.y));
      const double half = wide ? 6.5 : 4.0;
      if (r.sequential)
        svg << "<rect x='" << x - half << "' y='" << y - half << "' width='" << 2 * half
            << "' height='" << 2 * half << "' fill='" << colour
            << "' stroke='black' stroke-width='0.6'/>\n";
      else
        svg << "<circle cx='" << x << "' cy='" << y << "' r='5' fill='" << colour
            << "' stroke='black' stroke-width='0.6'/>\n";
    }
    svg << "<circle cx='" << panel.px(pick(e, pre, spec.x)) << "' cy='"
        << panel.py(pick(e, pre, spec.y))
        << "' r='5' fill='none' stroke='black' stroke-width='1.5'/>\n";
  }

  // Legend, wrapped to the figure's width (≈ 6.2 px per character).
  enum class Symbol { kRing, kDot, kLine, kDisc, kSquare };
  double lx = kLeft;
  double ly = height - kLegend + 15;
  const auto item = [&](Symbol symbol, const std::string& colour, const std::string& text) {
    const double advance = 24 + 6.2 * static_cast<double>(text.size());
    if (lx > kLeft && lx + advance > width) {
      lx = kLeft;
      ly += 22;
    }
    switch (symbol) {
      case Symbol::kRing:
        svg << "<circle cx='" << lx + 5 << "' cy='" << ly << "' r='5' fill='none' stroke='"
            << colour << "' stroke-width='1.5'/>";
        break;
      case Symbol::kDot:
        svg << "<circle cx='" << lx + 5 << "' cy='" << ly << "' r='2' fill='" << colour << "'/>";
        break;
      case Symbol::kLine:
        svg << "<line x1='" << lx << "' y1='" << ly << "' x2='" << lx + 10 << "' y2='" << ly
            << "' stroke='" << colour << "' stroke-width='2'/>";
        break;
      case Symbol::kDisc:
        svg << "<circle cx='" << lx + 5 << "' cy='" << ly << "' r='5' fill='" << colour << "'/>";
        break;
      case Symbol::kSquare:
        svg << "<rect x='" << lx << "' y='" << ly - 5 << "' width='10' height='10' fill='" << colour
            << "'/>";
        break;
    }
    svg << "<text x='" << lx + 14 << "' y='" << ly + 4 << "'>" << text << "</text>\n";
    lx += advance;
  };
  item(Symbol::kRing, "black", "pre-impact");
  item(Symbol::kDot, "#777", "Routh samples (post-impact)");
  item(Symbol::kLine, "#bbb", "Routh impact processes");
  item(Symbol::kDisc, kApColour, "Anitescu-Potra (simultaneous)");
  for (const Reference& r : run.references)
    if (r.sequential)
      item(Symbol::kSquare, kSeqColours[r.order % 2], "sequential " + r.name.substr(4));
  svg << "</svg>\n";
  return svg.str();
}

// ── Command line ────────────────────────────────────────────────────────────

bool parse(int argc, char** argv, Config& config) {
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--quick")) {
      config.quick = true;
    } else if (!std::strcmp(argv[i], "--samples") && has_value) {
      config.samples = std::atoi(argv[++i]);
      if (config.samples < 1) return false;
    } else if (!std::strcmp(argv[i], "--seed") && has_value) {
      config.seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (!std::strcmp(argv[i], "--threads") && has_value) {
      config.threads = std::atoi(argv[++i]);
      if (config.threads < 0) return false;
    } else if (!std::strcmp(argv[i], "--out") && has_value) {
      config.out = argv[++i];
    } else {
      return false;
    }
  }
  if (config.samples == 0) config.samples = config.quick ? kQuickSamples : kDefaultSamples;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  if (!parse(argc, argv, config)) {
    std::fprintf(stderr, "usage: %s [--quick] [--samples K] [--seed S] [--threads T] [--out DIR]\n",
                 argv[0]);
    return 2;
  }
  std::printf(
      "Halm & Posa worked examples: Anitescu-Potra (AP), sequential (seq) and "
      "Routh sets.\nContact velocities u = [u_n; u_t] in m/s (u_n > 0 separating), "
      "dE = energy change [J];\nS = largest approach speed; seed %llu.\n",
      static_cast<unsigned long long>(config.seed));
  bool ok = true;
  for (const FrictionalExample& e : simpact::scenes::all_frictional_examples()) {
    const Run run = compute(e, config);
    print_table(run);
    const std::string path = config.out + "/" + e.name + ".svg";
    std::ofstream file(path);
    file << svg_for(run);
    if (!file) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      ok = false;
    } else {
      std::printf("  wrote %s\n", path.c_str());
    }
    ok = ok && run.ok;
  }
  return ok ? 0 : 1;
}
