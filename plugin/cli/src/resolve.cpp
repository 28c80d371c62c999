#include <simpact_cli/resolve.h>

#include <simpact/frictional_reference.h>
#include <simpact/pasquero.h>
#include <simpact/variational.h>

#include <Eigen/Cholesky>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <optional>

namespace simpact::cli {
namespace {

const std::array<const char*, 3> kInertiaKeys = {"inverse_mass", "mass", "masses"};

constexpr std::array<OrderPolicy, 6> kOrderPolicies = {
    OrderPolicy::kMostNegative, OrderPolicy::kLeastNegative, OrderPolicy::kTimeOfImpact,
    OrderPolicy::kIndex,        OrderPolicy::kRandom,        OrderPolicy::kAll,
};

constexpr std::array<IncrementSolver, 3> kIncrementSolvers = {
    IncrementSolver::kAutomatic, IncrementSolver::kLemke, IncrementSolver::kBoxPivoting};
constexpr std::array<AutomaticStep, 3> kAutomaticSteps = {
    AutomaticStep::kAutomatic, AutomaticStep::kSingleContact, AutomaticStep::kSimultaneous};
constexpr std::array<ImpulseSampler, 2> kImpulseSamplers = {ImpulseSampler::kUniform,
                                                            ImpulseSampler::kLowDiscrepancy};

// input[key] as one of `choices`, by their to_string names; an InputError
// naming every choice otherwise (the core's parse errors do not know the key).
template <typename Choice, size_t N>
Choice read_choice(const Json& input, const char* key, const std::array<Choice, N>& choices) {
  const std::string name = read_string(input, key);
  std::vector<std::string> names;
  for (const Choice choice : choices) {
    if (name == to_string(choice)) return choice;
    names.emplace_back(to_string(choice));
  }
  throw not_one_of(key, names, name);
}

// Upper bounds of the integer keys that the core stores as int. Each is far
// above any sensible request and well inside int, so the conversion is exact
// and a typo (an extra digit or three) is an error rather than an hour of
// computation or an allocation failure reported as an internal error.
//
// Routh samples: a set of M samples holds (n + 3m + 3)·M doubles and prints
// as roughly 200 bytes per number-row; 2²⁰ (the size routh.h budgets for) is
// already hundreds of MB of JSON, more than a command-line tool should print.
constexpr std::int64_t kMaxSamples = std::int64_t{1} << 20;
// Routh increments per sample and sequential passes: the automatic step
// needs 2–10 LCPs and a sequential pass rarely repeats more than a few
// times; 10⁶ small LCPs already take seconds per sample.
constexpr std::int64_t kMaxSteps = 1'000'000;
constexpr std::int64_t kMaxRounds = 1'000'000;
// Problem sizes. "masses" is kept as a sparse diagonal, so its size only
// costs memory linear in n; "mass" and "inverse_mass" are dense n × n in the
// input itself and cost O(n³) to factor and to check for definiteness:
// 1000 dofs is ~1e9 flops (about a second), beyond any hand-written matrix.
// Contacts: the laws build the m × m Delassus matrix and solve LCPs in it;
// 1000 contacts is 8 MB and far beyond a hand-written impact.
constexpr Eigen::Index kMaxDofs = 100'000;
constexpr Eigen::Index kMaxDenseDofs = 1'000;
constexpr Eigen::Index kMaxContacts = 1'000;
// Work limits of the laws' own loops, each ten times the core's default
// (or far above the automatic value), so that no input keeps the tool busy
// for more than seconds to a minute:
// - reflections of the propagative law, each O(contacts): the automatic cap
//   is a small multiple of the contact count;
// - the policy-all budget (core default 10⁶ reflections);
// - Anitescu–Potra mode combinations (core default 2²⁰), each an LCP;
// - Routh LCPs: samples × max_steps, the most a set can solve (a sample
//   usually ends after 2-10). 2·10⁶ small LCPs take ~10-20 s.
constexpr std::int64_t kMaxReflections = 10'000'000;
constexpr std::int64_t kMaxEnumerationBudget = 10'000'000;
// - iterations of Pasquero's law, each up to O(contacts²) (core automatic:
//   1000 + 100 m).
constexpr std::int64_t kMaxPasqueroIterations = 100'000;
constexpr std::int64_t kMaxModeCombinations = std::int64_t{1} << 24;
constexpr std::int64_t kMaxRouthLcps = 2'000'000;
// Worker threads for a Routh set: more than any machine this runs on has
// cores; std::thread creation beyond that only costs.
constexpr std::int64_t kMaxThreads = 1024;

// ── Readers local to this command ───────────────────────────────────────────

/// An integer in [minimum, maximum] (both ≥ 0).
std::int64_t read_integer_in(const Json& object, const std::string& key, std::int64_t minimum,
                             std::int64_t maximum) {
  const Json& value = require(object, key);
  const auto out_of_range = [&]() {
    return InputError(quote(key) + " must be an integer in [" + std::to_string(minimum) + ", " +
                      std::to_string(maximum) + "] (got " + excerpt(value) + ")");
  };
  std::int64_t number = 0;
  try {
    number = read_integer(object, key, minimum);
  } catch (const InputError&) {
    throw out_of_range();
  }
  if (number > maximum) throw out_of_range();
  return number;
}

int read_int_in(const Json& object, const std::string& key, std::int64_t minimum,
                std::int64_t maximum) {
  return static_cast<int>(read_integer_in(object, key, minimum, maximum));
}

// ── The problem ─────────────────────────────────────────────────────────────

// Eigen's LLT reads only the lower triangle, so an asymmetric "mass" would be
// inverted as if it were symmetric; reject it with the core's tolerance.
void check_symmetric(const Eigen::MatrixXd& matrix, const std::string& key) {
  const double tolerance = kSymmetryTolerance * matrix.cwiseAbs().maxCoeff();
  for (Eigen::Index i = 0; i < matrix.rows(); ++i) {
    for (Eigen::Index j = i + 1; j < matrix.cols(); ++j) {
      if (std::abs(matrix(i, j) - matrix(j, i)) > tolerance) {
        throw InputError(quote(key) + " is not symmetric: entry (" + std::to_string(i) + "," +
                         std::to_string(j) + ") = " + excerpt(matrix(i, j)) + " but (" +
                         std::to_string(j) + "," + std::to_string(i) +
                         ") = " + excerpt(matrix(j, i)));
      }
    }
  }
}

Eigen::MatrixXd invert_mass(const Eigen::MatrixXd& mass) {
  if (mass.size() == 0) return mass;
  check_symmetric(mass, "mass");
  const Eigen::LLT<Eigen::MatrixXd> cholesky(mass);
  if (cholesky.info() != Eigen::Success) {
    throw InputError(quote("mass") + " is not positive definite (Cholesky factorization failed)");
  }
  const Eigen::MatrixXd inverse =
      cholesky.solve(Eigen::MatrixXd::Identity(mass.rows(), mass.cols()));
  // The solve is symmetric only up to rounding, which grows with the
  // condition number; averaging keeps an ill-conditioned "mass" from being
  // reported as an asymmetric "inverse_mass" the user never wrote.
  return 0.5 * (inverse + inverse.transpose());
}

// A sparse diagonal: expanding n masses to a dense n × n matrix would cost
// n² memory for n numbers of input.
SparseColMatrix invert_masses(const Eigen::VectorXd& masses) {
  for (Eigen::Index i = 0; i < masses.size(); ++i) {
    if (!(masses[i] > 0.0)) {
      throw InputError(quote("masses") + " entry " + std::to_string(i) + " must be positive (got " +
                       excerpt(masses[i]) + ")");
    }
    if (masses[i] < kMinPositive) {
      throw InputError(quote("masses") + " entry " + std::to_string(i) + " is too small: must be >= " +
                       excerpt(kMinPositive) + " (got " + excerpt(masses[i]) + ")");
    }
  }
  SparseColMatrix inverse(masses.size(), masses.size());
  inverse.reserve(Eigen::VectorXi::Ones(masses.size()));
  for (Eigen::Index i = 0; i < masses.size(); ++i) inverse.insert(i, i) = 1.0 / masses[i];
  inverse.makeCompressed();
  return inverse;
}

// The problem's sizes, checked before anything of their size is built.
void check_sizes(Eigen::Index dofs, Eigen::Index contacts) {
  if (dofs > kMaxDofs) {
    throw InputError(quote("velocity") + " has " + std::to_string(dofs) +
                     " entries: at most " + std::to_string(kMaxDofs) + " degrees of freedom (kMaxDofs)");
  }
  if (contacts > kMaxContacts) {
    throw InputError(quote("normals") + " has " + std::to_string(contacts) + " rows: at most " +
                     std::to_string(kMaxContacts) + " contacts (kMaxContacts)");
  }
}

SparseColMatrix read_inverse_mass(const Json& input, const Extent& per_dof) {
  std::vector<std::string> given;
  std::copy_if(kInertiaKeys.begin(), kInertiaKeys.end(), std::back_inserter(given),
               [&input](const char* key) { return input.contains(key); });
  if (given.size() != 1) {
    for (std::string& key : given) key = quote(key);
    throw InputError("give exactly one of \"inverse_mass\", \"mass\" and \"masses\" (found: " +
                     (given.empty() ? std::string("none") : join(given)) + ")");
  }
  const std::string& key = given.front();
  if (key == "masses") return invert_masses(read_vector(input, key, per_dof));
  if (per_dof.size > kMaxDenseDofs) {
    throw InputError(quote(key) + " is a dense " + std::to_string(per_dof.size) + " x " +
                     std::to_string(per_dof.size) + " matrix: at most " +
                     std::to_string(kMaxDenseDofs) +
                     " degrees of freedom with a dense matrix (kMaxDenseDofs); give \"masses\" "
                     "for a diagonal");
  }
  const Eigen::MatrixXd matrix = read_matrix(input, key, per_dof, per_dof);
  return (key == "mass" ? invert_mass(matrix) : matrix).sparseView();
}

double read_restitution(const Json& input) {
  const double restitution = read_number(input, "restitution");
  if (restitution < 0.0 || restitution > 1.0) {
    throw InputError(quote("restitution") + " must be in [0, 1] (got " + excerpt(restitution) +
                     ")");
  }
  return restitution;
}

// The row count of an array key, 0 when it is absent or not an array (its
// reader then says what is wrong).
Eigen::Index rows_of(const Json& input, const std::string& key) {
  const auto found = input.find(key);
  return found != input.end() && found->is_array() ? static_cast<Eigen::Index>(found->size()) : 0;
}

std::string plural(Eigen::Index count, const char* singular, const char* several) {
  return std::to_string(count) + " " + (count == 1 ? singular : several);
}

// "tangents": m rows (planar) or 2m rows (3-D) of n entries. The row count
// is checked first: with the wrong count, the row lengths are beside the
// point.
Eigen::MatrixXd read_tangents(const Json& input, Eigen::Index contacts, const Extent& per_dof) {
  const Json& value = require(input, "tangents");
  if (value.is_array()) {
    const auto rows = static_cast<Eigen::Index>(value.size());
    if (contacts == 0 && rows != 0) {
      throw InputError(quote("tangents") + " has " + plural(rows, "row", "rows") +
                       ", expected none (\"normals\" has no contacts)");
    }
    if (contacts > 0 && rows != contacts && rows != 2 * contacts) {
      throw InputError(quote("tangents") + " needs " + std::to_string(contacts) + " or " +
                       std::to_string(2 * contacts) + " rows for " +
                       plural(contacts, "contact", "contacts") +
                       " (one per contact in planar problems, two per contact in 3-D, "
                       "contact by contact), got " +
                       std::to_string(rows));
    }
  }
  return read_matrix(input, "tangents", std::nullopt, per_dof);
}

// d: 2 in planar problems, 3 … kMaxConeDirections in 3-D, 0 = automatic.
// Checked here, not only by the core, to say which rule applies.
int read_cone_directions(const Json& input, int tangent_dimension) {
  const std::int64_t directions =
      read_integer_in(input, "cone_directions", 0, kMaxConeDirections);
  if (tangent_dimension == 1 && directions != 0 && directions != 2) {
    throw InputError(quote("cone_directions") +
                     " must be 2 (or 0, automatic) in a planar problem, whose cone is the two "
                     "directions +t and -t (got " +
                     std::to_string(directions) + ")");
  }
  if (tangent_dimension == 2 && directions != 0 &&
      (directions < 3 || directions > kMaxConeDirections)) {
    throw InputError(quote("cone_directions") + " must be in [3, " +
                     std::to_string(kMaxConeDirections) +
                     "] (or 0, automatic: 4) in a 3-D problem (got " + std::to_string(directions) +
                     ")");
  }
  return static_cast<int>(directions);
}

// ── Laws ────────────────────────────────────────────────────────────────────

Json to_json(const Eigen::VectorXd& vector) {
  return Json(std::vector<double>(vector.data(), vector.data() + vector.size()));
}

Json column_to_json(const Eigen::MatrixXd& matrix, Eigen::Index column) {
  return to_json(matrix.col(column));
}

OrderPolicy read_policy(const Json& input) { return read_choice(input, "policy", kOrderPolicies); }

PropagativeParameters read_propagative_parameters(const Json& input) {
  PropagativeParameters parameters;
  if (input.contains("policy")) parameters.policy = read_policy(input);
  if (parameters.policy == OrderPolicy::kTimeOfImpact && !input.contains("toi")) {
    throw InputError("policy \"time_of_impact\" needs " + quote("toi") +
                     " (one time of impact per contact)");
  }
  if (input.contains("seed")) parameters.seed = read_unsigned(input, "seed");
  if (input.contains("max_reflections")) {
    parameters.max_reflections = read_integer_in(input, "max_reflections", 0, kMaxReflections);
  }
  if (input.contains("enumeration_budget")) {
    parameters.enumeration_budget =
        read_integer_in(input, "enumeration_budget", 1, kMaxEnumerationBudget);
  }
  return parameters;
}

Json run_propagative(const Json& input) {
  const ImpactProblem problem = read_problem(input);
  const PropagativeParameters parameters = read_propagative_parameters(input);
  return result_to_json(resolve(problem, parameters), parameters.policy == OrderPolicy::kAll);
}

Json run_plastic(const Json& input) {
  return result_to_json(resolve_plastic(read_problem(input)), false);
}

// The fields of a law with one outcome (variational, pasquero): status,
// message (unless success), velocity, impulses, energy_before, energy_after.
template <class Result>
Json single_outcome_json(const Result& result) {
  Json output;
  output["status"] = to_string(result.status);
  if (result.status != Status::kSuccess) output["message"] = result.message;
  output["velocity"] = to_json(result.velocity);
  output["impulses"] = to_json(result.impulses);
  output["energy_before"] = result.energy_before;
  output["energy_after"] = result.energy_after;
  return output;
}

VariationalReading read_reading(const Json& input) {
  const std::string name = read_string(input, "reading");
  for (const VariationalReading reading : {VariationalReading::kProjection, VariationalReading::kNearestOutcome})
    if (name == to_string(reading)) return reading;
  throw not_one_of("reading",
                   {to_string(VariationalReading::kProjection), to_string(VariationalReading::kNearestOutcome)},
                   name);
}

Json run_variational(const Json& input) {
  const ImpactProblem problem = read_problem(input);
  VariationalParameters parameters;
  if (input.contains("reading")) parameters.reading = read_reading(input);
  if (input.contains("max_reflections")) {
    parameters.max_reflections = read_integer_in(input, "max_reflections", 0, kMaxReflections);
  }
  if (input.contains("enumeration_budget")) {
    parameters.enumeration_budget = read_integer_in(input, "enumeration_budget", 1, kMaxEnumerationBudget);
  }
  const VariationalResult result = resolve_variational(problem, parameters);
  Json output = single_outcome_json(result);
  Json vertices = Json::array();
  for (Eigen::Index k = 0; k < result.vertices.cols(); ++k) {
    vertices.push_back({{"velocity", to_json(Eigen::VectorXd(result.vertices.col(k)))},
                        {"impulses", to_json(Eigen::VectorXd(result.vertex_impulses.col(k)))}});
  }
  output["vertices"] = std::move(vertices);
  output["weights"] = to_json(result.weights);
  output["on_vertex"] = result.on_vertex;
  output["energy_loss"] = result.energy_loss;
  output["sequences_explored"] = result.sequences_explored;
  return output;
}

Json run_pasquero(const Json& input) {
  const ImpactProblem problem = read_problem(input);
  PasqueroParameters parameters;
  if (input.contains("max_iterations")) {
    parameters.max_iterations = read_integer_in(input, "max_iterations", 0, kMaxPasqueroIterations);
  }
  const PasqueroResult result = resolve_pasquero(problem, parameters);
  Json output = single_outcome_json(result);
  output["iterations"] = result.iterations;
  output["involved"] = result.involved;
  output["coefficients"] = result.coefficients;
  return output;
}

Json run_routh(const Json& input) {
  FrictionalProblem problem = read_frictional_problem(input);
  // Stronge's energetic restitution (routh.h, "Restitution"): one e for
  // every contact, or one per contact; each in [0, 1].
  if (input.contains("restitution")) {
    const Eigen::Index m = problem.contacts();
    if (input.at("restitution").is_array()) {
      problem.restitution = read_vector(input, "restitution", Extent{m, "one per contact"});
    } else {
      problem.restitution = Eigen::VectorXd::Constant(m, read_restitution(input));
    }
    for (Eigen::Index i = 0; i < m; ++i)
      if (!(problem.restitution[i] >= 0.0 && problem.restitution[i] <= 1.0))
        throw InputError(quote("restitution") + " entry " + std::to_string(i) + " must be in [0, 1] (got " +
                         excerpt(problem.restitution[i]) + ")");
  }
  RouthParameters parameters;
  RouthSetParameters set;
  set.samples = 1;  // one sample unless asked: the CLI resolves one impact
  if (input.contains("step")) parameters.step = read_at_least_zero(input, "step");
  // The automatic step's keys, only where it is in force.
  const auto automatic_only = [&](const char* key) {
    if (!input.contains(key)) return false;
    if (parameters.step > 0.0)
      throw InputError(quote(key) + " applies only to the automatic step (\"step\" absent or 0)");
    return true;
  };
  if (automatic_only("automatic_step_factor"))
    parameters.automatic_step_factor = read_positive(input, "automatic_step_factor");
  if (automatic_only("automatic_step")) parameters.automatic_step = read_automatic_step(input);
  if (input.contains("max_steps")) {
    parameters.max_steps = read_int_in(input, "max_steps", 1, kMaxSteps);
  }
  if (input.contains("seed")) parameters.seed = read_unsigned(input, "seed");
  if (input.contains("sampler")) parameters.sampler = read_sampler(input);
  if (input.contains("increment_solver")) parameters.increment_solver = read_increment_solver(input);
  if (input.contains("finish_with_anitescu_potra")) {
    parameters.finish_with_anitescu_potra = read_bool(input, "finish_with_anitescu_potra");
  }
  if (input.contains("samples")) set.samples = read_int_in(input, "samples", 1, kMaxSamples);
  if (input.contains("threads")) set.threads = read_int_in(input, "threads", 0, kMaxThreads);
  if (input.contains("epsilon")) set.epsilon = read_at_least_zero(input, "epsilon");
  // Algorithm 2 (a set) when more than one sample or its final increment is
  // asked for; otherwise sample 0 alone, which also carries the tangential
  // impulses and, on request, the trajectory.
  if (static_cast<std::int64_t>(set.samples) * parameters.max_steps > kMaxRouthLcps) {
    throw InputError(quote("samples") + " x " + quote("max_steps") + " = " +
                     std::to_string(set.samples) + " x " + std::to_string(parameters.max_steps) +
                     " is more than " + std::to_string(kMaxRouthLcps) +
                     " LCPs (kMaxRouthLcps); lower either");
  }
  const bool as_set = set.samples > 1 || set.epsilon > 0.0;
  if (input.contains("trajectory")) {
    parameters.record_trajectory = read_bool(input, "trajectory");
    if (parameters.record_trajectory && as_set) {
      throw InputError(quote("trajectory") +
                       " needs a single sample (\"samples\" 1 and no \"epsilon\"): an outcome "
                       "set stores no trajectories");
    }
  }
  const RouthSampler sampler(problem, parameters);
  if (as_set) return routh_set_to_json(sampler.approximate(set));

  const FrictionalResult result = sampler.sample(0);
  const auto terminated =
      std::count_if(result.outcomes.begin(), result.outcomes.end(),
                    [](const FrictionalOutcome& outcome) { return outcome.terminated; });
  // The summary goes between the status and the outcomes, as in
  // routh_set_to_json.
  Json output = frictional_result_to_json(result);
  Json outcomes = std::move(output["outcomes"]);
  output.erase("outcomes");
  // h in force: the sampler's, or the simultaneous step's for a sample
  // drawn again under it (routh.h, "Automatic step").
  output["step"] = result.outcomes.empty() ? sampler.step() : result.outcomes.front().step;
  output["samples"] = 1;
  output["terminated_samples"] = terminated;
  // A double, as the mean of a set is.
  output["lcps_per_sample"] =
      result.outcomes.empty() ? 0.0 : static_cast<double>(result.outcomes.front().lcps);
  output["outcomes"] = std::move(outcomes);
  return output;
}

Json run_anitescu_potra(const Json& input) {
  const FrictionalProblem problem = read_frictional_problem(input);
  AnitescuPotraParameters parameters;
  if (input.contains("all_solutions")) {
    parameters.all_solutions = read_bool(input, "all_solutions");
  }
  if (input.contains("max_mode_combinations")) {
    parameters.max_mode_combinations =
        read_integer_in(input, "max_mode_combinations", 1, kMaxModeCombinations);
  }
  return frictional_result_to_json(solve_anitescu_potra(problem, parameters));
}

std::vector<int> read_order(const Json& input, int contacts) {
  const Json& value = require(input, "order");
  if (!value.is_array()) {
    throw InputError(quote("order") + " must be an array of contact indices (got " +
                     excerpt(value) + ")");
  }
  std::vector<int> order;
  for (std::size_t k = 0; k < value.size(); ++k) {
    const Json& entry = value[k];
    const bool integral = entry.is_number_integer() ||
                          (entry.is_number_float() &&
                           std::floor(entry.get<double>()) == entry.get<double>());
    const double index = entry.is_number() ? entry.get<double>() : -1.0;
    if (!integral || index < 0.0 || index >= static_cast<double>(contacts)) {
      const std::string range = contacts == 0
                                    ? std::string("(there are no contacts)")
                                    : "in [0, " + std::to_string(contacts - 1) + "]";
      throw InputError(quote("order") + " entry " + std::to_string(k) +
                       " must be a contact index " + range + " (got " + excerpt(entry) + ")");
    }
    order.push_back(static_cast<int>(index));
  }
  return order;
}

Json run_sequential(const Json& input) {
  const FrictionalProblem problem = read_frictional_problem(input);
  SequentialParameters parameters;
  if (input.contains("order")) parameters.order = read_order(input, problem.contacts());
  if (input.contains("max_rounds")) {
    parameters.max_rounds = read_int_in(input, "max_rounds", 1, kMaxRounds);
  }
  if (input.contains("trajectory")) parameters.record_trajectory = read_bool(input, "trajectory");
  return frictional_result_to_json(resolve_sequential(problem, parameters));
}

// ── Dispatch ────────────────────────────────────────────────────────────────

const Law& select_law(const Json& input) {
  if (!input.contains("law")) return laws().front();
  const std::string name = read_string(input, "law");
  const auto found = std::find_if(laws().begin(), laws().end(),
                                  [&name](const Law& law) { return law.name == name; });
  if (found != laws().end()) return *found;
  std::vector<std::string> names;
  for (const Law& law : laws()) names.push_back(law.name);
  throw not_one_of("law", names, name);
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Every key must be a problem key, "law" or one of the law's keys. A key
// that another law reads is named with that law, which is both the likely
// mistake (a key left over from another law's input, or a forgotten "law")
// and its fix.
void check_law_keys(const Json& input, const Law& law) {
  std::vector<std::string> allowed = problem_keys();
  allowed.emplace_back("law");
  allowed.insert(allowed.end(), law.keys.begin(), law.keys.end());
  for (const auto& item : input.items()) {
    if (contains(allowed, item.key())) continue;
    std::vector<std::string> readers;
    for (const Law& other : laws()) {
      if (contains(other.keys, item.key())) readers.push_back(other.name);
    }
    if (readers.empty()) continue;  // unknown: check_keys names it below
    throw InputError(quote(item.key()) + " applies only to law" +
                     (readers.size() == 1 ? " " : "s ") + join(readers) + ", not " +
                     quote(law.name) + (input.contains("law") ? "" : " (the default law)"));
  }
  check_keys(input, allowed);
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

ImpulseSampler read_sampler(const Json& input) { return read_choice(input, "sampler", kImpulseSamplers); }

IncrementSolver read_increment_solver(const Json& input) {
  return read_choice(input, "increment_solver", kIncrementSolvers);
}

AutomaticStep read_automatic_step(const Json& input) {
  return read_choice(input, "automatic_step", kAutomaticSteps);
}


const std::vector<std::string>& problem_keys() {
  static const std::vector<std::string> keys = {
      "inverse_mass", "mass", "masses", "normals", "velocity", "offsets",
  };
  return keys;
}

const std::vector<std::string>& frictional_problem_keys() {
  static const std::vector<std::string> keys = {
      "tangents", "friction", "tangent_offsets", "cone_directions",
  };
  return keys;
}

ImpactProblem read_problem(const Json& input) {
  const Eigen::VectorXd velocity = read_vector(input, "velocity");
  const Extent per_dof{velocity.size(), "one per entry of \"velocity\""};
  check_sizes(velocity.size(), rows_of(input, "normals"));
  const Eigen::MatrixXd normals = read_matrix(input, "normals", std::nullopt, per_dof);
  const Extent per_contact{normals.rows(), "one per row of \"normals\""};
  ImpactProblem problem;
  problem.inverse_mass = read_inverse_mass(input, per_dof);
  problem.normals = normals.sparseView();
  problem.velocity = velocity;
  if (input.contains("offsets")) problem.offsets = read_vector(input, "offsets", per_contact);
  if (input.contains("toi")) problem.time_of_impact = read_vector(input, "toi", per_contact);
  if (input.contains("restitution")) problem.restitution = read_restitution(input);
  return problem;
}

FrictionalProblem read_frictional_problem(const Json& input) {
  const Eigen::VectorXd velocity = read_vector(input, "velocity");
  const Extent per_dof{velocity.size(), "one per entry of \"velocity\""};
  check_sizes(velocity.size(), rows_of(input, "normals"));
  const Eigen::MatrixXd normals = read_matrix(input, "normals", std::nullopt, per_dof);
  const Extent per_contact{normals.rows(), "one per row of \"normals\""};
  const Eigen::MatrixXd tangents = read_tangents(input, normals.rows(), per_dof);
  const Eigen::VectorXd friction =
      read_vector(input, "friction", Extent{normals.rows(), "one per contact"});
  FrictionalProblem problem;
  problem.inverse_mass = read_inverse_mass(input, per_dof);
  problem.normals = normals.sparseView();
  problem.tangents = tangents.sparseView();
  problem.velocity = velocity;
  problem.friction = friction;
  if (input.contains("offsets")) {
    problem.normal_offsets = read_vector(input, "offsets", per_contact);
  }
  if (input.contains("tangent_offsets")) {
    problem.tangent_offsets = read_vector(input, "tangent_offsets",
                                          Extent{tangents.rows(), "one per row of \"tangents\""});
  }
  if (input.contains("cone_directions")) {
    problem.cone_directions = read_cone_directions(input, problem.tangent_dimension());
  }
  return problem;
}

const std::vector<Law>& laws() {
  static const std::vector<Law> all = {
      {"propagative",
       {"restitution", "toi", "policy", "seed", "max_reflections", "enumeration_budget"},
       run_propagative},
      {"plastic", {}, run_plastic},
      {"variational", {"reading", "max_reflections", "enumeration_budget"}, run_variational},
      {"pasquero", {"max_iterations"}, run_pasquero},
      {"routh",
       concat(frictional_problem_keys(),
              {"restitution", "step", "automatic_step_factor", "automatic_step", "max_steps", "samples", "seed", "sampler",
               "increment_solver", "threads", "epsilon", "finish_with_anitescu_potra", "trajectory"}),
       run_routh},
      {"anitescu_potra",
       concat(frictional_problem_keys(), {"all_solutions", "max_mode_combinations"}),
       run_anitescu_potra},
      {"sequential", concat(frictional_problem_keys(), {"order", "max_rounds", "trajectory"}),
       run_sequential},
  };
  return all;
}

Json result_to_json(const ImpactResult& result, bool enumerated) {
  Json output;
  output["status"] = to_string(result.status);
  if (result.status != Status::kSuccess) output["message"] = result.message;
  Json outcomes = Json::array();
  for (const Outcome& outcome : result.outcomes) {
    outcomes.push_back({{"velocity", to_json(outcome.velocity)},
                        {"impulses", to_json(outcome.impulses)},
                        {"sequence", outcome.sequence}});
  }
  output["outcomes"] = std::move(outcomes);
  output["energy_before"] = result.energy_before;
  output["energy_after"] = result.energy_after;
  output["reflections"] = result.reflections;
  output["reflection_cap"] = result.reflection_cap;
  if (enumerated) {
    output["sequences_explored"] = result.sequences_explored;
    if (result.indeterminacy) output["indeterminacy"] = *result.indeterminacy;
  }
  return output;
}

Json frictional_result_to_json(const FrictionalResult& result) {
  Json output;
  output["status"] = to_string(result.status);
  if (result.status != Status::kSuccess) output["message"] = result.message;
  Json outcomes = Json::array();
  for (const FrictionalOutcome& outcome : result.outcomes) {
    Json entry = {{"velocity", to_json(outcome.velocity)},
                  {"normal_impulses", to_json(outcome.normal_impulses)},
                  {"tangential_impulses", to_json(outcome.tangential_impulses)},
                  {"normal_velocities", to_json(outcome.normal_velocities)},
                  {"tangential_velocities", to_json(outcome.tangential_velocities)},
                  {"energy_change", outcome.energy_change},
                  {"lcps", outcome.lcps},
                  {"terminated", outcome.terminated},
                  {"finished_by_fallback", outcome.finished_by_fallback}};
    if (!outcome.trajectory.empty()) {
      Json trajectory = Json::array();
      for (const Eigen::VectorXd& velocity : outcome.trajectory) {
        trajectory.push_back(to_json(velocity));
      }
      entry["trajectory"] = std::move(trajectory);
    }
    outcomes.push_back(std::move(entry));
  }
  output["outcomes"] = std::move(outcomes);
  return output;
}

Json routh_set_to_json(const RouthOutcomeSet& set) {
  Json output;
  output["status"] = to_string(set.status);
  if (set.status != Status::kSuccess) output["message"] = set.message;
  const auto samples = static_cast<Eigen::Index>(set.lcps.size());
  output["step"] = set.step;
  output["samples"] = samples;
  output["terminated_samples"] = set.terminated_count;
  output["lcps_per_sample"] = set.mean_lcps();
  Json outcomes = Json::array();
  for (Eigen::Index k = 0; k < samples; ++k) {
    const auto index = static_cast<std::size_t>(k);
    outcomes.push_back({{"velocity", column_to_json(set.velocities, k)},
                        {"normal_impulses", column_to_json(set.normal_impulses, k)},
                        {"normal_velocities", column_to_json(set.normal_velocities, k)},
                        {"tangential_velocities", column_to_json(set.tangential_velocities, k)},
                        {"energy_change", set.energy_change[k]},
                        {"lcps", set.lcps[index]},
                        {"terminated", set.terminated[index] != 0},
                        {"colliding", set.colliding[index] != 0}});
  }
  output["outcomes"] = std::move(outcomes);
  return output;
}

Json resolve_json(const Json& input) {
  require_object(input, "the input");
  const Law& law = select_law(input);
  check_law_keys(input, law);
  return law.run(input);
}

}  // namespace simpact::cli
