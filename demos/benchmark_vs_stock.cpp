// Benchmark of simpact (ImpactSolver in front of stock SI, with its default
// propagative law and with the variational and Pasquero laws) against
// Bullet's stock SI, NNCG and MLCP-Dantzig solvers on four scenes: the touching
// cradle, a billiard break, a 10×10 pile of falling boxes and a touching
// chain of 100 balls. For each: the median, mean and max time per step and
// their ratios to stock SI measured in the same invocation, the energy error
// and the momentum error. The median hides the impact steps, where users
// wait (a chain's one impact step is most of its cost), so the targets are
// on the MEAN step: ≤ 1.05× stock SI on the box pile, whose few simultaneous
// impacts make simpact pure overhead; ≤ 1.5× on the impact-heavy scenes. The
// max is the median over runs of each run's largest step (the impact step
// of the line scenes). Prints a table and a verdict per target and writes a
// CSV.
//
// The development machine has 2 noisy cores shared with other jobs, so:
// every run is a fresh world (after an untimed warm-up run in the same
// process, so one-time code loading is not counted as step time), the solvers of a scene run back to back in an
// order that rotates with each repetition, and a solver's figure is the
// median over every step of all its runs. Each run is a child process, so a
// crash is reported as such, and a run over its time budget can be stopped
// even in the middle of a step.
//
// Usage: benchmark_vs_stock [--quick] [--csv FILE]
// Exit status 0 unless a run crashed or ended in a non-finite state: timing
// is reported, never asserted. 64 for bad usage.
#include "benchmark_options.h"

#include <simpact_cli/progress.h>
#include <simpact_scenes/bullet_scenes.h>

#include <BulletDynamics/Dynamics/btRigidBody.h>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using simpact::scenes::BulletWorld;
using simpact::scenes::Scene;
using simpact::scenes::SolverKind;

constexpr double kRate = 240.0;  // [Hz], the step rate

// The targets on simpact's mean time per step / stock SI's.
constexpr double kOverheadTarget = 1.05;
constexpr double kImpactTarget = 1.5;

constexpr int kCradleBalls = 5;    // the classic desk toy
constexpr int kChainBalls = 100;   // the chain
// Line scenes run until the far ball, which leaves at the striker's speed in
// the exact outcome, is this many diameters clear of its neighbour: the
// impact is over and the steps after it show the cost of resting contacts.
constexpr double kLeaveDiameters = 1.0;
// The issue's ~0.5 s: the break itself is over within the first steps (the
// rack is 0.2 m deep and the cue ball comes at 5 m/s); the rest shows the
// spreading balls, in and out of contact [s].
constexpr double kBilliardDuration = 0.5;
// The issue's ~2 s: the top layer, 2.2 m up, lands after ~0.7 s and the
// pile then settles [s].
constexpr double kBoxPileDuration = 2.0;
// --quick: long enough for every scene's first impact, including the box
// pile's lowest layer, which falls 0.1 m and lands after 0.14 s [s].
constexpr double kQuickDuration = 1.0 / 6.0;

// Runs per scene and solver, at most. The cradle and the chain last 24 steps
// of a few µs to 0.2 ms: 15 runs give their medians a few hundred samples.
constexpr int kRepetitions = 15;
// A solver is not repeated on a scene once its runs there have taken this
// long [s]: such runs hold enough steps for a stable median; repetition is
// for short runs, which one burst of load could skew.
constexpr double kRepeatBudget = 2.0;
// A run is stopped after this long [s]. Stock MLCP-Dantzig needs ~10 s for
// the box pile on the loaded development machine; the budget keeps the whole
// default run under a minute whatever a solver does.
constexpr double kRunBudget = 15.0;

constexpr double kNotAvailable = std::numeric_limits<double>::quiet_NaN();

enum class Momentum {
  kNotConserved,  ///< gravity and a frictional ground act on the bodies
  kConserved,     ///< no external force
  kHorizontal,    ///< a frictionless table: only the vertical part changes
};

struct SceneSpec {
  const char* name;
  double target;  ///< ratio to stock SI
  Momentum momentum;
  Scene (*build)(BulletWorld&);
  double (*duration)(const Scene&);  ///< [s]
};

double until_far_ball_left(const Scene& scene) {
  const std::vector<btRigidBody*>& balls = scene.bodies;
  const double diameter = simpact::scenes::position(*balls.back()).x() -
                          simpact::scenes::position(*balls[balls.size() - 2]).x();
  const double speed = simpact::scenes::velocity(*balls.front()).x();
  return scene.strike_time + kLeaveDiameters * diameter / speed;
}

const std::array<SceneSpec, 4> kScenes = {{
    {"cradle", kImpactTarget, Momentum::kConserved,
     [](BulletWorld& world) {
       simpact::scenes::CradleOptions cradle;  // elastic, frictionless, touching
       cradle.balls = kCradleBalls;
       cradle.strings = false;  // free on a line: no gravity, so momentum is conserved
       return simpact::scenes::newtons_cradle(world, cradle);
     },
     until_far_ball_left},
    {"billiard", kImpactTarget, Momentum::kHorizontal,
     [](BulletWorld& world) { return simpact::scenes::billiard_break(world); },
     [](const Scene&) { return kBilliardDuration; }},
    {"box_pile", kOverheadTarget, Momentum::kNotConserved,
     [](BulletWorld& world) { return simpact::scenes::box_pile(world); },
     [](const Scene&) { return kBoxPileDuration; }},
    {"chain", kImpactTarget, Momentum::kConserved,
     [](BulletWorld& world) { return simpact::scenes::ball_chain(world, kChainBalls); },
     until_far_ball_left},
}};

/// A solver of the table: a stock one, or simpact over stock SI with a law.
struct Contender {
  const char* label;
  SolverKind solver;
  simpact::bullet::ImpactLaw law;  ///< simpact only
};
using simpact::bullet::ImpactLaw;
// Stock SI first: every ratio is to it. The variational and Pasquero laws
// act on elastic clusters (the cradle, billiard and chain); the box pile's
// plastic clusters take the propagative law with either.
const std::array<Contender, 6> kContenders = {{
    {"stock_si", SolverKind::kStockSi, ImpactLaw::kPropagative},
    {"stock_nncg", SolverKind::kStockNncg, ImpactLaw::kPropagative},
    {"stock_mlcp_dantzig", SolverKind::kStockMlcpDantzig, ImpactLaw::kPropagative},
    {"simpact", SolverKind::kSimpact, ImpactLaw::kPropagative},
    {"simpact_variational", SolverKind::kSimpact, ImpactLaw::kVariational},
    {"simpact_pasquero", SolverKind::kSimpact, ImpactLaw::kPasquero},
}};

// ── one run, in a child process ─────────────────────────────────────────────

/// Child → parent, one per step and one at the end; fixed size and smaller
/// than PIPE_BUF, so each write is atomic.
struct Message {
  enum Kind : std::int32_t { kStep, kEnd };
  std::int32_t kind = kStep;
  std::int32_t finite = 1;
  double step_us = 0.0;
  std::int64_t impacts = 0;
  double energy_error = 0.0;
  double momentum_error = 0.0;
};

struct State {
  double kinetic = 0.0;
  double energy = 0.0;
  Eigen::Vector3d momentum = Eigen::Vector3d::Zero();
};

State measure(const BulletWorld& world, Momentum momentum) {
  State s{world.kinetic_energy(), world.energy(), world.linear_momentum()};
  // y is up in every scene, and a frictionless table only pushes along y.
  if (momentum == Momentum::kHorizontal) s.momentum.y() = 0.0;
  return s;
}

bool all_finite(const Scene& scene) {
  for (const btRigidBody* body : scene.bodies) {
    if (!simpact::scenes::position(*body).allFinite() ||
        !simpact::scenes::velocity(*body).allFinite()) {
      return false;
    }
  }
  return true;
}

void send(int fd, const Message& message) {
  const char* data = reinterpret_cast<const char*>(&message);
  size_t left = sizeof message;
  while (left > 0) {
    const ssize_t n = write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(3);  // the parent is gone: nobody to report to
    data += n;
    left -= static_cast<size_t>(n);
  }
}

[[noreturn]] void run_child(const SceneSpec& spec, const Contender& contender, int steps, int fd) {
  int status = 0;
  try {
    simpact::scenes::WorldOptions options;
    options.solver = contender.solver;  // simpact's base is options.base, stock SI by default
    options.simpact.law = contender.law;
    {
      // Warm-up, untimed: the same run in a world of its own. The first
      // impact a process ever makes pays for bringing the code in (page
      // faults, lazy symbol binding): on the 5-ball cradle ~150 us against
      // ~30 us once warm (stock SI: ~50 against ~11), once per process, not
      // per impact; a 24-step run would show it as a per-step cost.
      BulletWorld warm(options);
      spec.build(warm);
      for (int i = 0; i < steps; ++i) warm.step(1.0 / kRate);
    }
    BulletWorld world(options);
    const Scene scene = spec.build(world);
    const State before = measure(world, spec.momentum);
    Message message;
    for (int i = 0; i < steps; ++i) {
      const Clock::time_point start = Clock::now();
      world.step(1.0 / kRate);
      message.step_us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
      message.impacts = world.impacts();
      send(fd, message);
    }
    const State after = measure(world, spec.momentum);
    message.kind = Message::kEnd;
    // Relative to the energy the scene sets in motion: its initial kinetic
    // energy, or for a scene that starts at rest its potential energy above
    // the ground (the zero of potential), all of which a fall can release.
    const double scale = before.kinetic > 0.0 ? before.kinetic : before.energy;
    message.energy_error = (after.energy - before.energy) / scale;
    if (spec.momentum != Momentum::kNotConserved) {
      message.momentum_error = (after.momentum - before.momentum).norm() / before.momentum.norm();
    }
    message.finite = all_finite(scene) && std::isfinite(message.energy_error) &&
                     std::isfinite(message.momentum_error);
    send(fd, message);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s / %s: %s\n", spec.name, contender.label, e.what());
    status = 2;
  }
  _exit(status);
}

struct Run {
  std::vector<double> step_us;
  std::int64_t impacts = 0;
  bool completed = false;
  bool timed_out = false;
  bool crashed = false;
  bool finite = true;
  double energy_error = kNotAvailable;
  double momentum_error = kNotAvailable;
  double seconds = 0.0;  ///< wall time of the run
  /// A timed-out run spent at least this long stepping [µs]: its finished
  /// steps and the one it was stopped in.
  double stepping_us_lower_bound = 0.0;
};

double since(Clock::time_point start, Clock::time_point end = Clock::now()) {
  return std::chrono::duration<double>(end - start).count();
}

Run run(const SceneSpec& spec, const Contender& contender, int steps, double budget) {
  Run result;
  int fds[2];
  if (pipe(fds) != 0) {
    std::perror("pipe");
    result.crashed = true;
    return result;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const Clock::time_point start = Clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    close(fds[0]);
    close(fds[1]);
    result.crashed = true;
    return result;
  }
  if (pid == 0) {
    close(fds[0]);
    run_child(spec, contender, steps, fds[1]);
  }
  close(fds[1]);
  std::vector<char> pending;
  Clock::time_point last_message = start;
  while (true) {
    const double left = budget - since(start);
    pollfd readable{fds[0], POLLIN, 0};
    const int ready = left > 0.0 ? poll(&readable, 1, static_cast<int>(std::ceil(left * 1e3))) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      kill(pid, SIGKILL);
      result.timed_out = true;
      double finished = 0.0;
      for (double us : result.step_us) finished += us;
      result.stepping_us_lower_bound = finished + since(last_message) * 1e6;
      break;
    }
    char buffer[4096];
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the child has exited (or died)
    pending.insert(pending.end(), buffer, buffer + n);
    size_t used = 0;
    for (; pending.size() - used >= sizeof(Message); used += sizeof(Message)) {
      Message message;
      std::memcpy(&message, pending.data() + used, sizeof message);
      result.impacts = message.impacts;
      if (message.kind == Message::kStep) {
        result.step_us.push_back(message.step_us);
      } else {
        result.completed = true;
        result.finite = message.finite != 0;
        result.energy_error = message.energy_error;
        result.momentum_error = message.momentum_error;
      }
    }
    pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(used));
    last_message = Clock::now();
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.seconds = since(start);
  if (!result.timed_out) {
    result.crashed = !result.completed || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    if (WIFSIGNALED(status)) {
      std::fprintf(stderr, "%s / %s: killed by signal %d (%s)\n", spec.name,
                   contender.label, WTERMSIG(status), strsignal(WTERMSIG(status)));
    }
  }
  return result;
}

// ── aggregation and report ──────────────────────────────────────────────────

double median(std::vector<double> values) {
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

double mean(const std::vector<double>& values) {
  double sum = 0.0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

/// Every run of one solver on one scene.
struct Result {
  const SceneSpec* scene = nullptr;
  const Contender* contender = &kContenders[0];
  int steps = 0;
  int runs = 0;
  double seconds = 0.0;
  std::vector<double> step_us;  ///< every step of every completed run
  std::vector<double> run_max_us;  ///< each completed run's largest step
  Run first;                    ///< the errors; Bullet is deterministic, so any run gives them
  bool timed_out = false;
  bool crashed = false;
  bool finite = true;

  /// Timings of a run that ended in a non-finite state are not judged.
  bool measured() const { return !timed_out && !crashed && finite && !step_us.empty(); }
  bool repeat() const { return measured() && seconds < kRepeatBudget; }

  void add(Run r) {
    if (runs++ == 0) first = r;
    seconds += r.seconds;
    timed_out = timed_out || r.timed_out;
    crashed = crashed || r.crashed;
    finite = finite && r.finite;
    if (r.completed) {
      step_us.insert(step_us.end(), r.step_us.begin(), r.step_us.end());
      if (!r.step_us.empty()) run_max_us.push_back(*std::max_element(r.step_us.begin(), r.step_us.end()));
    }
  }
};

/// The figures of one Result, NaN where not available.
struct Row {
  const Result* result = nullptr;
  double median_us = kNotAvailable;
  double median_ratio = kNotAvailable;  ///< to stock SI on the same scene
  double mean_us = kNotAvailable;
  double mean_ratio = kNotAvailable;
  double max_us = kNotAvailable;  ///< median over runs of the run's largest step
  double max_ratio = kNotAvailable;
  /// A timed-out run: the means are lower bounds (its finished steps and the
  /// one it was stopped in, over all the steps it should have made).
  bool mean_is_bound = false;
  double energy_error = kNotAvailable;
  double momentum_error = kNotAvailable;
  std::string impacts;  ///< empty for a stock solver
  std::string status;
};

Row row_of(const Result& r, const Result& si) {
  Row row;
  row.result = &r;
  if (r.measured()) {
    row.median_us = median(r.step_us);
    row.mean_us = mean(r.step_us);
    row.max_us = median(r.run_max_us);
  } else if (r.timed_out) {
    row.mean_us = r.first.stepping_us_lower_bound / r.steps;
    row.mean_is_bound = true;
  }
  if (si.measured()) {
    row.median_ratio = row.median_us / median(si.step_us);
    row.mean_ratio = row.mean_us / mean(si.step_us);
    row.max_ratio = row.max_us / median(si.run_max_us);
  }
  row.energy_error = r.first.energy_error;
  if (r.scene->momentum != Momentum::kNotConserved) row.momentum_error = r.first.momentum_error;
  if (r.contender->solver == SolverKind::kSimpact) row.impacts = std::to_string(r.first.impacts);
  row.status = r.crashed ? "CRASHED" : r.timed_out ? "timeout" : !r.finite ? "NON-FINITE" : "ok";
  return row;
}

std::string format(const char* pattern, double value, bool bound = false) {
  if (std::isnan(value)) return "n/a";
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return (bound ? ">=" : "") + std::string(text);
}

void print_table(const std::vector<Row>& rows) {
  const char* layout = "%-9s %-19s %5s %4s %10s %7s %11s %8s %10s %8s %10s %12s %7s  %s\n";
  std::printf(layout, "scene", "solver", "steps", "runs", "median us", "x SI", "mean us", "x SI", "max us",
              "x SI", "energy err", "momentum err", "impacts", "status");
  for (const Row& row : rows) {
    const Result& r = *row.result;
    std::printf(layout, r.scene->name, r.contender->label,
                std::to_string(r.steps).c_str(), std::to_string(r.runs).c_str(),
                format("%.1f", row.median_us).c_str(), format("%.3f", row.median_ratio).c_str(),
                format("%.1f", row.mean_us, row.mean_is_bound).c_str(),
                format("%.2f", row.mean_ratio, row.mean_is_bound).c_str(),
                format("%.1f", row.max_us).c_str(), format("%.2f", row.max_ratio).c_str(),
                format("%+.2e", row.energy_error).c_str(),
                format("%+.2e", row.momentum_error).c_str(),
                row.impacts.empty() ? "-" : row.impacts.c_str(), row.status.c_str());
  }
  std::printf(
      "\nx SI: ratio to stock SI on the same scene in this run (>= : a lower bound, the run was\n"
      "  stopped). max us: the median over runs of each run's largest step. energy err: (E_after - E_before) / E_scale, E_scale the initial kinetic\n"
      "  energy, or for the box pile, which starts at rest, its potential energy above the\n"
      "  ground. 0 is exact for the elastic, frictionless cradle, billiard and chain; the box\n"
      "  pile dissipates by design (plastic, with friction). momentum err: |P_after - P_before|\n"
      "  / |P_before|, horizontal on the billiard table; n/a where gravity and a frictional\n"
      "  ground change it.\n");
}

void print_verdicts(const std::vector<Row>& rows, bool quick) {
  std::printf("\ntargets (simpact's mean time per step / stock SI's, same run)%s:\n",
              quick ? " -- --quick is a smoke run, too short to judge them" : "");
  for (const Row& row : rows) {
    const Result& r = *row.result;
    if (r.contender->solver != SolverKind::kSimpact) continue;
    std::printf("  %-9s %-19s <= %.2fx stock SI: ", r.scene->name, r.contender->label, r.scene->target);
    if (!std::isnan(row.mean_ratio) && !row.mean_is_bound) {
      std::printf("%s (mean %.3fx; median %.3fx, max %.2fx)\n", row.mean_ratio <= r.scene->target ? "met" : "MISSED",
                  row.mean_ratio, row.median_ratio, row.max_ratio);
    } else if (row.mean_is_bound && !std::isnan(row.mean_ratio)) {
      std::printf("MISSED (run stopped after %.0f s with %zu of %d steps done; mean >= %.0fx)\n",
                  r.first.seconds, r.first.step_us.size(), r.steps, row.mean_ratio);
    } else {
      std::printf("not measured (%s)\n", row.status.c_str());
    }
  }
}

bool write_csv(const std::string& path, const std::vector<Row>& rows) {
  std::ofstream csv(path);
  csv.precision(9);
  // A timed-out run's mean columns are lower bounds; its status says so.
  csv << "scene,solver,steps,runs,median_us_per_step,median_ratio_to_stock_si,mean_us_per_step,"
         "mean_ratio_to_stock_si,max_us_per_step,max_ratio_to_stock_si,energy_error,momentum_error,impacts,status\n";
  for (const Row& row : rows) {
    const Result& r = *row.result;
    csv << r.scene->name << ',' << r.contender->label << ',' << r.steps << ','
        << r.runs;
    for (double value : {row.median_us, row.median_ratio, row.mean_us, row.mean_ratio, row.max_us, row.max_ratio,
                         row.energy_error, row.momentum_error}) {
      csv << ',';
      if (!std::isnan(value)) csv << value;
    }
    csv << ',' << row.impacts << ',' << row.status << '\n';
  }
  return static_cast<bool>(csv.flush());
}

int steps_of(const SceneSpec& spec, bool quick) {
  BulletWorld world;
  const double duration = spec.duration(spec.build(world));
  return static_cast<int>(std::lround(std::min(duration, quick ? kQuickDuration : duration) * kRate));
}

}  // namespace

int main(int argc, char** argv) {
  const auto options = simpact::demos::parse_benchmark_options(argc, argv, "benchmark_vs_stock.csv");
  if (!options) return 64;
  const bool quick = options->quick;
  const std::string& csv_path = options->csv;
  const int repetitions = quick ? 1 : kRepetitions;
  std::printf("simpact vs stock Bullet solvers at %.0f Hz; up to %d runs per scene and solver%s\n\n",
              kRate, repetitions, quick ? " (--quick)" : "");

  std::vector<Result> results;
  // Progress on a terminal's stderr (simpact_cli/progress.h): one item per
  // scene, solver and repetition; repetitions a result does not need count
  // as done at once.
  simpact::cli::ProgressLine progress(
      "benchmark_vs_stock",
      static_cast<std::int64_t>(kScenes.size() * kContenders.size()) * repetitions, "runs");
  for (const SceneSpec& spec : kScenes) {
    const size_t first = results.size();
    const int steps = steps_of(spec, quick);
    for (const Contender& contender : kContenders) {
      Result r;
      r.scene = &spec;
      r.contender = &contender;
      r.steps = steps;
      results.push_back(r);
    }
    // Rotating the order spreads slow phases of the machine over all solvers.
    for (int rep = 0; rep < repetitions; ++rep) {
      for (size_t k = 0; k < kContenders.size(); ++k) {
        Result& r = results[first + (k + static_cast<size_t>(rep)) % kContenders.size()];
        if (rep == 0 || r.repeat()) r.add(run(spec, *r.contender, steps, kRunBudget));
        progress.advance();
      }
    }
  }

  progress.finish();
  std::vector<Row> rows;
  for (size_t i = 0; i < results.size(); ++i) {
    rows.push_back(row_of(results[i], results[i - i % kContenders.size()]));
  }
  print_table(rows);
  print_verdicts(rows, quick);

  bool sound = true;
  for (const Result& r : results) sound = sound && !r.crashed && r.finite;
  if (!write_csv(csv_path, rows)) {
    std::fprintf(stderr, "cannot write %s\n", csv_path.c_str());
    sound = false;
  }
  std::printf("\nwrote %s; every run %s\n", csv_path.c_str(),
              sound ? "finished with a finite state or was stopped for time"
                    : "did NOT finish soundly (crash or non-finite state)");
  return sound ? 0 : 1;
}
