// Cost of one Routh impact in Bullet by cluster size, for each increment
// solver (routh.h, "LCP solvers"), to choose RouthSettings::max_contacts
// (impact_solver.h). A column of boxes (half extents 0.5 × 0.25 × 0.5 m,
// 1 kg, μ = 1; bullet_scenes.h box_drop) lands flat from 1 cm at 240 Hz
// under law routh with no cap, so the four corners of every interface form
// one cluster of 4 × boxes contacts. For each size and solver: the
// wall-clock time of the step that resolves the landing (median, min and
// max over seeds; each seed is a different Routh sample), LCPs per impact,
// increments box pivoting left to Lemke, and samples that failed or needed
// the Anitescu–Potra fallback. Lemke is run up to kLemkeBoxes boxes (beyond
// it a landing step takes seconds). Wall-clock on a possibly shared
// machine: figures are indicative; nothing is asserted but that the world
// stays finite.
//
// Usage: benchmark_routh_clusters [--quick] [--csv FILE]
#include "benchmark_options.h"

#include <simpact_scenes/bullet_scenes.h>
#include <simpact_worlds/bullet_world.h>

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
};

Row measure(int boxes, IncrementSolver solver, int seeds, bool& finite) {
  using namespace simpact::scenes;
  Row row;
  row.boxes = boxes;
  std::vector<double> times;
  for (int seed = 0; seed < seeds; ++seed) {
    WorldOptions wo;
    wo.solver = SolverKind::kSimpact;
    wo.simpact.law = simpact::bullet::ImpactLaw::kRouth;
    wo.simpact.routh.max_contacts = 1 << 20;
    wo.simpact.routh.increment_solver = solver;
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
    double landing = -1.0;
    for (int step = 0; step < 30; ++step) {
      cluster = 0;
      const auto start = Clock::now();
      world.step(1.0 / 240.0);
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      if (cluster >= 4 * boxes) {
        landing = std::max(landing, ms);
        row.contacts = std::max(row.contacts, cluster);
      }
    }
    if (landing >= 0.0) times.push_back(landing);
    for (const btRigidBody* body : scene.bodies) finite = finite && std::isfinite(kinetic_energy(*body));
  }
  std::sort(times.begin(), times.end());
  if (!times.empty()) {
    row.median_ms = times[times.size() / 2];
    row.min_ms = times.front();
    row.max_ms = times.back();
  }
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
  std::vector<Row> lemke, box;
  for (const int boxes : sizes) {
    lemke.push_back(boxes <= kLemkeBoxes ? measure(boxes, IncrementSolver::kLemke, seeds, finite) : Row{});
    box.push_back(measure(boxes, IncrementSolver::kBoxPivoting, seeds, finite));
  }

  std::printf("Routh landing step (240 Hz) by cluster size, a column of boxes landing flat, %d seeds;\n"
              "median [min, max] ms per increment solver; LCPs per impact; increments box pivoting\n"
              "left to Lemke; samples with a failed LCP or the Anitescu-Potra fallback\n",
              seeds);
  std::printf("%5s %8s | %22s | %22s %7s | %8s %9s %7s %8s\n", "boxes", "contacts", "lemke ms", "box_pivoting ms",
              "speedup", "lcps/imp", "to_lemke", "failed", "fallback");
  for (size_t k = 0; k < sizes.size(); ++k) {
    const Row& l = lemke[k];
    const Row& b = box[k];
    char lemke_text[64] = "-", speedup[16] = "-";
    if (l.median_ms >= 0.0) {
      std::snprintf(lemke_text, sizeof lemke_text, "%8.3f [%6.2f, %6.2f]", l.median_ms, l.min_ms, l.max_ms);
      std::snprintf(speedup, sizeof speedup, "%.1fx", l.median_ms / std::max(b.median_ms, 1e-9));
    }
    std::printf("%5d %8d | %22s | %8.3f [%6.2f, %6.2f] %7s | %8.1f %9lld %7d %8d\n", b.boxes, b.contacts, lemke_text,
                b.median_ms, b.min_ms, b.max_ms, speedup, b.impacts > 0 ? double(b.lcps) / b.impacts : 0.0,
                b.increment_fallbacks, b.lcp_failed + l.lcp_failed, b.fallback + l.fallback);
  }
  if (!options->csv.empty()) {
    std::ofstream csv(options->csv);
    csv << "solver,boxes,contacts,median_ms,min_ms,max_ms,impacts,lcps,increment_fallbacks,lcp_failed,"
           "finished_by_fallback\n";
    for (size_t k = 0; k < sizes.size(); ++k)
      for (const auto& [name, r] : {std::pair{"lemke", lemke[k]}, std::pair{"box_pivoting", box[k]}}) {
        if (r.median_ms < 0.0) continue;
        csv << name << ',' << r.boxes << ',' << r.contacts << ',' << r.median_ms << ',' << r.min_ms << ','
            << r.max_ms << ',' << r.impacts << ',' << r.lcps << ',' << r.increment_fallbacks << ',' << r.lcp_failed
            << ',' << r.fallback << '\n';
      }
  }
  return finite ? 0 : 1;
}
