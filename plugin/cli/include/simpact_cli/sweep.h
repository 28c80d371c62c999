// simpact CLI — `simpact sweep FILE.json`: the outcome set of a scene.
//
// A sweep runs one `simpact scene` document (scene.h) many times: over a
// grid of values put into the scene at JSON pointers (restitution,
// friction, a strike speed, a position…) and, per grid point, over seeded
// samples (simpact.seed = seed + k for sample k: one Routh sample per
// impact, or policy random). Of every run it keeps the chosen outputs, JSON
// pointers into the scene's output ("/bodies/2/velocity/0",
// "/energy_final"), and reports their distribution: a table of mean,
// standard deviation and quantiles, a CSV of every run, a plot, and a digest.
//
// Runs are items of a campaign (campaign.h): item i is grid point
// i / samples (row-major over the grid, the last axis fastest) and sample
// i mod samples, and depends on nothing else, so the results and the digest
// are bitwise the same for any number of MPI ranks and threads. Run k of a
// grid point is `simpact scene` on the same document with the grid values
// and simpact.seed = seed + k: any single run can be reproduced by hand.
#pragma once

#include <simpact_cli/json_input.h>

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace simpact::cli {

class CampaignContext;
struct CampaignOptions;

inline constexpr std::string_view kSweepHelp = R"(sweep input: one JSON object with the keys
  scene | scene_file   exactly one: a scene document (as for scene), or the
                       path of one (relative to the sweep file's folder)
  outputs              list of JSON pointers into the scene's output, each
                       naming a number: "/bodies/2/velocity/0",
                       "/energy_final", "/multibodies/0/joint_velocities/1"
                       (1 to 32 of them)
  grid                 list of axes (at most 8), each {"key": a JSON pointer
                       into the scene, e.g. "/bodies/1/restitution", or a
                       list of them that all take the axis' value; "name"
                       (optional, for the table; default the key); and
                       either "values": [numbers] or "from", "to", "count"
                       (count >= 2 evenly spaced values from..to)}; the runs
                       cover every combination, the last axis fastest
                                                             (default [])
  samples              integer >= 1: runs per grid point; run k sets
                       simpact.seed = seed + k (Routh laws, policy random)
                                                               (default 1)
  seed                 integer >= 0: the seed of run 0          (default 0)
  bins                 integer in [2, 200]: histogram bins of the plot (20)
  Runs (grid points x samples) are at most 1000000. Every grid point is
  checked first (its scene built, 0 steps): a value the scene rejects, or
  an output the scene's output lacks, is an error naming the grid point,
  before anything runs; outputs in a recorded "/trajectory/..." are checked
  by the runs, and a run that fails stops the sweep naming it.
  simpact sweep FILE.json [--csv OUT.csv] [--svg OUT.svg] [--threads T]
  prints a table (per output: mean, std, min, 5 %, median, 95 %, max over
  all runs, and per grid point the mean when there are at most 40 points)
  and a digest of every run's outputs; --csv writes every run, --svg plots
  each output against a single grid axis, or as a histogram. Under mpirun
  the runs spread over the ranks (docs/mpi.md); the output is the same.
)";

/// Bounds on a sweep (kSweepHelp).
inline constexpr std::int64_t kMaxSweepRuns = 1'000'000;
inline constexpr std::size_t kMaxSweepAxes = 8;
inline constexpr std::size_t kMaxSweepOutputs = 32;
/// Grid points at most this many are all checked before the runs (a
/// scene's build is ~0.1 ms); beyond, the first and last points only.
inline constexpr std::int64_t kMaxCheckedGridPoints = 10'000;
/// The table lists the mean per grid point up to this many points.
inline constexpr std::int64_t kMaxTabulatedGridPoints = 40;

struct SweepAxis {
  std::vector<std::string> keys;  ///< JSON pointers into the scene, all set to the value
  std::string name;               ///< for the table, the CSV header and the plot
  std::vector<double> values;     ///< in order
};

/// A parsed, validated sweep document.
struct SweepSpec {
  Json scene;
  std::vector<SweepAxis> grid;
  std::vector<std::string> outputs;  ///< JSON pointers into the scene's output
  std::int64_t samples = 1;
  std::uint64_t seed = 0;
  bool set_seed = false;  ///< "seed" given or samples > 1: runs set simpact.seed
  int bins = 20;

  std::int64_t grid_points() const;
  std::int64_t runs() const { return grid_points() * samples; }
  /// The scene document of run `index` (grid values and seed put in).
  Json run_scene(std::int64_t index) const;
  /// The grid values of grid point `point`, one per axis.
  std::vector<double> grid_values(std::int64_t point) const;
};

/// Reads and checks a sweep document; `folder` resolves "scene_file".
/// Throws InputError naming the key (and entry) at fault; also builds every
/// grid point's scene (0 steps) so a value the scene rejects is named here.
SweepSpec parse_sweep(const Json& input, const std::filesystem::path& folder);

struct SweepResult {
  /// values[run][output], runs in index order.
  std::vector<std::vector<double>> values;
  /// Digest (campaign.h) of every run's outputs in index order.
  std::string digest;
};

/// Runs every run of `spec` over the ranks of `context` (collective).
/// Returns the results on every rank. A run that fails (its state turned
/// non-finite, say) stops the sweep: CampaignError naming the run.
SweepResult run_sweep(const SweepSpec& spec, const CampaignContext& context, const CampaignOptions& options);

/// The table printed on standard output (kSweepHelp).
void write_sweep_table(std::ostream& out, const SweepSpec& spec, const SweepResult& result);
/// One row per run: run, grid point, sample, seed, the grid values, the outputs.
void write_sweep_csv(std::ostream& out, const SweepSpec& spec, const SweepResult& result);
/// Each output against the one grid axis (all runs as points, the mean per
/// point as a line), or, with no or several axes, its histogram.
void write_sweep_svg(std::ostream& out, const SweepSpec& spec, const SweepResult& result);

/// The command line of `simpact sweep FILE [--csv OUT] [--svg OUT] [--threads T]`.
struct SweepCommand {
  std::string path;  ///< the sweep document; "-": standard input
  std::string csv;   ///< empty: none
  std::string svg;   ///< empty: none
  int threads = 0;   ///< worker threads per rank; 0: default_campaign_threads()
};

/// The whole command; exit codes as cli.h. Only rank 0 writes (the table
/// on `out`, errors on `err`, the files).
int run_sweep_command(const SweepCommand& command, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace simpact::cli
