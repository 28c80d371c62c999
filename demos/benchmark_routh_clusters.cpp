// Cost of one Routh impact in Bullet by cluster size, to choose
// RouthSettings::max_contacts (impact_solver.h). A column of 1–10 boxes
// (half extents 0.5 × 0.25 × 0.5 m, 1 kg, μ = 1; bullet_scenes.h box_drop)
// lands flat from 1 cm at 240 Hz under law routh with no cap, so the four
// corners of every interface form one cluster of 4 × boxes contacts. For
// each size: the wall-clock time of the step that resolves the landing
// (median, min and max over seeds; each seed is a different Routh sample),
// and how the samples ended (Lemke failures, fallbacks). Wall-clock on a
// possibly shared machine: figures are indicative; nothing is asserted but
// that the world stays finite.
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

struct Row {
  int boxes = 0, contacts = 0, impacts = 0, lcp_failed = 0, fallback = 0;
  long long lcps = 0;  // increment LCPs of every impact
  double median_ms = 0, min_ms = 0, max_ms = 0;
};

}  // namespace

int main(int argc, char** argv) {
  using namespace simpact::scenes;
  const auto options = simpact::demos::parse_benchmark_options(argc, argv, "");
  if (!options) return 2;
  const std::vector<int> sizes = options->quick ? std::vector<int>{1, 2, 3}
                                                : std::vector<int>{1, 2, 3, 4, 6, 8, 10};
  const int seeds = options->quick ? 2 : 5;
  bool finite = true;
  std::vector<Row> rows;
  for (const int boxes : sizes) {
    Row row;
    row.boxes = boxes;
    std::vector<double> times;
    for (int seed = 0; seed < seeds; ++seed) {
      WorldOptions wo;
      wo.solver = SolverKind::kSimpact;
      wo.simpact.law = simpact::bullet::ImpactLaw::kRouth;
      wo.simpact.routh.max_contacts = 1 << 20;
      wo.simpact.seed = static_cast<std::uint64_t>(seed);
      int cluster = 0;
      wo.simpact.on_impact = [&](const simpact::bullet::ImpactReport& r) {
        cluster = std::max(cluster, static_cast<int>(r.contacts.size()));
        ++row.impacts;
        row.lcps += r.lcps;
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
    rows.push_back(row);
  }

  std::printf("Routh impact step (240 Hz) by cluster size: a column of boxes landing flat, %d seeds\n",
              seeds);
  std::printf("%6s %9s %11s %9s %9s %8s %9s %11s %9s\n", "boxes", "contacts", "median ms", "min ms",
              "max ms", "impacts", "lcps/imp", "lcp_failed", "fallback");
  for (const Row& r : rows)
    std::printf("%6d %9d %11.3f %9.3f %9.3f %8d %9.1f %11d %9d\n", r.boxes, r.contacts, r.median_ms,
                r.min_ms, r.max_ms, r.impacts, r.impacts > 0 ? double(r.lcps) / r.impacts : 0.0, r.lcp_failed,
                r.fallback);
  if (!options->csv.empty()) {
    std::ofstream csv(options->csv);
    csv << "boxes,contacts,median_ms,min_ms,max_ms,impacts,lcps,lcp_failed,finished_by_fallback\n";
    for (const Row& r : rows)
      csv << r.boxes << ',' << r.contacts << ',' << r.median_ms << ',' << r.min_ms << ',' << r.max_ms << ','
          << r.impacts << ',' << r.lcps << ',' << r.lcp_failed << ',' << r.fallback << '\n';
  }
  return finite ? 0 : 1;
}
