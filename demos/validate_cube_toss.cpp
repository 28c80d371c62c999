// validate_cube_toss — simpact against real impacts: ContactNets' cube tosses
// (Pfrommer, Halm, Posa, CoRL 2020, arXiv:2009.11193; data and licence in
// demos/data/cube_toss/). Issue #14.
//
// For every toss: the board height and the first ground impact
// (cube_toss.h), then a replay in Bullet from two frames before the impact,
// one step per frame (148 Hz), with stock SI and with each simpact law
// (propagative, routh, routh_restitution, auto). Errors against the
// recording at 1…20 frames after the impact frame: position (in the cube's
// half-width L), velocity, angular velocity, orientation.
//
// Honest figures: the tosses are split by their order in the folder —
// even positions FIT μ and e per solver, odd positions are REPORTED. The fit
// is a documented grid (μ 0.05…0.50 step 0.05, e 0…0.9 step 0.1), then a
// finer grid around the best (steps 0.0125 and 0.025), minimising the mean
// over 5, 10 and 20 frames of the median position error of sample 0. A grid
// is enough: two parameters, a non-smooth objective (medians; contact
// events switch on and off with μ and e), and every point is reported
// reproducibly.
// Set-valued laws (Routh sampling) run `--samples K` seeds per toss: the
// tables give sample 0 (what a simulation would show) and the nearest of K
// (how well the law's outcome set covers reality).
//
// Usage: validate_cube_toss [--data DIR] [--samples K] [--threads T]
//                           [--svg FILE] [--markdown] [--quick] [--html FILE [--toss N]]
//   --data DIR   folder of toss_*.csv (default: demos/data/cube_toss/tosses)
//   --samples K  seeds per toss for the set-valued laws (default 16)
//   --threads T  worker threads per rank (default: the cores, shared among the
//                ranks on this machine); results do not depend on it
// Under mpirun the fit grid, the held-out replays and the bootstrap run over
// the ranks (simpact_cli/campaign.h, docs/mpi.md); the output, with the
// digest it ends in, is the same for any number of ranks and threads.
//   --svg FILE   plot of the median position error against the horizon
//                (default validate_cube_toss.svg)
//   --markdown   also print the tables of docs/validation.md
//   --quick      8 tosses, a 3 × 3 grid, K = 4 (ctest smoke run)
//   --html FILE  instead: a replay page (docs/replay.md) of one toss, stock SI and
//                simpact (auto) with the recorded cube as a ghost; --toss N picks
//                the N-th usable toss (default 0)
//   --substeps N Bullet steps per frame (default 1, as issue #14 measured)
//   --central-differences  initial velocities from the poses (ReplayOptions)
//   --box-board  the board as a static box, not a plane (ReplayOptions)
// Exit status 0 when every replay ran, 1 on an error (message on stderr).
#include "cube_toss/cube_toss.h"

#include <simpact_cli/campaign.h>
#include <simpact_cli/progress.h>
#include <simpact_cli/replay.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace simpact::cube_toss;
namespace bullet = simpact::bullet;
namespace worlds = simpact::worlds;

constexpr int kHorizon = 20;                        // frames after the impact
constexpr std::array<int, 3> kReported = {5, 10, 20};
/// Nearest-of-K coverage: within this distance of the recorded position
/// 5 frames after the impact (issue #14's target), in L.
constexpr double kCoverage = 0.05;
constexpr int kBootstrapResamples = 2000;
constexpr std::uint64_t kBootstrapSeed = 14;

// How every replay starts and steps (set once from the options, before any
// thread starts; read-only afterwards).
ReplayOptions replay_options;
// Replays done, on rank 0's terminal only (simpact_cli/progress.h); set by
// run() for the validation, null for the page.
simpact::cli::ProgressLine* progress = nullptr;
// The job's ranks (main()) and the worker threads of each (run()).
const simpact::cli::CampaignContext* context = nullptr;
int campaign_threads = 1;
// Every campaign's merged results, in the order they ran: what the digest
// at the end covers (the same for any number of ranks and threads).
simpact::cli::Digest digest;

/// Runs job(i), i in [0, items), over the ranks and threads
/// (simpact_cli/campaign.h); the results in index order, on every rank.
/// `replays`: each item is one replay, counted on the progress line.
std::vector<std::string> campaign(std::int64_t items, const simpact::cli::CampaignJob& job, bool replays) {
  simpact::cli::CampaignOptions options;
  options.threads = campaign_threads;
  options.progress = replays ? progress : nullptr;
  std::vector<std::string> results = simpact::cli::run_campaign(*context, items, job, options);
  digest.add(results);
  return results;
}

struct Options {
  std::string data = SIMPACT_CUBE_TOSS_DIR;
  int substeps = 1;
  bool central_differences = false;
  bool box_board = false;
  int samples = 16;
  int threads = 0;
  std::string svg = "validate_cube_toss.svg";
  bool markdown = false;
  bool quick = false;
  std::string html;  ///< --html: a replay page of one toss instead of the validation
  int toss = 0;      ///< --toss: which usable toss (in file order) the page shows
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--data") o.data = value();
    else if (a == "--samples") o.samples = std::stoi(value());
    else if (a == "--threads") o.threads = std::stoi(value());
    else if (a == "--svg") o.svg = value();
    else if (a == "--markdown") o.markdown = true;
    else if (a == "--quick") o.quick = true;
    else if (a == "--substeps") o.substeps = std::stoi(value());
    else if (a == "--central-differences") o.central_differences = true;
    else if (a == "--box-board") o.box_board = true;
    else if (a == "--html") o.html = value();
    else if (a == "--toss") o.toss = std::stoi(value());
    else throw std::invalid_argument("unknown option " + a);
  }
  if (o.samples < 1) throw std::invalid_argument("--samples must be >= 1");
  if (o.threads < 0) throw std::invalid_argument("--threads must be >= 0");
  if (o.substeps < 1) throw std::invalid_argument("--substeps must be >= 1");
  if (o.toss < 0) throw std::invalid_argument("--toss must be >= 0");
  if (o.quick) o.samples = std::min(o.samples, 4);
  return o;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const double x = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(x));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (x - static_cast<double>(lo)) * (v[hi] - v[lo]);
}
double median(const std::vector<double>& v) { return quantile(v, 0.5); }

// Errors of one replay at horizons 1…kHorizon (index h − 1).
std::vector<Errors> errors_of(const Toss& toss, const Replay& r) {
  std::vector<Errors> out;
  for (int h = 1; h <= kHorizon; ++h) {
    const size_t k = static_cast<size_t>(kLeadFrames + h);
    out.push_back(compare(r.frames[k], toss.frames[static_cast<size_t>(toss.impact + h)]));
  }
  return out;
}

// A replay's errors as a campaign record, and back.
void put(simpact::cli::RecordWriter& w, const std::vector<Errors>& errors) {
  w.put(static_cast<std::int64_t>(errors.size()));
  for (const Errors& e : errors) {
    w.put(e.position).put(e.velocity).put(e.angular_velocity).put(e.orientation).put(e.vertical_velocity);
  }
}
std::vector<Errors> get_errors(simpact::cli::RecordReader& r) {
  std::vector<Errors> errors(static_cast<size_t>(r.integer()));
  for (Errors& e : errors) {
    e.position = r.real();
    e.velocity = r.real();
    e.angular_velocity = r.real();
    e.orientation = r.real();
    e.vertical_velocity = r.real();
  }
  return errors;
}

// The fit objective at each of `points`: mean over the reported horizons of
// the median position error. One campaign: item = point × toss, one replay.
std::vector<double> objectives(const std::vector<Toss>& tosses, const Solver& solver,
                               const std::vector<Parameters>& points) {
  const std::int64_t n = static_cast<std::int64_t>(tosses.size());
  const std::vector<std::string> records =
      campaign(static_cast<std::int64_t>(points.size()) * n, [&](std::int64_t item) {
        const Toss& toss = tosses[static_cast<size_t>(item % n)];
        const Parameters& p = points[static_cast<size_t>(item / n)];
        const std::vector<Errors> e = errors_of(toss, replay(toss, solver, p, kHorizon, 0, replay_options));
        simpact::cli::RecordWriter w;
        for (int h : kReported) w.put(e[static_cast<size_t>(h - 1)].position);
        return w.take();
      }, true);
  std::vector<double> values;
  for (size_t point = 0; point < points.size(); ++point) {
    std::vector<std::vector<double>> positions(kReported.size());
    for (std::int64_t t = 0; t < n; ++t) {
      simpact::cli::RecordReader r(records[point * static_cast<size_t>(n) + static_cast<size_t>(t)]);
      for (auto& column : positions) column.push_back(r.real());
    }
    double sum = 0.0;
    for (const auto& column : positions) sum += median(column);
    values.push_back(sum / static_cast<double>(kReported.size()));
  }
  return values;
}

struct Fit {
  Parameters parameters;
  double objective = INFINITY;
  int evaluations = 0;
};

Fit fit(const std::vector<Toss>& tosses, const Solver& solver, bool quick) {
  Fit best;
  // Grid points in order; the first of equal objectives wins, as before.
  const auto consider = [&](const std::vector<Parameters>& points) {
    const std::vector<double> values = objectives(tosses, solver, points);
    for (size_t k = 0; k < points.size(); ++k) {
      ++best.evaluations;
      if (values[k] < best.objective) {
        best.objective = values[k];
        best.parameters = points[k];
      }
    }
  };
  std::vector<Parameters> coarse_grid;
  if (quick) {
    for (double mu : {0.1, 0.2, 0.3})
      for (double e : {0.0, 0.3, 0.6}) coarse_grid.push_back(Parameters{mu, e});
    consider(coarse_grid);
    return best;
  }
  for (int i = 1; i <= 10; ++i)
    for (int j = 0; j <= 9; ++j) coarse_grid.push_back(Parameters{0.05 * i, std::clamp(0.1 * j, 0.0, 1.0)});
  consider(coarse_grid);
  const Parameters coarse = best.parameters;
  std::vector<Parameters> fine;
  for (int i = -2; i <= 2; ++i)
    for (int j = -2; j <= 2; ++j) {
      if (i == 0 && j == 0) continue;
      const double mu = coarse.friction + 0.0125 * i, e = coarse.restitution + 0.025 * j;
      if (mu <= 0.0 || e < 0.0 || e > 1.0) continue;
      fine.push_back(Parameters{mu, e});
    }
  if (progress != nullptr) progress->add_total(static_cast<std::int64_t>(fine.size() * tosses.size()));
  consider(fine);
  return best;
}

struct Evaluation {
  std::string solver;
  bool set_valued = false;  // nearest holds the nearest of K samples
  Parameters parameters;
  std::vector<std::vector<Errors>> sample0;     // [toss][h − 1]
  std::vector<std::vector<double>> nearest;     // [toss][h − 1]: nearest-of-K position error
  std::vector<double> recorded_vz, simulated_vz;  // at kPostImpactFrames
};

// The held-out evaluation: one campaign, item = toss × sample (K samples of
// a set-valued law, else 1), one replay each; sample k is seeded k.
Evaluation evaluate(const std::vector<Toss>& tosses, const Solver& solver, const Parameters& p, int samples) {
  Evaluation ev;
  ev.solver = solver.name;
  ev.set_valued = solver.set_valued;
  ev.parameters = p;
  const size_t n = tosses.size();
  const std::int64_t k_count = solver.set_valued ? samples : 1;
  const std::vector<std::string> records =
      campaign(static_cast<std::int64_t>(n) * k_count, [&](std::int64_t item) {
        const Toss& toss = tosses[static_cast<size_t>(item / k_count)];
        const std::uint64_t k = static_cast<std::uint64_t>(item % k_count);
        const Replay r = replay(toss, solver, p, kHorizon, k, replay_options);
        simpact::cli::RecordWriter w;
        put(w, errors_of(toss, r));
        w.put(r.frames[static_cast<size_t>(kLeadFrames + kPostImpactFrames)].velocity.z());
        return w.take();
      }, true);
  for (size_t i = 0; i < n; ++i) {
    const Toss& toss = tosses[i];
    std::vector<double> best(kHorizon);
    for (std::int64_t k = 0; k < k_count; ++k) {
      simpact::cli::RecordReader r(records[i * static_cast<size_t>(k_count) + static_cast<size_t>(k)]);
      const std::vector<Errors> e = get_errors(r);
      const double simulated_vz = r.real();
      for (int h = 0; h < kHorizon; ++h) {
        const double position = e[static_cast<size_t>(h)].position;
        best[static_cast<size_t>(h)] = k == 0 ? position : std::min(best[static_cast<size_t>(h)], position);
      }
      if (k == 0) {
        ev.sample0.push_back(e);
        ev.recorded_vz.push_back(toss.frames[static_cast<size_t>(toss.impact + kPostImpactFrames)].velocity.z());
        ev.simulated_vz.push_back(simulated_vz);
      }
    }
    ev.nearest.push_back(best);
  }
  return ev;
}

std::vector<double> column(const Evaluation& ev, int h, double Errors::*field) {
  std::vector<double> v;
  for (const auto& t : ev.sample0) v.push_back(std::abs(t[static_cast<size_t>(h - 1)].*field));
  return v;
}

// Share of tosses where `a` beats `b` (strictly smaller position error at h),
// with a percentile bootstrap 95 % interval over tosses.
struct Paired {
  double share = 0, low = 0, high = 0;
};
Paired paired(const Evaluation& a, const Evaluation& b, int h) {
  const size_t n = a.sample0.size();
  std::vector<int> wins(n);
  for (size_t i = 0; i < n; ++i)
    wins[i] = a.sample0[i][static_cast<size_t>(h - 1)].position < b.sample0[i][static_cast<size_t>(h - 1)].position;
  Paired p;
  double total = 0;
  for (int w : wins) total += w;
  p.share = total / static_cast<double>(n);
  // Resample r draws from its own stream, seeded from (kBootstrapSeed, r)
  // alone: a campaign item like any replay.
  const std::vector<std::string> records = campaign(kBootstrapResamples, [&](std::int64_t r) {
    std::mt19937_64 rng(simpact::cli::item_seed(kBootstrapSeed, r));
    std::uniform_int_distribution<size_t> pick(0, n - 1);
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += wins[pick(rng)];
    return simpact::cli::RecordWriter().put(s / static_cast<double>(n)).take();
  }, false);
  std::vector<double> shares;
  for (const std::string& record : records) shares.push_back(simpact::cli::RecordReader(record).real());
  p.low = quantile(shares, 0.025);
  p.high = quantile(shares, 0.975);
  return p;
}

std::string fixed(double v, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, v);
  return buffer;
}

std::string plot(const std::vector<Evaluation>& evaluations) {
  const double left = 70, top = 40, width = 560, height = 320;
  double top_value = 0.0;
  std::vector<std::vector<double>> lines;
  for (const auto& ev : evaluations) {
    std::vector<double> line;
    for (int h = 1; h <= kHorizon; ++h) line.push_back(median(column(ev, h, &Errors::position)));
    top_value = std::max(top_value, *std::max_element(line.begin(), line.end()));
    lines.push_back(line);
  }
  top_value = std::ceil(top_value * 10.0) / 10.0;
  const auto x = [&](double h) { return left + (h - 1.0) / (kHorizon - 1.0) * width; };
  const auto y = [&](double v) { return top + height - v / top_value * height; };
  const char* colours[] = {"#444444", "#1f77b4", "#2ca02c", "#d62728", "#ff7f0e", "#9467bd"};
  const char* dashes[] = {"6,4", "", "", "", "2,3", ""};
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='820' height='420' font-family='sans-serif' font-size='13'>\n";
  svg << "<rect width='820' height='420' fill='white'/>\n";
  svg << "<text x='" << left << "' y='24' font-weight='bold'>Real cube tosses, held-out half: median position error after the first impact</text>\n";
  svg << "<rect x='" << left << "' y='" << top << "' width='" << width << "' height='" << height
      << "' fill='none' stroke='#999'/>\n";
  for (int h = 1; h <= kHorizon; h += (h == 1 ? 4 : 5)) {
    svg << "<line x1='" << x(h) << "' y1='" << top << "' x2='" << x(h) << "' y2='" << top + height
        << "' stroke='#eee'/>\n<text x='" << x(h) << "' y='" << top + height + 18 << "' text-anchor='middle'>" << h
        << "</text>\n";
  }
  for (int i = 0; i <= 5; ++i) {
    const double v = top_value * i / 5.0;
    svg << "<line x1='" << left << "' y1='" << y(v) << "' x2='" << left + width << "' y2='" << y(v)
        << "' stroke='#eee'/>\n<text x='" << left - 8 << "' y='" << y(v) + 4 << "' text-anchor='end'>"
        << fixed(v, 2) << "</text>\n";
  }
  svg << "<text x='" << left + width / 2 << "' y='" << top + height + 38
      << "' text-anchor='middle'>frames after the impact frame (148 Hz)</text>\n";
  svg << "<text transform='translate(22," << top + height / 2
      << ") rotate(-90)' text-anchor='middle'>median |position error| / L</text>\n";
  for (size_t s = 0; s < lines.size(); ++s) {
    svg << "<polyline fill='none' stroke='" << colours[s % 6] << "' stroke-width='2'";
    if (dashes[s % 6][0] != '\0') svg << " stroke-dasharray='" << dashes[s % 6] << "'";
    svg << " points='";
    for (int h = 1; h <= kHorizon; ++h) svg << fixed(x(h), 1) << "," << fixed(y(lines[s][static_cast<size_t>(h - 1)]), 1) << " ";
    svg << "'/>\n";
    const double ly = top + 16 + 20.0 * static_cast<double>(s);
    svg << "<line x1='" << left + width + 20 << "' y1='" << ly << "' x2='" << left + width + 50 << "' y2='" << ly
        << "' stroke='" << colours[s % 6] << "' stroke-width='2'";
    if (dashes[s % 6][0] != '\0') svg << " stroke-dasharray='" << dashes[s % 6] << "'";
    svg << "/>\n<text x='" << left + width + 56 << "' y='" << ly + 4 << "'>" << evaluations[s].solver << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

/// --html: toss `o.toss` (among the usable ones, in file order) replayed
/// from kLeadFrames before its impact to its last recorded frame under stock
/// SI and under simpact's law auto, with the ContactNets parameters (μ, e
/// of cube_toss.h), and the recorded cube drawn as a ghost in both views.
int write_toss_page(const Options& o) {
  std::vector<Toss> tosses;
  for (const std::string& file : toss_files(o.data)) {
    Toss t = read_toss(file);
    if (usable(t, kHorizon)) tosses.push_back(std::move(t));
  }
  if (o.toss >= static_cast<int>(tosses.size())) {
    throw std::invalid_argument("--toss " + std::to_string(o.toss) + ": there are " + std::to_string(tosses.size()) +
                                " usable tosses (0 to " + std::to_string(tosses.size() - 1) + ")");
  }
  const Toss& toss = tosses[static_cast<size_t>(o.toss)];
  const int horizon = static_cast<int>(toss.frames.size()) - 1 - toss.impact;
  simpact::cli::Json runs = simpact::cli::Json::array();
  for (const char* name : {"stock_si", "auto"}) {
    Solver solver;
    for (const Solver& s : solvers()) {
      if (s.name == name) solver = s;
    }
    std::optional<simpact::cli::ReplayRecorder> recorder;
    int frame = 0;
    const double dt = 1.0 / kFrameRate;
    replay(toss, solver, Parameters{}, horizon, 0, replay_options, [&](worlds::BulletWorld& world, int k) {
      frame = k;
      if (k == 0) {
        recorder.emplace(world.dynamics_world(), solver.name == "stock_si" ? "stock SI" : "simpact (auto)");
        if (bullet::ImpactSolver* impacts = world.impact_solver()) {
          bullet::ImpactSolverConfig config = impacts->config();
          config.on_impact = [&](const bullet::ImpactReport& report) {
            recorder->add_impact(frame + 1, (frame + 1) * dt, report);
          };
          impacts->set_config(config);
        }
      }
      recorder->record(k, k * dt, world.kinetic_energy());
    });
    runs.push_back(recorder->to_json());
  }
  // The recorded poses, frame for frame with the runs, on the cube (the last object).
  simpact::cli::Json poses = simpact::cli::Json::array();
  const int start = toss.impact - kLeadFrames;
  for (int k = 0; k <= kLeadFrames + horizon; ++k) {
    const Frame& f = toss.frames[static_cast<size_t>(start + k)];
    for (double v : {f.position.x(), f.position.y(), f.position.z(), f.orientation.x(), f.orientation.y(),
                     f.orientation.z(), f.orientation.w()}) {
      poses.push_back(v);
    }
  }
  const simpact::cli::Json meta = {
      {"title", "cube toss " + toss.name + ": stock SI and simpact (auto) against the recording (ghost)"},
      {"up", {0.0, 0.0, 1.0}},
      {"ghost", {{"object", runs[0]["objects"].size() - 1}, {"poses", std::move(poses)}}}};
  std::ofstream out(o.html, std::ios::binary | std::ios::trunc);
  simpact::cli::write_replay_html(out, runs, meta);
  if (!out.flush()) throw std::runtime_error("cannot write " + o.html);
  std::cout << "wrote " << o.html << ": " << toss.name << ", " << kLeadFrames + horizon + 1 << " frames, "
            << runs[1]["impacts"].size() << " simpact impacts\n";
  return 0;
}

int run(const Options& o) {
  replay_options.substeps = o.substeps;
  replay_options.central_differences = o.central_differences;
  replay_options.box_board = o.box_board;
  if (!o.html.empty()) return write_toss_page(o);
  campaign_threads = o.threads > 0 ? o.threads : simpact::cli::default_campaign_threads();
  std::vector<Toss> all;
  int skipped = 0;
  for (const std::string& file : toss_files(o.data)) {
    Toss t = read_toss(file);
    if (usable(t, kHorizon)) all.push_back(std::move(t));
    else ++skipped;
    if (o.quick && all.size() >= 8) break;
  }
  std::vector<Toss> fit_part, report_part;
  for (size_t i = 0; i < all.size(); ++i) (i % 2 == 0 ? fit_part : report_part).push_back(all[i]);
  std::vector<double> boards, impacts;
  for (const auto& t : all) {
    boards.push_back(t.board * 1000.0);
    impacts.push_back(t.impact);
  }
  std::cout << "validate_cube_toss: " << all.size() << " tosses usable (" << skipped
            << " without an impact frame " << kLeadFrames << "+ frames in or " << kHorizon
            << " frames after it), fit on " << fit_part.size() << ", reported on " << report_part.size()
            << "\n  board height median " << fixed(median(boards), 2) << " mm (range " << fixed(quantile(boards, 0), 2)
            << " … " << fixed(quantile(boards, 1), 2) << "); impact frame median " << median(impacts) << "\n";
  if (fit_part.empty() || report_part.empty()) throw std::runtime_error("too few usable tosses to split");

  const std::vector<Solver> list = solvers();
  std::vector<Evaluation> fitted, contactnets;
  std::vector<Fit> fits;
  // Replays known in advance: per solver the coarse grid on the fit part,
  // the fitted and the ContactNets evaluation on the held-out part (K
  // samples for set-valued laws); fit() adds its fine grid once it is known.
  std::int64_t planned = 0;
  const std::int64_t coarse_points = o.quick ? 9 : 100;
  for (const Solver& s : list) {
    planned += coarse_points * static_cast<std::int64_t>(fit_part.size()) +
               static_cast<std::int64_t>(report_part.size()) * ((s.set_valued ? o.samples : 1) + 1);
  }
  simpact::cli::ProgressOptions progress_options;
  progress_options.enabled = simpact::cli::campaign_progress_wanted(*context);
  simpact::cli::ProgressLine line("validate_cube_toss", planned, "replays", progress_options);
  progress = &line;
  for (const Solver& s : list) {
    const Fit f = fit(fit_part, s, o.quick);
    fits.push_back(f);
    line.clear_line();
    std::cout << "  fit " << s.name << ": mu " << fixed(f.parameters.friction, 4) << ", e "
              << fixed(f.parameters.restitution, 3) << " (objective " << fixed(f.objective, 4) << " L, "
              << f.evaluations << " grid points)\n";
    fitted.push_back(evaluate(report_part, s, f.parameters, o.samples));
    contactnets.push_back(evaluate(report_part, s, Parameters{}, 1));
  }
  line.finish();
  progress = nullptr;

  std::cout << "\nHeld-out tosses (" << report_part.size() << "), fitted mu and e, sample 0; median / 90th percentile:\n";
  std::ostringstream md;
  md << "| solver | μ | e | position / L at 5 · 10 · 20 frames | velocity [m/s] at 5 · 10 · 20 | angular velocity [rad/s] at 5 · 10 · 20 | orientation [°] at 5 · 10 · 20 | post-impact v_z error [m/s] | nearest of " << o.samples << " / L at 5 · 10 · 20 | within " << kCoverage << " L at 5 |\n";
  md << "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  const auto triple = [&](const Evaluation& ev, double Errors::*field, int digits) {
    std::string s;
    for (int h : kReported) {
      const auto v = column(ev, h, field);
      s += (s.empty() ? "" : " · ") + fixed(median(v), digits) + " / " + fixed(quantile(v, 0.9), digits);
    }
    return s;
  };
  for (const Evaluation& ev : fitted) {
    std::vector<double> vz;
    for (size_t i = 0; i < ev.recorded_vz.size(); ++i) vz.push_back(std::abs(ev.simulated_vz[i] - ev.recorded_vz[i]));
    std::string nearest = "—", coverage = "—";
    if (ev.set_valued) {
      nearest.clear();
      for (int h : kReported) {
        std::vector<double> v;
        for (const auto& t : ev.nearest) v.push_back(t[static_cast<size_t>(h - 1)]);
        nearest += (nearest.empty() ? "" : " · ") + fixed(median(v), 3);
      }
      int within = 0;
      for (const auto& t : ev.nearest) within += t[4] <= kCoverage;
      coverage = fixed(100.0 * within / static_cast<double>(ev.nearest.size()), 0) + " %";
    }
    md << "| " << ev.solver << " | " << fixed(ev.parameters.friction, 3) << " | " << fixed(ev.parameters.restitution, 3)
       << " | " << triple(ev, &Errors::position, 3) << " | " << triple(ev, &Errors::velocity, 3) << " | "
       << triple(ev, &Errors::angular_velocity, 2) << " | " << triple(ev, &Errors::orientation, 1) << " | "
       << fixed(median(vz), 3) << " | " << nearest << " | " << coverage << " |\n";
  }
  std::cout << md.str();

  std::vector<double> recorded_vz = fitted[0].recorded_vz;
  std::cout << "\nPost-impact v_z (" << kPostImpactFrames << " frames after the impact frame), median: recorded "
            << fixed(median(recorded_vz), 3) << " m/s";
  for (const Evaluation& ev : fitted) std::cout << ", " << ev.solver << " " << fixed(median(ev.simulated_vz), 3);
  std::cout << "\n";

  std::ostringstream pairs;
  pairs << "| solver | median position error vs stock_si at 10 · 20 frames | beats stock_si at 10 frames (95 % bootstrap) | at 20 frames | with ContactNets' μ = 0.18, e = 0.125: position / L at 10 |\n";
  pairs << "| --- | --- | --- | --- | --- |\n";
  const Evaluation& stock = fitted[0];
  for (size_t s = 0; s < fitted.size(); ++s) {
    const Evaluation& ev = fitted[s];
    std::string ratio, b10 = "—", b20 = "—";
    for (int h : {10, 20})
      ratio += (ratio.empty() ? "" : " · ") +
               fixed(median(column(ev, h, &Errors::position)) / median(column(stock, h, &Errors::position)), 2) + "×";
    if (s > 0) {
      const Paired p10 = paired(ev, stock, 10), p20 = paired(ev, stock, 20);
      b10 = fixed(100 * p10.share, 0) + " % [" + fixed(100 * p10.low, 0) + ", " + fixed(100 * p10.high, 0) + "]";
      b20 = fixed(100 * p20.share, 0) + " % [" + fixed(100 * p20.low, 0) + ", " + fixed(100 * p20.high, 0) + "]";
    }
    pairs << "| " << ev.solver << " | " << ratio << " | " << b10 << " | " << b20 << " | "
          << fixed(median(column(contactnets[s], 10, &Errors::position)), 3) << " |\n";
  }
  std::cout << "\n" << pairs.str();

  // Issue #14's targets, for the recommended law (auto).
  const Evaluation& recommended = fitted.back();
  std::vector<double> vz;
  for (size_t i = 0; i < recommended.recorded_vz.size(); ++i)
    vz.push_back(std::abs(recommended.simulated_vz[i] - recommended.recorded_vz[i]));
  int within = 0;
  for (const auto& t : recommended.nearest) within += t[4] <= kCoverage;
  const double r10 = median(column(recommended, 10, &Errors::position)) / median(column(stock, 10, &Errors::position));
  const double r20 = median(column(recommended, 20, &Errors::position)) / median(column(stock, 20, &Errors::position));
  const double cover = within / static_cast<double>(recommended.nearest.size());
  std::cout << "\nTargets (auto, held-out): position at 10 frames " << fixed(r10, 2) << "x stock (target <= 0.5: "
            << (r10 <= 0.5 ? "met" : "MISSED") << "); at 20 frames " << fixed(r20, 2) << "x (target <= 0.7: "
            << (r20 <= 0.7 ? "met" : "MISSED") << "); post-impact v_z error median " << fixed(median(vz), 3)
            << " m/s (target < 0.05: " << (median(vz) < 0.05 ? "met" : "MISSED") << "); nearest of " << o.samples
            << " within " << kCoverage << " L at 5 frames in " << fixed(100 * cover, 0) << " % (target >= 50 %: "
            << (cover >= 0.5 ? "met" : "MISSED") << ")\n";

  std::cout << "\ndigest of every replay and resample: " << digest.hex() << "\n";
  if (context->is_root()) std::ofstream(o.svg) << plot(fitted);
  std::cout << "plot: " << o.svg << "\n";
  if (o.markdown) std::cout << "\nTables for docs/validation.md:\n\n" << md.str() << "\n" << pairs.str();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // MPI when started by mpirun (docs/mpi.md); one process otherwise. Every
  // rank runs the same program; only rank 0 prints and writes.
  const simpact::cli::CampaignContext job(&argc, &argv);
  context = &job;
  if (!job.is_root()) std::cout.setstate(std::ios::failbit);
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    if (job.is_root()) std::cerr << "validate_cube_toss: " << e.what() << "\n";
    return 1;
  }
}
