// Benchmark of the propagative core: time per resolution for the 3-ball
// Newton's cradle and for a touching chain of N balls struck at one end,
// N = 3 … 1000. Prints a table; targets (issue #2): ≤ 1 µs for the 3-ball
// cradle, and time close to linear in the number of reflections. Then every
// law's time per impact, and the plastic LCP's two solvers (dense Lemke,
// box pivoting) on landing box columns of 8–256 contacts: the figures
// behind kDensePlasticContacts.
//
// Timing is wall-clock on a noisy shared machine, so each row is the median
// of several batches, and the linearity verdict uses a log–log slope over
// the whole sweep measured in one run (ratios, not absolute times).
//
// Usage: benchmark_core [--quick] [--csv FILE]
#include "benchmark_options.h"
#include "benchmark_timing.h"
#include "laws/law_runs.h"

#include <simpact/propagative.h>
#include <simpact_scenes/core_scenes.h>
#include <simpact_scenes/frictional_scenes.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

struct Timing {
  double median_ns = 0.0;
  std::int64_t reflections = 0;
  bool correct = false;
};

Timing time_solve(simpact::PropagativeSolver& solver, const simpact::ImpactProblem& problem,
                  int batches, double min_batch_ns) {
  Timing t;
  const simpact::ImpactResult& warm = solver.solve(problem);
  t.reflections = warm.reflections;
  const Eigen::VectorXd& v = warm.outcomes.at(0).velocity;
  // Equal masses: the struck end ball leaves with the striker's speed and
  // everything else stops.
  const double speed = problem.velocity[0];
  t.correct = warm.status == simpact::Status::kSuccess &&
              std::abs(v[v.size() - 1] - speed) <= 1e-9 * speed &&
              v.head(v.size() - 1).cwiseAbs().maxCoeff() <= 1e-9 * speed;
  t.median_ns = simpact::demos::median_call_ns([&] { solver.solve(problem); }, batches, min_batch_ns);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const auto options = simpact::demos::parse_benchmark_options(argc, argv, "");
  if (!options) return 64;
  const bool quick = options->quick;
  const std::string& csv_path = options->csv;
  const int batches = quick ? 3 : 9;
  const double min_batch_ns = quick ? 2e5 : 2e7;

  // "full": validation + energy, as `simpact resolve` runs it; "hot path":
  // what an engine adapter that builds its own problems uses.
  simpact::PropagativeParameters full;
  simpact::PropagativeParameters hot = full;
  hot.validate_input = false;
  hot.compute_energy = false;
  simpact::PropagativeSolver full_solver(full), hot_solver(hot);

  const simpact::ImpactProblem cradle = simpact::scenes::newtons_cradle(3, 1, 1.0);
  const Timing cradle_full = time_solve(full_solver, cradle, batches, min_batch_ns);
  const Timing cradle_hot = time_solve(hot_solver, cradle, batches, min_batch_ns);
  std::printf("3-ball Newton's cradle (1 incoming, %lld reflections):\n",
              static_cast<long long>(cradle_hot.reflections));
  std::printf("  full checks (validate + energy): %8.1f ns per resolution\n", cradle_full.median_ns);
  std::printf("  hot path (no validation/energy): %8.1f ns per resolution\n", cradle_hot.median_ns);
  std::printf("  target <= 1000 ns: %s (full %.2fx of target, hot %.2fx)\n\n",
              cradle_full.median_ns <= 1000.0 && cradle_hot.median_ns <= 1000.0 ? "met" : "MISSED",
              cradle_full.median_ns / 1000.0, cradle_hot.median_ns / 1000.0);

  std::vector<int> sizes = {3, 5, 10, 20, 50, 100, 200, 500, 1000};
  if (quick) sizes = {3, 10, 100};
  std::printf("%6s %8s %12s %14s %14s %12s %8s\n", "N", "contacts", "reflections", "hot ns/solve",
              "full ns/solve", "hot ns/refl", "correct");
  std::ofstream csv;
  if (!csv_path.empty()) {
    csv.open(csv_path);
    csv << "balls,contacts,reflections,hot_ns_per_solve,full_ns_per_solve,hot_ns_per_reflection\n";
  }
  std::vector<double> log_refl, log_time;
  bool all_correct = cradle_full.correct && cradle_hot.correct;
  for (int n : sizes) {
    const simpact::ImpactProblem chain = simpact::scenes::ball_chain(n, 1.0);
    const Timing hot_t = time_solve(hot_solver, chain, batches, min_batch_ns);
    const Timing full_t = time_solve(full_solver, chain, batches, min_batch_ns);
    const double per_refl = hot_t.median_ns / static_cast<double>(std::max<std::int64_t>(1, hot_t.reflections));
    all_correct = all_correct && hot_t.correct && full_t.correct;
    std::printf("%6d %8d %12lld %14.1f %14.1f %12.1f %8s\n", n, chain.contacts(),
                static_cast<long long>(hot_t.reflections), hot_t.median_ns, full_t.median_ns, per_refl,
                hot_t.correct && full_t.correct ? "yes" : "NO");
    if (csv) csv << n << ',' << chain.contacts() << ',' << hot_t.reflections << ',' << hot_t.median_ns
                 << ',' << full_t.median_ns << ',' << per_refl << '\n';
    log_refl.push_back(std::log(static_cast<double>(hot_t.reflections)));
    log_time.push_back(std::log(hot_t.median_ns));
  }
  // Least-squares slope of log(time) against log(reflections): 1 is linear.
  const double k = static_cast<double>(log_refl.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < log_refl.size(); ++i) {
    sx += log_refl[i];
    sy += log_time[i];
    sxx += log_refl[i] * log_refl[i];
    sxy += log_refl[i] * log_time[i];
  }
  const double slope = (k * sxy - sx * sy) / (k * sxx - sx * sx);
  const double largest = std::exp(log_time.back() - log_time.front());
  const double refl_ratio = std::exp(log_refl.back() - log_refl.front());
  std::printf("\nchain: time grows as reflections^%.2f (log-log slope; 1.00 = linear); "
              "%.0fx the reflections cost %.0fx the time\n", slope, refl_ratio, largest);
  std::printf("outcomes correct (last ball leaves at the striker's speed): %s\n",
              all_correct ? "yes" : "NO");

  // Every law's time per impact (one outcome, as a simulation asks for it;
  // laws/law_runs.h), as a multiple of the propagative law's on the same
  // problem.
  struct LawProblem {
    const char* name;
    simpact::ImpactProblem problem;
  };
  std::vector<LawProblem> law_problems = {
      {"cradle 3, 1 in", simpact::scenes::newtons_cradle(3, 1, 1.0)},
      {"cradle 5, 2 in", simpact::scenes::newtons_cradle(5, 2, 1.0)},
      {"billiard 60 deg", simpact::scenes::billiard_break(M_PI / 3, 1, 1, 1, 1, 1, 1, 1.0)},
      {"split shot", simpact::scenes::split_shot(0.3, 0.5, 1.0)},
      {"break shot 30 deg", simpact::scenes::break_shot(M_PI / 6, 0.5, 1.0)},
      {"chain 20", simpact::scenes::ball_chain(20, 1.0)}};
  if (!quick) law_problems.push_back({"chain 100", simpact::scenes::ball_chain(100, 1.0)});
  const std::vector<simpact::demos::LawRun> laws = simpact::demos::all_laws();
  std::printf("\ntime per impact by law, ns (x = multiple of the propagative law's):\n%-18s", "problem");
  for (const auto& law : laws)
    if (law.impact) std::printf(" %26s", law.name.c_str());
  std::printf("\n");
  for (const LawProblem& p : law_problems) {
    std::printf("%-18s", p.name);
    double propagative_ns = 0.0;
    for (const auto& law : laws) {
      if (!law.impact) continue;
      const double ns = simpact::demos::median_call_ns([&] { law.impact(p.problem); }, batches, min_batch_ns);
      if (propagative_ns == 0.0) propagative_ns = ns;  // the first timed law is the propagative one
      std::printf(" %16.0f (x%6.1f)", ns, ns / propagative_ns);
    }
    std::printf("\n");
  }

  // The plastic LCP by each solver on a column of boxes landing flat (four
  // dependent corner contacts a face; scenes::falling_box_stack without
  // friction): it stops, v⁺ = 0.
  std::printf("\nplastic LCP, landing box column, us per resolution (dense Lemke / box pivoting; "
              "automatic switches above %d contacts):\n%8s %10s %14s %14s %8s\n",
              simpact::kDensePlasticContacts, "boxes", "contacts", "Lemke us", "box us", "stops");
  std::vector<int> columns = {2, 4, 8, 16, 24, 32, 64};
  if (quick) columns = {2, 16};
  for (const int boxes : columns) {
    const simpact::FrictionalProblem column = simpact::scenes::falling_box_stack(boxes);
    simpact::ImpactProblem problem;
    problem.inverse_mass = column.inverse_mass;
    problem.normals = column.normals;
    problem.velocity = column.velocity;
    problem.restitution = 0.0;
    double us[2] = {0.0, 0.0};
    bool stops = true;
    for (const int which : {0, 1}) {
      simpact::PropagativeParameters parameters = hot;
      parameters.plastic_solver = which == 0 ? simpact::PlasticSolver::kLemke : simpact::PlasticSolver::kBoxPivoting;
      simpact::PropagativeSolver solver(parameters);
      const simpact::ImpactResult& result = solver.solve(problem);
      // 1e-8 × the speed: the tolerance of PlasticAtPileScale.LandingColumnStops.
      stops = stops && result.status == simpact::Status::kSuccess &&
              result.outcomes.at(0).velocity.cwiseAbs().maxCoeff() <= 1e-8 * column.velocity.cwiseAbs().maxCoeff();
      us[which] = 1e-3 * simpact::demos::median_call_ns([&] { solver.solve(problem); }, batches, min_batch_ns);
    }
    all_correct = all_correct && stops;
    std::printf("%8d %10d %14.1f %14.1f %8s\n", boxes, problem.contacts(), us[0], us[1], stops ? "yes" : "NO");
  }

  // The plastic LCP of a packed ball pit (scenes::ball_pit: a lattice
  // filling a box, every contact approaching at the mid-step share of
  // gravity, centres moved by up to 1 mm so the rows are nearly dependent —
  // the LCPs of docs/scaling.md, "Ball pits") by box pivoting and by the
  // sparse active-set solver, one run each (box pivoting only up to 216
  // balls: it takes seconds above). "solved": passed the 1e-9 residual;
  // "agree": both solved and their velocities agree to 1e-7 of the speed.
  std::printf("\nplastic LCP, packed ball pit, ms per resolution, one run each (box pivoting / sparse active set):\n"
              "%8s %10s %12s %8s %12s %8s %8s\n",
              "balls", "contacts", "box ms", "solved", "active ms", "solved", "agree");
  std::vector<int> pits = {3, 4, 5, 6, 8, 10};
  if (quick) pits = {3, 4};
  for (const int side : pits) {
    const simpact::ImpactProblem problem = simpact::scenes::ball_pit(side, side, 0.08, 0.05, 1e-3, 1);
    const auto timed = [&](simpact::PlasticSolver which, double& ms) {
      simpact::PropagativeParameters parameters = hot;
      parameters.plastic_solver = which;
      const auto start = std::chrono::steady_clock::now();
      simpact::ImpactResult result = simpact::resolve_plastic(problem, parameters);
      ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      return result;
    };
    double box_ms = 0.0, active_ms = 0.0;
    const bool with_box = side <= 6;
    const simpact::ImpactResult by_box = with_box ? timed(simpact::PlasticSolver::kBoxPivoting, box_ms)
                                                  : simpact::ImpactResult{};
    const simpact::ImpactResult by_active = timed(simpact::PlasticSolver::kActiveSet, active_ms);
    const bool box_ok = with_box && by_box.status == simpact::Status::kSuccess;
    const bool active_ok = by_active.status == simpact::Status::kSuccess;
    const double speed = problem.velocity.cwiseAbs().maxCoeff();
    const bool agree = box_ok && active_ok &&
                       (by_box.outcomes[0].velocity - by_active.outcomes[0].velocity).cwiseAbs().maxCoeff() <=
                           1e-7 * speed;
    if (with_box)
      std::printf("%8d %10d %12.1f %8s %12.1f %8s %8s\n", side * side * side, problem.contacts(), box_ms,
                  box_ok ? "yes" : "no", active_ms, active_ok ? "yes" : "no", box_ok && active_ok ? (agree ? "yes" : "NO") : "-");
    else
      std::printf("%8d %10d %12s %8s %12.1f %8s %8s\n", side * side * side, problem.contacts(), "-", "-", active_ms,
                  active_ok ? "yes" : "no", "-");
    all_correct = all_correct && (!(box_ok && active_ok) || agree);
  }
  return all_correct ? 0 : 1;
}
