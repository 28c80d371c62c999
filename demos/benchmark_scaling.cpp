// How simpact's cost grows with the size of an impact, next to Bullet's stock
// SI in the same run (issue "Scale"). Six families of shared scenes
// (simpact_scenes/bullet_scenes.h), each at sizes over several decades:
//   chain        touching elastic chain of N free balls struck at one end
//                (ball_chain), laid along the diagonal (1, 1, 1)/√3 so that
//                Bullet's sweep-and-prune stays linear (CradleOptions::axis);
//                closed form: every ball at rest, the far one leaves at the
//                striker's speed;
//   cradle       the same chain along +x hanging on strings (newtons_cradle
//                with point-to-point joints to the world, gravity on); closed
//                form to first order in the step: (0, …, 0, speed). All balls
//                share their y and z bounds, so building it is O(N²) in
//                Bullet's sweep-and-prune (not timed);
//   rack         hex-packed billiard rack of N = rows(rows+1)/2 balls broken
//                by a cue ball (billiard_break); no closed form (the error
//                column is the elastic energy error);
//   joint_chain  N balls held by ball joints, struck end-on (joint_chain);
//                closed form: a two-body impact with a rod of N balls;
//   pile         a brick-bond wall of N frictional boxes landing
//                (box_pile, μ = 0.5, R = 0); simpact resolves it with Routh's
//                law (law auto) and routh.max_contacts = kPileRouthCap, so a
//                cluster over the default cap is not handed back; its
//                reports say how many clusters still were;
//   pile_capped  the same wall with the default cap (RouthSettings::
//                max_contacts): what a default world does with it.
// For each: the median, mean and max step time over the run, the peak
// resident memory of the run (its own child process), the outcome's error
// after the first step (the impact step), the log–log slope of mean step
// time and of memory net of an empty world against N, and the ratios of
// simpact to stock. Writes a CSV and an SVG (time and memory against N).
//
// Every (scene, size, solver) runs in a child process: a crash or a run
// over its time budget is reported as such, and ru_maxrss is that run's
// peak alone. Timing is reported, never asserted.
//
// Usage: benchmark_scaling [--quick] [--csv FILE] [--svg FILE]
//                          [--scene NAME] [--max-size N] [--steps N]
//                          [--budget SECONDS]
//        benchmark_scaling --plot-from CSV [--svg FILE]
// The plot is always drawn from the CSV just written; --plot-from redraws
// it from a CSV alone (docs/images/benchmark_scaling.svg from
// docs/benchmark_scaling.csv, checked by the test
// benchmark_scaling_plot_is_current).
// --steps overrides the steps per run of the touching scenes (not the
// pile), --budget the time limit of one run.
// Exit status 0 unless a run crashed or ended non-finite; 64 for bad usage.
#include <simpact_cli/progress.h>
#include <simpact_scenes/bullet_scenes.h>

#include <BulletDynamics/Dynamics/btRigidBody.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using simpact::scenes::BulletWorld;
using simpact::scenes::Scene;
using simpact::scenes::SolverKind;

constexpr double kRate = 240.0;  // [Hz], as benchmark_vs_stock
// Steps per run: the first holds the impact (every scene but the pile
// starts touching); the rest show the cost of what follows (resting and
// separating contacts). The pile needs its lowest layer to land (0.1 m:
// 0.14 s) and the next ones to pile on.
constexpr int kSteps = 8;
constexpr int kPileSteps = 240;
constexpr int kQuickPileSteps = 60;
// Runs are repeated while their total stays under this [s], at most
// kMaxRuns times, so small sizes get stable medians.
constexpr double kRepeatBudget = 1.0;
constexpr int kMaxRuns = 5;
// A run is stopped (SIGALRM in the child) after this long [s].
constexpr unsigned kRunBudget = 300;
constexpr unsigned kQuickRunBudget = 60;
// The pile's runs stop sooner: 240 steps in 120 s is a mean step of 0.5 s,
// already > 1000x stock's; waiting longer shows nothing more.
constexpr unsigned kPileRunBudget = 120;
// Routh's cap for the pile: far above any cluster of the pile, so Routh's
// law runs on every frictional cluster (routh_oversized counts the rest).
constexpr int kPileRouthCap = 100000;
// Slopes are fitted on sizes at least this large, where fixed costs (an
// empty world's memory, a step's constant overhead) no longer dominate.
constexpr double kSlopeMinSize = 100.0;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Family {
  const char* name;
  std::vector<int> sizes;        ///< the scene's size parameter
  std::vector<int> quick_sizes;
  int steps;
  /// Line scenes use sweep-and-prune (simpact_worlds' Broadphase): Bullet's
  /// default DBVT degenerates on 10⁵ bodies along one line (its first pair
  /// search ran for over 14 minutes, stock and simpact alike); sweep-and-
  /// prune stays linear where the line runs along no coordinate axis.
  simpact::scenes::Broadphase broadphase;
  /// Builds the scene of size parameter `size`; returns N, its dynamic bodies.
  std::function<Scene(BulletWorld&, int)> build;
  /// Error of the state after the first step against the closed form [1,
  /// relative to the scene's speed], or the relative energy error where
  /// there is none; NaN when neither applies.
  std::function<double(const BulletWorld&, const Scene&, double energy_before)> error;
  /// RouthSettings::max_contacts of simpact's runs; 0: the default.
  int routh_cap = 0;
};

// Largest |v_i − expected_i · axis| / speed over the scene's bodies.
double max_velocity_error(const Scene& scene, const std::vector<double>& expected, double speed,
                          const Eigen::Vector3d& axis = Eigen::Vector3d::UnitX()) {
  double error = 0.0;
  for (size_t i = 0; i < scene.bodies.size(); ++i)
    error = std::max(error, (simpact::scenes::velocity(*scene.bodies[i]) - expected[i] * axis).norm());
  return error / speed;
}

// The exact outcome of a struck touching chain along `axis`: (0, …, 0, speed).
double chain_error_along(const Scene& scene, const Eigen::Vector3d& axis) {
  std::vector<double> expected(scene.bodies.size(), 0.0);
  expected.back() = 1.0;
  return max_velocity_error(scene, expected, 1.0, axis);
}

double chain_error(const BulletWorld&, const Scene& scene, double) {
  return chain_error_along(scene, simpact::scenes::kDiagonal);
}

double cradle_error(const BulletWorld&, const Scene& scene, double) {
  return chain_error_along(scene, Eigen::Vector3d::UnitX());
}

double energy_error(const BulletWorld& world, const Scene&, double before) {
  return std::abs(world.kinetic_energy() - before) / before;
}

// A brick-bond wall of about n boxes, √n columns.
Scene build_pile(BulletWorld& world, int n) {
  simpact::scenes::BoxPileOptions pile;
  pile.columns = std::max(1, static_cast<int>(std::lround(std::sqrt(double(n)))));
  pile.layers = std::max(1, n / pile.columns);
  return simpact::scenes::box_pile(world, pile);
}

const std::array<Family, 6> kFamilies = {{
    {"chain", {10, 100, 1000, 10000, 100000}, {10, 100}, kSteps, simpact::scenes::Broadphase::kAxisSweep,
     [](BulletWorld& world, int n) {
       return simpact::scenes::ball_chain(world, n, 1.0, 1.0, simpact::scenes::kDiagonal);
     },
     chain_error},
    {"cradle", {10, 100, 1000, 10000, 100000}, {10}, kSteps, simpact::scenes::Broadphase::kAxisSweep,
     [](BulletWorld& world, int n) {
       simpact::scenes::CradleOptions cradle;
       cradle.balls = n;
       cradle.strings = true;
       return simpact::scenes::newtons_cradle(world, cradle);
     },
     // The strings turn the balls by ω h in the step; ~1e-3 of the speed.
     cradle_error},
    {"rack", {5, 13, 44, 140}, {5}, kSteps, simpact::scenes::Broadphase::kDbvt,
     [](BulletWorld& world, int rows) {
       simpact::scenes::BilliardOptions rack;
       rack.rows = rows;
       return simpact::scenes::billiard_break(world, rack);
     },
     energy_error},
    {"joint_chain", {10, 30, 100, 300, 1000, 3000, 10000}, {10}, kSteps, simpact::scenes::Broadphase::kAxisSweep,
     [](BulletWorld& world, int n) { return simpact::scenes::joint_chain(world, n); },
     [](const BulletWorld&, const Scene& scene, double) {
       const double links = double(scene.bodies.size() - 1);
       std::vector<double> expected(scene.bodies.size(), 2.0 / (1.0 + links));
       expected[0] = (1.0 - links) / (1.0 + links);
       return max_velocity_error(scene, expected, 1.0);
     }},
    {"pile", {10, 30, 100, 300, 1000}, {10}, kPileSteps, simpact::scenes::Broadphase::kDbvt, build_pile,
     [](const BulletWorld&, const Scene&, double) { return kNaN; }, kPileRouthCap},
    {"pile_capped", {10, 30, 100, 300, 1000}, {10}, kPileSteps, simpact::scenes::Broadphase::kDbvt, build_pile,
     [](const BulletWorld&, const Scene&, double) { return kNaN; }, 0},
}};

struct Contender {
  const char* label;
  SolverKind solver;
};
const std::array<Contender, 2> kContenders = {{{"stock_si", SolverKind::kStockSi}, {"simpact", SolverKind::kSimpact}}};

// ── one run, in a child process ─────────────────────────────────────────────

constexpr int kMaxSteps = 256;
struct Message {
  std::int32_t finite = 1;
  std::int32_t bodies = 0;
  std::int32_t steps = 0;
  double error = kNaN;
  std::int64_t impacts = 0, oversized = 0, fallbacks = 0;
  std::int64_t largest_cluster = 0;  ///< ImpactStats::largest_cluster
  std::int64_t lcps = 0;             ///< Routh increment LCPs of every impact
  double step_us[kMaxSteps] = {};
};
static_assert(kPileSteps <= kMaxSteps, "the message holds every step");

bool finite_state(const Scene& scene) {
  for (const btRigidBody* body : scene.bodies)
    if (!simpact::scenes::position(*body).allFinite() || !simpact::scenes::velocity(*body).allFinite()) return false;
  return true;
}

[[noreturn]] void run_child(const Family& family, int size, const Contender* contender, int steps, int fd,
                            unsigned budget) {
  alarm(budget);
  Message message;
  int status = 0;
  try {
    simpact::scenes::WorldOptions options;
    options.solver = contender != nullptr ? contender->solver : SolverKind::kStockSi;
    options.broadphase = family.broadphase;
    options.simpact.law = simpact::bullet::ImpactLaw::kAuto;
    if (family.routh_cap > 0) options.simpact.routh.max_contacts = family.routh_cap;
    // No on_impact callback: a default world builds no per-contact reports
    // (the figures below come from ImpactStats).
    if (contender != nullptr) {
      // Warm-up: the first step of a process pays once what a running
      // application has long paid (lazy symbol binding, first use of each
      // code path, the allocator's first pages): ~0.1 ms, as much as a
      // 10-ball chain's whole step. One step of the family's smallest
      // scene, in a world of its own, pays it outside the measurement.
      BulletWorld warm_up(options);
      family.build(warm_up, family.sizes.front());
      warm_up.step(1.0 / kRate);
    }
    // Never destroyed: the child reports and exits (_exit below), and a
    // world's destructor is not what is measured; Bullet's sweep-and-prune
    // removes each body in O(N) (a 10⁵-ball chain: minutes).
    BulletWorld& world = *new BulletWorld(options);
    if (contender != nullptr) {  // nullptr: the empty world, memory baseline
      const Scene scene = family.build(world, size);
      message.bodies = static_cast<std::int32_t>(scene.bodies.size());
      const double before = world.kinetic_energy();
      for (int i = 0; i < steps; ++i) {
        const Clock::time_point start = Clock::now();
        world.step(1.0 / kRate);
        message.step_us[i] = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
        if (i == 0) message.error = family.error(world, scene, before);
      }
      message.steps = steps;
      message.finite = finite_state(scene);
      message.impacts = world.impacts();
      if (const simpact::bullet::ImpactSolver* solver = world.impact_solver()) {
        message.oversized = solver->stats().routh_oversized;
        message.fallbacks = solver->stats().fallbacks_to_base;
        message.largest_cluster = solver->stats().largest_cluster;
        message.lcps = solver->stats().routh_lcps;
      }
    } else {
      world.step(1.0 / kRate);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s %d: %s\n", family.name, size, e.what());
    status = 2;
  }
  const char* data = reinterpret_cast<const char*>(&message);
  size_t left = sizeof message;
  while (left > 0) {
    const ssize_t n = write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(3);
    data += n;
    left -= static_cast<size_t>(n);
  }
  _exit(status);
}

struct Run {
  bool ok = false;
  bool timed_out = false;
  Message message;
  double peak_mb = kNaN;  ///< ru_maxrss of the child
  double seconds = 0.0;
};

Run run(const Family& family, int size, const Contender* contender, int steps, unsigned budget) {
  Run result;
  int fds[2];
  if (pipe(fds) != 0) return result;
  std::fflush(stdout);
  std::fflush(stderr);
  const Clock::time_point start = Clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return result;
  }
  if (pid == 0) {
    close(fds[0]);
    run_child(family, size, contender, steps, fds[1], budget);
  }
  close(fds[1]);
  // The message (a few kB) fits the pipe, so the child never blocks on it.
  std::vector<char> bytes;
  char buffer[4096];
  while (true) {
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes.insert(bytes.end(), buffer, buffer + n);
  }
  close(fds[0]);
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.peak_mb = double(usage.ru_maxrss) / 1024.0;  // kB on Linux
  result.timed_out = WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM;
  if (bytes.size() == sizeof(Message) && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    std::memcpy(&result.message, bytes.data(), sizeof(Message));
    result.ok = true;
  }
  return result;
}

// ── aggregation ─────────────────────────────────────────────────────────────

struct Point {
  const Family* family = nullptr;
  int size = 0;
  const Contender* contender = nullptr;
  int bodies = 0;
  int runs = 0;
  bool ok = false, timed_out = false, finite = true;
  double median_ms = kNaN, mean_ms = kNaN, max_ms = kNaN, peak_mb = kNaN, error = kNaN;
  std::int64_t impacts = 0, oversized = 0, fallbacks = 0, largest_cluster = 0, lcps = 0;
};

double median(std::vector<double> values) {
  if (values.empty()) return kNaN;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

Point measure(const Family& family, int size, const Contender& contender, int steps, unsigned budget) {
  Point point;
  point.family = &family;
  point.size = size;
  point.contender = &contender;
  std::vector<double> all;  // every step of every run [ms]
  std::vector<double> maxima;
  double spent = 0.0;
  point.ok = true;
  while (point.runs < kMaxRuns && (point.runs == 0 || spent < kRepeatBudget)) {
    const Run r = run(family, size, &contender, steps, budget);
    ++point.runs;
    spent += r.seconds;
    if (!r.ok) {
      point.ok = false;
      point.timed_out = r.timed_out;
      break;
    }
    const Message& m = r.message;
    double largest = 0.0;
    for (int i = 0; i < m.steps; ++i) {
      all.push_back(m.step_us[i] * 1e-3);
      largest = std::max(largest, m.step_us[i] * 1e-3);
    }
    maxima.push_back(largest);
    point.peak_mb = std::isnan(point.peak_mb) ? r.peak_mb : std::max(point.peak_mb, r.peak_mb);
    point.bodies = m.bodies;
    point.error = m.error;
    point.finite = point.finite && m.finite != 0;
    point.impacts = m.impacts;
    point.oversized = m.oversized;
    point.fallbacks = m.fallbacks;
    point.largest_cluster = m.largest_cluster;
    point.lcps = m.lcps;
  }
  if (point.ok && !all.empty()) {
    point.median_ms = median(all);
    double sum = 0.0;
    for (double t : all) sum += t;
    point.mean_ms = sum / double(all.size());
    point.max_ms = median(maxima);  // the median over runs of each run's largest step
  }
  return point;
}

/// Least-squares slope of log y against log x over x ≥ kSlopeMinSize (NaN
/// with fewer than two such points).
double slope(const std::vector<std::pair<double, double>>& xy) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int count = 0;
  for (const auto& [x, y] : xy) {
    if (!(x >= kSlopeMinSize) || !(y > 0.0) || !std::isfinite(y)) continue;
    const double lx = std::log(x), ly = std::log(y);
    sx += lx;
    sy += ly;
    sxx += lx * lx;
    sxy += lx * ly;
    ++count;
  }
  if (count < 2) return kNaN;
  return (count * sxy - sx * sy) / (count * sxx - sx * sx);
}

// ── plot ────────────────────────────────────────────────────────────────────

/// Two log–log panels (max step = impact step, and peak memory net of the
/// empty world) against N; one colour per family, simpact solid and stock
/// dashed.
template <class Baseline>
void write_svg(const std::string& path, const std::vector<Point>& points, const Baseline& baseline_mb) {
  std::ofstream out(path);
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return;
  }
  constexpr std::array<const char*, 6> colours = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
  static_assert(colours.size() >= kFamilies.size(), "one plot colour per scene family");
  const double width = 980, height = 440, panel = 400, left = 70, top = 40, plot_h = 330;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  for (int p = 0; p < 2; ++p) {
    const double x0 = left + p * (panel + 90);
    const auto value = [&](const Point& q) { return p == 0 ? q.max_ms : q.peak_mb - baseline_mb(q.family); };
    double ymin = 1e300, ymax = 0, xmax = 10;
    for (const Point& q : points) {
      const double y = value(q);
      if (!(y > 0) || !std::isfinite(y)) continue;
      ymin = std::min(ymin, y);
      ymax = std::max(ymax, y);
      xmax = std::max(xmax, double(q.bodies));
    }
    if (!(ymax > 0)) continue;
    const double ly0 = std::floor(std::log10(ymin)), ly1 = std::ceil(std::log10(ymax));
    const double lx0 = 1.0, lx1 = std::ceil(std::log10(xmax));
    const auto X = [&](double x) { return x0 + (std::log10(x) - lx0) / (lx1 - lx0) * panel; };
    const auto Y = [&](double y) { return top + plot_h - (std::log10(y) - ly0) / std::max(1.0, ly1 - ly0) * plot_h; };
    out << "<text x=\"" << x0 << "\" y=\"" << top - 15 << "\" font-weight=\"bold\">"
        << (p == 0 ? "impact (largest) step [ms]" : "peak memory above an empty world [MB]") << "</text>\n";
    out << "<rect x=\"" << x0 << "\" y=\"" << top << "\" width=\"" << panel << "\" height=\"" << plot_h
        << "\" fill=\"none\" stroke=\"#888\"/>\n";
    for (double e = lx0; e <= lx1; ++e)
      out << "<text x=\"" << X(std::pow(10, e)) - 10 << "\" y=\"" << top + plot_h + 16 << "\">1e" << e << "</text>\n";
    for (double e = ly0; e <= ly1; ++e)
      out << "<text x=\"" << x0 - 45 << "\" y=\"" << Y(std::pow(10, e)) + 4 << "\">1e" << e << "</text>\n"
          << "<line x1=\"" << x0 << "\" x2=\"" << x0 + panel << "\" y1=\"" << Y(std::pow(10, e)) << "\" y2=\""
          << Y(std::pow(10, e)) << "\" stroke=\"#eee\"/>\n";
    out << "<text x=\"" << x0 + panel / 2 - 40 << "\" y=\"" << top + plot_h + 34 << "\">bodies N</text>\n";
    for (size_t f = 0; f < kFamilies.size(); ++f)
      for (const Contender& c : kContenders) {
        std::string path_d;
        for (const Point& q : points) {
          if (q.family != &kFamilies[f] || q.contender != &c) continue;
          const double y = value(q);
          if (!(y > 0) || !std::isfinite(y)) continue;
          path_d += (path_d.empty() ? "M" : " L") + std::to_string(X(q.bodies)) + " " + std::to_string(Y(y));
        }
        if (path_d.empty()) continue;
        out << "<path d=\"" << path_d << "\" fill=\"none\" stroke=\"" << colours[f] << "\" stroke-width=\"2\""
            << (&c == &kContenders[0] ? " stroke-dasharray=\"5,4\"" : "") << "/>\n";
      }
  }
  for (size_t f = 0; f < kFamilies.size(); ++f)
    out << "<text x=\"" << left + 10 + 110 * double(f) << "\" y=\"" << height - 12 << "\" fill=\"" << colours[f]
        << "\">" << kFamilies[f].name << "</text>\n";
  out << "<text x=\"" << left + 680 << "\" y=\"" << height - 12
      << "\">solid: simpact, dashed: stock SI</text>\n</svg>\n";
}

/// Redraws the plot from a CSV this program wrote (the plot is always
/// drawn this way, so a checked-in SVG is reproducible from its CSV).
/// Returns false, saying why, when the file cannot be read or a row names
/// an unknown scene or solver.
bool plot_from_csv(const std::string& csv, const std::string& svg) {
  std::ifstream in(csv);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", csv.c_str());
    return false;
  }
  std::string line;
  std::getline(in, line);  // header
  std::vector<Point> points;
  std::vector<double> baseline(kFamilies.size(), kNaN);
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> cell;
    size_t from = 0;
    for (size_t comma = line.find(','); ; comma = line.find(',', from)) {
      cell.push_back(line.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
      if (comma == std::string::npos) break;
      from = comma + 1;
    }
    // scene,size,bodies,solver,median_ms,mean_ms,max_ms,peak_mb,baseline_mb,...
    if (cell.size() < 9) {
      std::fprintf(stderr, "%s: a row with %zu fields: %s\n", csv.c_str(), cell.size(), line.c_str());
      return false;
    }
    Point p;
    for (const Family& f : kFamilies)
      if (cell[0] == f.name) p.family = &f;
    for (const Contender& c : kContenders)
      if (cell[3] == c.label) p.contender = &c;
    if (p.family == nullptr || p.contender == nullptr) {
      std::fprintf(stderr, "%s: unknown scene or solver in: %s\n", csv.c_str(), line.c_str());
      return false;
    }
    try {
      p.size = std::stoi(cell[1]);
      p.bodies = std::stoi(cell[2]);
      p.max_ms = std::stod(cell[6]);
      p.peak_mb = std::stod(cell[7]);
      baseline[static_cast<size_t>(p.family - kFamilies.data())] = std::stod(cell[8]);
    } catch (const std::exception&) {
      std::fprintf(stderr, "%s: a field is not a number in: %s\n", csv.c_str(), line.c_str());
      return false;
    }
    points.push_back(p);
  }
  write_svg(svg, points, [&](const Family* family) { return baseline[static_cast<size_t>(family - kFamilies.data())]; });
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string csv = "benchmark_scaling.csv", svg = "benchmark_scaling.svg", only, plot_from;
  long max_size = std::numeric_limits<long>::max();
  int steps_override = 0;
  unsigned budget_override = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      quick = true;
    } else if (a == "--plot-from" && i + 1 < argc) {
      plot_from = argv[++i];
    } else if (a == "--csv" && i + 1 < argc) {
      csv = argv[++i];
    } else if (a == "--svg" && i + 1 < argc) {
      svg = argv[++i];
    } else if (a == "--scene" && i + 1 < argc) {
      only = argv[++i];
    } else if (a == "--max-size" && i + 1 < argc) {
      max_size = std::atol(argv[++i]);
    } else if (a == "--steps" && i + 1 < argc) {
      steps_override = std::clamp(std::atoi(argv[++i]), 1, kMaxSteps);
    } else if (a == "--budget" && i + 1 < argc) {
      budget_override = static_cast<unsigned>(std::max(1, std::atoi(argv[++i])));
    } else {
      std::fprintf(stderr,
                   "usage: %s [--quick] [--csv FILE] [--svg FILE] [--scene NAME] [--max-size N] [--steps N] "
                   "[--budget SECONDS]\n       %s --plot-from CSV [--svg FILE]\n",
                   argv[0],
                   argv[0]);
      return 64;
    }
  }
  if (!plot_from.empty()) return plot_from_csv(plot_from, svg) ? 0 : 1;
  const unsigned budget = budget_override > 0 ? budget_override : quick ? kQuickRunBudget : kRunBudget;
  // An empty world of each family's broadphase: the memory the slopes and
  // the plot leave out.
  std::vector<double> baseline(kFamilies.size());
  for (size_t f = 0; f < kFamilies.size(); ++f) baseline[f] = run(kFamilies[f], 0, nullptr, 1, budget).peak_mb;
  const auto baseline_of = [&](const Family* family) {
    return baseline[static_cast<size_t>(family - kFamilies.data())];
  };
  std::printf("benchmark_scaling: %s, %d steps per run at %.0f Hz (pile %d), empty worlds %.1f MB (DBVT), "
              "%.1f MB (axis sweep)\n",
              quick ? "quick" : "full", steps_override > 0 ? steps_override : kSteps, kRate, quick ? kQuickPileSteps : kPileSteps, baseline[2], baseline[0]);
  std::printf("%-12s %7s %-9s %9s %9s %9s %9s %10s %8s %6s %s\n", "scene", "N", "solver", "median_ms", "mean_ms",
              "max_ms", "peak_MB", "error", "impacts", "runs", "note");
  std::vector<Point> points;
  bool failed = false;
  // Progress on a terminal's stderr (simpact_cli/progress.h), counted in
  // bodies measured: a run's cost grows about linearly with N (the slopes
  // below), so the ETA of a size-weighted count is a fair one.
  std::int64_t planned_bodies = 0;
  for (const Family& family : kFamilies) {
    if (!only.empty() && only != family.name) continue;
    for (const int size : quick ? family.quick_sizes : family.sizes) {
      if (size <= max_size) planned_bodies += static_cast<std::int64_t>(size) * static_cast<std::int64_t>(kContenders.size());
    }
  }
  simpact::cli::ProgressLine progress("benchmark_scaling", planned_bodies, "bodies measured");
  for (const Family& family : kFamilies) {
    if (!only.empty() && only != family.name) continue;
    int steps = family.steps == kPileSteps && quick ? kQuickPileSteps : family.steps;
    if (steps_override > 0 && family.steps != kPileSteps) steps = steps_override;
    const unsigned family_budget = family.steps == kPileSteps ? std::min(budget, kPileRunBudget) : budget;
    for (const int size : quick ? family.quick_sizes : family.sizes) {
      if (size > max_size) continue;
      Point pair[2];
      for (size_t c = 0; c < kContenders.size(); ++c) {
        Point p = measure(family, size, kContenders[c], steps, family_budget);
        // A run that timed out reports nothing; both contenders build the same scene.
        if (p.bodies == 0 && c > 0) p.bodies = pair[0].bodies;
        std::string note;
        if (!p.ok) note = p.timed_out ? "timed out" : "crashed";
        if (!p.finite) note += " non-finite";
        if (p.oversized > 0) note += " " + std::to_string(p.oversized) + " over Routh cap";
        if (p.fallbacks > 0) note += " " + std::to_string(p.fallbacks) + " fallbacks";
        if (p.largest_cluster > 0) note += " largest cluster " + std::to_string(p.largest_cluster);
        if (p.lcps > 0) note += ", " + std::to_string(p.lcps) + " Routh LCPs";
        failed = failed || (!p.ok && !p.timed_out) || !p.finite;
        progress.clear_line();
        std::printf("%-12s %7d %-9s %9.3f %9.3f %9.3f %9.1f %10.2e %8lld %6d %s\n", family.name, p.bodies,
                    kContenders[c].label, p.median_ms, p.mean_ms, p.max_ms, p.peak_mb, p.error,
                    static_cast<long long>(p.impacts), p.runs, note.c_str());
        std::fflush(stdout);
        pair[c] = p;
        points.push_back(p);
        progress.advance(size);
      }
      std::printf("%-12s %7d ratio     %9.2f %9.2f %9.2f %9.2f\n", family.name, pair[0].bodies,
                  pair[1].median_ms / pair[0].median_ms, pair[1].mean_ms / pair[0].mean_ms,
                  pair[1].max_ms / pair[0].max_ms, pair[1].peak_mb / pair[0].peak_mb);
    }
  }
  progress.finish();
  std::printf("\nlog-log slopes over N >= %.0f (time: mean step; memory: peak above the empty world)\n",
              kSlopeMinSize);
  for (const Family& family : kFamilies)
    for (const Contender& c : kContenders) {
      std::vector<std::pair<double, double>> time, memory;
      for (const Point& p : points) {
        if (p.family != &family || p.contender != &c) continue;
        time.emplace_back(p.bodies, p.mean_ms);
        memory.emplace_back(p.bodies, p.peak_mb - baseline_of(p.family));
      }
      if (time.empty()) continue;
      std::printf("  %-12s %-9s time %5.2f  memory %5.2f\n", family.name, c.label, slope(time), slope(memory));
    }
  std::ofstream out(csv);
  out << "scene,size,bodies,solver,median_ms,mean_ms,max_ms,peak_mb,baseline_mb,error,impacts,oversized,fallbacks,"
         "largest_cluster,routh_lcps,runs,ok,finite\n";
  for (const Point& p : points)
    out << p.family->name << "," << p.size << "," << p.bodies << "," << p.contender->label << "," << p.median_ms << ","
        << p.mean_ms << "," << p.max_ms << "," << p.peak_mb << "," << baseline_of(p.family) << "," << p.error << ","
        << p.impacts << "," << p.oversized << "," << p.fallbacks << "," << p.largest_cluster << "," << p.lcps << ","
        << p.runs << "," << p.ok << ","
        << p.finite << "\n";
  out.close();
  if (!plot_from_csv(csv, svg)) return 1;
  std::printf("wrote %s and %s\n", csv.c_str(), svg.c_str());
  return failed ? 1 : 0;
}
