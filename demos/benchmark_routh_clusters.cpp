// Cost of one Routh impact in Bullet by cluster size, for each increment
// solver (routh.h, "LCP solvers") and, for box pivoting, each automatic
// step rule (routh.h, "Automatic step"), to choose
// RouthSettings::max_contacts (impact_solver.h). A column of boxes (half
// extents 0.5 × 0.25 × 0.5 m, 1 kg, μ = 1; bullet_scenes.h box_drop) lands
// flat from 1 cm at 240 Hz under law routh with no cap, so the four corners
// of every interface form one cluster of 4 × boxes contacts. For each size
// and solver: the wall-clock time of the slowest step whose cluster holds
// every corner — the landing, or a later impact of the column as it settles
// (median, min and max over seeds; each seed is a different Routh sample),
// then, once the column rests (step 120), the step in which its top box,
// driven down at 1 m/s, strikes it: an impact that has to travel through
// every interface, harder than the 1 cm landing (every solver runs it; the
// table prints box pivoting's, the CSV every one's). Also LCPs per impact
// (landing, settling and strike impacts together, so not comparable with
// tables before the strike was added), increments box pivoting left to
// Lemke, and samples that failed or needed the Anitescu–Potra fallback. Lemke is run up to
// kLemkeBoxes boxes (beyond it a landing step takes seconds), and so is box
// pivoting with the single-contact step (the default above 8 contacts is
// the simultaneous one). Wall-clock on a possibly shared machine: figures
// are indicative; nothing is asserted but that the world stays finite.
//
// Usage: benchmark_routh_clusters [--quick] [--csv FILE]
#include "benchmark_options.h"

#include <simpact_scenes/bullet_scenes.h>
#include <simpact_worlds/bullet_world.h>

#include <BulletDynamics/Dynamics/btRigidBody.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using simpact::IncrementSolver;

// Lemke's landing step grows like m⁴ (docs/scaling.md): 10 boxes (40
// contacts) take over a second per seed already.
constexpr int kLemkeBoxes = 10;

struct Row {
  int boxes = 0, contacts = 0, impacts = 0, lcp_failed = 0, fallback = 0;
  long long lcps = 0, increment_fallbacks = 0;
  double median_ms = -1, min_ms = 0, max_ms = 0;
  double strike_median_ms = -1, strike_min_ms = 0, strike_max_ms = 0;  // the struck column
};

// The column rests by this step (the landing is at step ~11); the strike
// comes in the next one.
constexpr int kRestSteps = 120;
constexpr double kStrikeSpeed = 1.0;  // of the top box, downwards [m/s]

// Median, min and max of `times` (sorted in place) into the three fields.
void summarise(std::vector<double>& times, double& median, double& low, double& high) {
  if (times.empty()) return;
  std::sort(times.begin(), times.end());
  median = times[times.size() / 2];
  low = times.front();
  high = times.back();
}

Row measure(int boxes, IncrementSolver solver, simpact::AutomaticStep rule, int seeds, bool& finite) {
  using namespace simpact::scenes;
  Row row;
  row.boxes = boxes;
  std::vector<double> times, strikes;
  for (int seed = 0; seed < seeds; ++seed) {
    WorldOptions wo;
    wo.solver = SolverKind::kSimpact;
    wo.simpact.law = simpact::bullet::ImpactLaw::kRouth;
    wo.simpact.routh.max_contacts = 1 << 20;
    wo.simpact.routh.increment_solver = solver;
    wo.simpact.routh.automatic_step = rule;
    wo.simpact.seed = static_cast<std::uint64_t>(seed);
    int cluster = 0;
    wo.simpact.on_impact = [&](const simpact::bullet::ImpactReport& r) {
      cluster = std::max(cluster, static_cast<int>(r.contacts.size()));
      ++row.impacts;
      row.lcps += r.lcps;
      row.increment_fallbacks += r.increment_fallbacks;
      if (r.status == simpact::Status::kLcpFailed) ++row.lcp_failed;
      if (r.finished_by_fallback) ++row.fallback;
    };
    BulletWorld world(wo);
    BoxDropOptions drop;
    drop.half_extents = Eigen::Vector3d(0.5, 0.25, 0.5);
    drop.boxes = boxes;
    const Scene scene = box_drop(world, drop);
    // The landing step is the one whose cluster holds every corner.
    double landing = -1.0, strike = -1.0;
    for (int step = 0; step <= kRestSteps; ++step) {
      if (step == kRestSteps) scene.bodies.back()->setLinearVelocity(btVector3(0, btScalar(-kStrikeSpeed), 0));
      cluster = 0;
      const auto start = Clock::now();
      world.step(1.0 / 240.0);
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      if (cluster < 4 * boxes) continue;
      row.contacts = std::max(row.contacts, cluster);
      if (step == kRestSteps) strike = ms;
      else landing = std::max(landing, ms);
    }
    if (landing >= 0.0) times.push_back(landing);
    if (strike >= 0.0) strikes.push_back(strike);
    for (const btRigidBody* body : scene.bodies) finite = finite && std::isfinite(kinetic_energy(*body));
  }
  summarise(times, row.median_ms, row.min_ms, row.max_ms);
  summarise(strikes, row.strike_median_ms, row.strike_min_ms, row.strike_max_ms);
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  const auto options = simpact::demos::parse_benchmark_options(argc, argv, "");
  if (!options) return 2;
  const std::vector<int> sizes = options->quick ? std::vector<int>{1, 2, 3}
                                                : std::vector<int>{1, 2, 3, 4, 6, 8, 10, 12, 16, 24};
  const int seeds = options->quick ? 2 : 5;
  bool finite = true;
  using simpact::AutomaticStep;
  std::vector<Row> lemke, box, single;
  for (const int boxes : sizes) {
    const bool small = boxes <= kLemkeBoxes;
    lemke.push_back(small ? measure(boxes, IncrementSolver::kLemke, AutomaticStep::kAutomatic, seeds, finite) : Row{});
    box.push_back(measure(boxes, IncrementSolver::kBoxPivoting, AutomaticStep::kAutomatic, seeds, finite));
    single.push_back(small ? measure(boxes, IncrementSolver::kBoxPivoting, AutomaticStep::kSingleContact, seeds, finite)
                           : Row{});
  }

  std::printf("Routh landing step (240 Hz) by cluster size, a column of boxes landing flat, %d seeds;\n"
              "median [min, max] ms per increment solver with the default automatic step, and box\n"
              "pivoting with the single-contact step; speed-ups of box pivoting (default step) over\n"
              "each; the step of the resting column struck from the top at %.0f m/s (box pivoting,\n"
              "default step); LCPs per impact (default step, single-contact step); increments box\n"
              "pivoting left to Lemke; samples with a failed LCP or the Anitescu-Potra fallback (all runs)\n",
              seeds, kStrikeSpeed);
  std::printf("%5s %8s | %22s | %22s | %22s | %7s %7s | %22s | %8s %8s | %8s %6s %8s\n", "boxes", "contacts",
              "lemke ms", "box_pivoting ms", "box single-step ms", "x lemke", "x step", "struck column ms",
              "lcps/imp", "single", "to_lemke", "failed", "fallback");
  const auto cell = [](double median, double low, double high, char (&text)[64]) {
    if (median >= 0.0) std::snprintf(text, sizeof text, "%8.3f [%6.2f, %6.2f]", median, low, high);
  };
  const auto ratio = [](const Row& r, const Row& b, char (&text)[16]) {
    if (r.median_ms >= 0.0) std::snprintf(text, sizeof text, "%.1fx", r.median_ms / std::max(b.median_ms, 1e-9));
  };
  const auto per_impact = [](const Row& r) { return r.impacts > 0 ? double(r.lcps) / r.impacts : 0.0; };
  for (size_t k = 0; k < sizes.size(); ++k) {
    const Row &l = lemke[k], &b = box[k], &o = single[k];
    char lemke_text[64] = "-", box_text[64] = "-", single_text[64] = "-", strike_text[64] = "-";
    char over_lemke[16] = "-", over_single[16] = "-";
    cell(l.median_ms, l.min_ms, l.max_ms, lemke_text);
    cell(b.median_ms, b.min_ms, b.max_ms, box_text);
    cell(o.median_ms, o.min_ms, o.max_ms, single_text);
    cell(b.strike_median_ms, b.strike_min_ms, b.strike_max_ms, strike_text);
    ratio(l, b, over_lemke);
    ratio(o, b, over_single);
    std::printf("%5d %8d | %22s | %22s | %22s | %7s %7s | %22s | %8.1f %8.1f | %8lld %6d %8d\n", b.boxes,
                b.contacts, lemke_text, box_text, single_text, over_lemke, over_single, strike_text, per_impact(b),
                per_impact(o), b.increment_fallbacks + o.increment_fallbacks,
                b.lcp_failed + l.lcp_failed + o.lcp_failed, b.fallback + l.fallback + o.fallback);
  }
  if (!options->csv.empty()) {
    std::ofstream csv(options->csv);
    csv << "solver,boxes,contacts,median_ms,min_ms,max_ms,strike_median_ms,strike_min_ms,strike_max_ms,impacts,"
           "lcps,increment_fallbacks,lcp_failed,finished_by_fallback\n";
    for (size_t k = 0; k < sizes.size(); ++k)
      for (const auto& [name, r] : {std::pair{"lemke", lemke[k]}, std::pair{"box_pivoting", box[k]},
                                    std::pair{"box_pivoting_single_contact_step", single[k]}}) {
        if (r.median_ms < 0.0) continue;
        csv << name << ',' << r.boxes << ',' << r.contacts << ',' << r.median_ms << ',' << r.min_ms << ','
            << r.max_ms << ',' << r.strike_median_ms << ',' << r.strike_min_ms << ',' << r.strike_max_ms << ','
            << r.impacts << ',' << r.lcps << ',' << r.increment_fallbacks << ',' << r.lcp_failed
            << ',' << r.fallback << '\n';
      }
  }
  return finite ? 0 : 1;
}
