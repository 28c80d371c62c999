#include <simpact_cli/cli.h>

#include <simpact/impact_problem.h>
#include <simpact_cli/resolve.h>
#ifdef SIMPACT_CLI_HAS_SCENE
#include <simpact_cli/replay.h>
#include <simpact_cli/scene.h>
#include <simpact_cli/sweep.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <istream>
#include <ostream>
#include <string>
#include <system_error>

namespace simpact::cli {
namespace {

constexpr std::string_view kResolveHelp = R"(resolve input: one JSON object with the keys
  velocity             v, n numbers
  normals              J_n, m rows of n numbers; row i is contact i's normal
                       covector, J_n v > 0 separating (m may be 0: [])
  inverse_mass | mass | masses
                       exactly one: n x n inverse mass (symmetric PSD),
                       n x n mass (symmetric positive definite), or n
                       positive diagonal masses
  offsets              b_n, m numbers: u_n = J_n v + b_n       (default 0)
  law                  propagative | plastic | variational | pasquero |
                       routh | anitescu_potra | sequential
                                                     (default propagative)
A key that only another law reads is an error naming that law.
law propagative (elastic propagative impacts, Seghete & Murphey 2014):
  restitution          R in [0, 1]                             (default 1)
  policy               most_negative | least_negative | time_of_impact |
                       index | random | all        (default most_negative)
  toi                  m times of impact; required by time_of_impact
  seed                 integer >= 0, for policy random
  max_reflections      integer >= 0; 0 = automatic cap
  enumeration_budget   integer >= 1; total reflections for policy all
law plastic: the Moreau projection; the same outcome as propagative with
  restitution 0. No further keys.
Output of both: status, message (unless success), outcomes [{velocity,
  impulses, sequence}], energy_before, energy_after, reflections,
  reflection_cap; with policy all: sequences_explored, indeterminacy.
law variational (elastic; Seghete & Murphey 2010, section III-A: v- projected
  onto the convex hull of every sequence's outcome in the kinetic metric):
  reading              projection | nearest_outcome: the definition, or
                       the text's nearest vertex     (default projection)
  max_reflections      integer >= 0; 0 = automatic cap, per sequence
  enumeration_budget   integer >= 1; total reflections over all sequences
Output: status, message (unless success), velocity, impulses, vertices
  [{velocity, impulses}], weights, on_vertex, energy_before, energy_after,
  energy_loss, sequences_explored.
law pasquero (elastic; Pasquero, section 3: the impulse Lambda times the sum of
  the struck contacts' orthogonal velocities, Lemma 3.1, repeated):
  max_iterations       integer in [0, 100000]; 0 = automatic
Output: status, message (unless success), velocity, impulses, iterations,
  involved (the contacts of each iteration), coefficients (Lambda of each),
  energy_before, energy_after.
laws routh, anitescu_potra, sequential (frictional, Halm & Posa; inelastic except routh with restitution) add:
  tangents             J_t rows of n numbers, contact by contact: one row
                       per contact (planar) or two orthonormal rows per
                       contact (3-D): rows 2i, 2i+1 belong to contact i.
                       Rows of unit contact-frame vectors, like the normal
                       rows: a row scaled by s scales that contact's mu by s
  friction             mu, m numbers >= 0, one per contact
  tangent_offsets      one number per tangents row: u_t = J_t v + b_t
                                                               (default 0)
  cone_directions      friction cone directions per contact: 2 planar,
                       3..64 in 3-D                    (default 0: 2 or 4)
law routh (Routh sampling, Halm & Posa, Algorithms 1 and 2):
  restitution          Stronge's energetic e in [0, 1], one number or one
                       per contact (routh.h, "Restitution")   (default 0)
  step                 h >= 0, normal impulse cap scale; 0 = automatic
  automatic_step_factor  > 0, h = factor * largest stopping impulse,
                       only with the automatic step             (default 2)
  automatic_step       automatic | single_contact | simultaneous: the
                       impulses the caps scale with, one contact's alone
                       or per contact its share of the simultaneous
                       impact; automatic = single_contact up to 8
                       contacts (routh.h)               (default automatic)
  max_steps            N, increments per sample in [1, 1000000]
                                                             (default 100)
  samples              M in [1, 1048576]; M > 1 prints every sample of
                       the set                                  (default 1)
  seed                 integer >= 0; sample k is the same for any threads
  sampler              uniform | low_discrepancy          (default uniform)
  increment_solver     automatic | lemke | box_pivoting: each increment
                       LCP's solver (routh.h)           (default automatic)
  threads              in [0, 1024]; 0 = every core             (default 0)
  epsilon              >= 0, final increment of Algorithm 2     (default 0)
  finish_with_anitescu_potra  true | false: finish a sample still colliding
                       after N steps with one Anitescu-Potra LCP (default true)
  trajectory           true | false: print v after every increment (one
                       sample only)                         (default false)
law anitescu_potra (simultaneous LCP, Halm & Posa, eq. (31)):
  all_solutions        true: every distinct solution; false: one (Lemke)
                                                            (default true)
  max_mode_combinations  integer >= 1; beyond it one Lemke solution
                                                      (default 1048576)
law sequential (one contact at a time, Halm & Posa, section 2.2.2):
  order                contact indices, cycled            (default 0..m-1)
  max_rounds           passes through order in [1, 1000000] (default 100)
  trajectory           true | false: print v after every impact
Output of the frictional laws: status, message (unless success), for
  routh also step (h used), samples, terminated_samples, lcps_per_sample
  (mean); outcomes [{velocity, normal_impulses, tangential_impulses,
  normal_velocities, tangential_velocities (contact frame), energy_change,
  lcps, terminated, finished_by_fallback, trajectory (if asked)}]. A routh set (samples > 1 or
  epsilon > 0) prints one outcome per sample, without tangential_impulses
  and trajectory, with colliding (still colliding at the end).
Papers: Seghete & Murphey 2014 = V. Seghete and T. D. Murphey, "A propagative
  model of simultaneous impact: existence, uniqueness, and design
  consequences", IEEE Transactions on Automation Science and Engineering
  11(1), 2014, arXiv:1709.02296. Seghete & Murphey 2010 = V. Seghete and
  T. Murphey, "Variational Solutions to Simultaneous Collisions Between
  Multiple Rigid Bodies", IEEE ICRA 2010. Pasquero = S. Pasquero, running
  title "A frame-independent approach by means of jet-bundle geometry"
  (README, Papers). Halm & Posa = M. Halm and M. Posa,
  "Set-Valued Rigid-Body Dynamics for Simultaneous, Inelastic, Frictional
  Impacts", arXiv:2103.15714.
)";

// A message from the core or from nlohmann could in principle hold a line
// break; callers of the tool rely on exactly one line per error.
std::string one_line(std::string message) {
  std::replace_if(
      message.begin(), message.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  return message;
}

int report_error(std::ostream& err, const std::string& message, int exit_code) {
  err << "error: " << one_line(message) << '\n';
  return exit_code;
}

int usage_error(std::ostream& err, const std::string& message) {
  err << "simpact: " << message << "\n\n";
  print_usage(err);
  return kExitUsage;
}

const Subcommand* find_subcommand(std::string_view name) {
  const auto& table = subcommands();
  const auto found = std::find_if(table.begin(), table.end(), [name](const Subcommand& command) {
    return command.name == name;
  });
  return found == table.end() ? nullptr : &*found;
}

bool is_help(std::string_view argument) { return argument == "--help" || argument == "-h"; }

/// Runs `read` on the file at `path` (opened as binary), or reports why it
/// cannot be read.
template <class Read>
int with_file(const std::string& path, std::ostream& err, Read read) {
  std::error_code ignored;
  // An ifstream opens a directory without complaint on POSIX and then reads
  // nothing, which would surface as a confusing JSON syntax error.
  if (std::filesystem::is_directory(path, ignored)) {
    return report_error(err, "cannot read " + quote(path) + ": it is a directory", kExitInputError);
  }
  errno = 0;
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    const int error = errno;
    return report_error(err,
                        "cannot open " + quote(path) +
                            (error != 0 ? ": " + std::generic_category().message(error) : ""),
                        kExitInputError);
  }
  return read(file);
}

#ifdef SIMPACT_CLI_HAS_SCENE
/// `simpact sweep -` through the table's signature (no options).
int run_sweep_stdin(std::istream& in, std::ostream& out, std::ostream& err) {
  SweepCommand sweep;
  sweep.path = "-";
  return run_sweep_command(sweep, in, out, err);
}
#endif

int run_on_file(const Subcommand& command, const std::string& path, std::ostream& out,
                std::ostream& err) {
  return with_file(path, err, [&](std::istream& file) { return command.run(file, out, err); });
}

#ifdef SIMPACT_CLI_HAS_SCENE
/// `simpact scene FILE --html OUT`: writes the replay page (replay.h) to OUT
/// and a short JSON summary to `out`.
int run_scene_html(const std::string& path, const std::string& html, std::istream& in, std::ostream& out,
                   std::ostream& err) {
  const auto write = [&](std::istream& input) -> int {
    std::string summary;
    try {
      const Json replay = scene_replay(parse_json(input));
      std::ofstream file(html, std::ios::binary | std::ios::trunc);
      if (!file) return report_error(err, "cannot write " + quote(html), kExitOutput);
      write_replay_html(file, replay["runs"], replay["meta"]);
      if (!file.flush()) return report_error(err, "cannot write " + quote(html), kExitOutput);
      Json counts = Json::array();
      for (const Json& run_json : replay["runs"]) {
        counts.push_back({{"name", run_json["name"]},
                          {"frames", run_json["frames"]["step"].size()},
                          {"impacts", run_json["impacts"].size()}});
      }
      summary = Json{{"html", html}, {"runs", counts}, {"energy_initial", replay["meta"]["energy_initial"]},
                     {"energy_final", replay["meta"]["energy_final"]}}
                    .dump(2);
    } catch (const InputError& e) {
      return report_error(err, e.what(), kExitInputError);
    } catch (const std::exception& e) {
      return report_error(err, std::string("internal error: ") + e.what(), kExitInternal);
    }
    out << summary << '\n';
    return out.flush() ? kExitSuccess : report_error(err, "cannot write the output", kExitOutput);
  };
  return path == "-" ? write(in) : with_file(path, err, write);
}
#endif

}  // namespace

const std::vector<Subcommand>& subcommands() {
  static const std::vector<Subcommand> table = {
      {"resolve", "resolve one simultaneous impact and print every outcome", kResolveHelp,
       run_resolve},
#ifdef SIMPACT_CLI_HAS_SCENE
      {"scene", "simulate a Bullet scene (rigid bodies, multibodies on fixed or free bases) and print "
       "its final state",
       kSceneHelp, run_scene},
      {"sweep", "run a scene over a grid of values and seeds and report the distribution of chosen "
       "outputs (on any number of MPI ranks)",
       kSweepHelp, run_sweep_stdin},
#endif
  };
  return table;
}

void print_usage(std::ostream& out) {
  out << "usage: simpact <command> FILE.json\n"
#ifdef SIMPACT_CLI_HAS_SCENE
         "       simpact scene FILE.json --html OUT.html\n"
         "              runs the scene under stock Bullet and under simpact and writes\n"
         "              one self-contained page that replays both side by side, with\n"
         "              their energies and simpact's impact reports (docs/replay.md);\n"
         "              standard output gets a short JSON summary\n"
         "       simpact sweep FILE.json [--csv OUT.csv] [--svg OUT.svg] [--threads T]\n"
         "              the outcome set of a scene (below); prints a table, not JSON\n"
#endif
         "       simpact --help\n\n"
         "commands:\n";
  std::size_t width = 0;
  for (const Subcommand& command : subcommands()) width = std::max(width, command.name.size());
  for (const Subcommand& command : subcommands()) {
    out << "  " << command.name << std::string(width - command.name.size() + 4, ' ')
        << command.summary << '\n';
  }
  out << "\nFILE.json \"-\" reads standard input. The output is one JSON object on\n"
         "standard output; errors are one \"error: ...\" line on standard error\n"
         "(rows and entries counted from 0). Limits: the input is at most 16 MiB and\n"
         "nests at most 64 levels; every number lies within +-1e50 and a positive one\n"
         "is >= 1e-50 (scenes: +-1e6); resolve takes at most 100000 dofs (1000 with\n"
         "mass or inverse_mass) and 1000 contacts. A result that is not finite is an\n"
         "error, never printed.\n";
  for (const Subcommand& command : subcommands()) out << '\n' << command.help;
  out << "\nexit status: 0 the law ran (the output's \"status\" says how it ended),\n"
         "2 invalid, unreadable or out-of-bounds input (also a non-finite result),\n"
         "64 command-line error, 70 internal error (a bug: please report it),\n"
         "74 the output could not be written.\n";
}

int run(int argc, const char* const* argv, std::istream& in, std::ostream& out, std::ostream& err) {
  const std::vector<std::string_view> arguments(argv + std::min(argc, 1), argv + argc);
  if (std::any_of(arguments.begin(), arguments.end(), is_help)) {
    print_usage(out);
    return kExitSuccess;
  }
  if (arguments.empty()) return usage_error(err, "missing command");
  const Subcommand* command = find_subcommand(arguments[0]);
  if (command == nullptr) {
    return usage_error(err, "unknown command " + quote(std::string(arguments[0])));
  }
  if (arguments.size() < 2) {
    return usage_error(err, "missing FILE.json for " + std::string(command->name));
  }
  const std::string path(arguments[1]);
#ifdef SIMPACT_CLI_HAS_SCENE
  // `simpact scene FILE --html OUT`: the replay page instead of the JSON.
  if (command->name == "scene" && arguments.size() >= 3 && arguments[2] == "--html") {
    if (arguments.size() != 4) return usage_error(err, "--html takes one OUT.html");
    return run_scene_html(path, std::string(arguments[3]), in, out, err);
  }
  if (command->name == "sweep") {
    SweepCommand sweep;
    sweep.path = path;
    for (std::size_t i = 2; i < arguments.size(); i += 2) {
      const std::string flag(arguments[i]);
      if (i + 1 >= arguments.size()) return usage_error(err, flag + " needs a value");
      const std::string value(arguments[i + 1]);
      if (flag == "--csv") {
        sweep.csv = value;
      } else if (flag == "--svg") {
        sweep.svg = value;
      } else if (flag == "--threads") {
        char* end = nullptr;
        const long threads = std::strtol(value.c_str(), &end, 10);
        if (end == value.c_str() || *end != '\0' || threads < 1 || threads > 4096) {
          return usage_error(err, "--threads needs an integer in [1, 4096], got " + quote(value));
        }
        sweep.threads = static_cast<int>(threads);
      } else {
        return usage_error(err, "unknown option " + quote(flag) + " for sweep");
      }
    }
    if (path.size() > 1 && path.front() == '-') return usage_error(err, "unknown option " + quote(path));
    return run_sweep_command(sweep, in, out, err);
  }
#endif
  if (arguments.size() > 2) {
    return usage_error(err, "unexpected argument " + quote(std::string(arguments[2])));
  }
  if (path == "-") return command->run(in, out, err);
  if (path.size() > 1 && path.front() == '-') {
    return usage_error(err, "unknown option " + quote(path));
  }
  return run_on_file(*command, path, out, err);
}

int run_json_command(JsonCommand command, std::istream& in, std::ostream& out, std::ostream& err) {
  std::string text;
  try {
    // Rendered before anything is written, so a failure leaves `out` empty.
    const Json output = command(parse_json(in));
    require_finite_output(output);
    text = output.dump(2, ' ', false, Json::error_handler_t::replace);
  } catch (const InputError& e) {
    return report_error(err, e.what(), kExitInputError);
  } catch (const InvalidProblem& e) {
    return report_error(err, e.what(), kExitInputError);
  } catch (const std::exception& e) {
    return report_error(err, std::string("internal error: ") + e.what(), kExitInternal);
  }
  out << text << '\n';
  if (!out.flush()) return report_error(err, "cannot write the output", kExitOutput);
  return kExitSuccess;
}

int run_resolve(std::istream& in, std::ostream& out, std::ostream& err) {
  return run_json_command(resolve_json, in, out, err);
}

}  // namespace simpact::cli
