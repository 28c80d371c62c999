#include <simpact_cli/resolve.h>

#include <Eigen/Cholesky>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>

namespace simpact::cli {
namespace {

const std::array<const char*, 3> kInertiaKeys = {"inverse_mass", "mass", "masses"};

constexpr std::array<OrderPolicy, 6> kOrderPolicies = {
    OrderPolicy::kMostNegative, OrderPolicy::kLeastNegative, OrderPolicy::kTimeOfImpact,
    OrderPolicy::kIndex,        OrderPolicy::kRandom,        OrderPolicy::kAll,
};

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

Eigen::MatrixXd invert_masses(const Eigen::VectorXd& masses) {
  for (Eigen::Index i = 0; i < masses.size(); ++i) {
    if (!(masses[i] > 0.0)) {
      throw InputError(quote("masses") + " entry " + std::to_string(i) + " must be positive (got " +
                       excerpt(masses[i]) + ")");
    }
  }
  return masses.cwiseInverse().asDiagonal();
}

Eigen::MatrixXd read_inverse_mass(const Json& input, const Extent& per_dof) {
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
  const Eigen::MatrixXd matrix = read_matrix(input, key, per_dof, per_dof);
  return key == "mass" ? invert_mass(matrix) : matrix;
}

double read_restitution(const Json& input) {
  const double restitution = read_number(input, "restitution");
  if (restitution < 0.0 || restitution > 1.0) {
    throw InputError(quote("restitution") + " must be in [0, 1] (got " + excerpt(restitution) +
                     ")");
  }
  return restitution;
}

OrderPolicy read_policy(const Json& input) {
  const std::string name = read_string(input, "policy");
  try {
    return parse_order_policy(name);
  } catch (const InvalidProblem&) {
    // Rethrown to name the key; the core's message does not know it.
    std::vector<std::string> names;
    for (const OrderPolicy policy : kOrderPolicies) names.emplace_back(to_string(policy));
    throw not_one_of("policy", names, name);
  }
}

PropagativeParameters read_propagative_parameters(const Json& input) {
  PropagativeParameters parameters;
  if (input.contains("policy")) parameters.policy = read_policy(input);
  if (parameters.policy == OrderPolicy::kTimeOfImpact && !input.contains("toi")) {
    throw InputError("policy \"time_of_impact\" needs " + quote("toi") +
                     " (one time of impact per contact)");
  }
  if (input.contains("seed")) parameters.seed = read_unsigned(input, "seed");
  if (input.contains("max_reflections")) {
    parameters.max_reflections = read_integer(input, "max_reflections", 0);
  }
  if (input.contains("enumeration_budget")) {
    parameters.enumeration_budget = read_integer(input, "enumeration_budget", 1);
  }
  return parameters;
}

Json run_propagative(const Json& input, const ImpactProblem& problem) {
  const PropagativeParameters parameters = read_propagative_parameters(input);
  return result_to_json(resolve(problem, parameters), parameters.policy == OrderPolicy::kAll);
}

Json to_json(const Eigen::VectorXd& vector) {
  return Json(std::vector<double>(vector.data(), vector.data() + vector.size()));
}

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

}  // namespace

const std::vector<std::string>& problem_keys() {
  static const std::vector<std::string> keys = {
      "inverse_mass", "mass", "masses", "normals", "velocity", "offsets", "restitution", "toi",
  };
  return keys;
}

ImpactProblem read_problem(const Json& input) {
  const Eigen::VectorXd velocity = read_vector(input, "velocity");
  const Extent per_dof{velocity.size(), "one per entry of \"velocity\""};
  const Eigen::MatrixXd normals = read_matrix(input, "normals", std::nullopt, per_dof);
  const Extent per_contact{normals.rows(), "one per row of \"normals\""};
  ImpactProblem problem =
      ImpactProblem::from_dense(read_inverse_mass(input, per_dof), normals, velocity);
  if (input.contains("offsets")) problem.offsets = read_vector(input, "offsets", per_contact);
  if (input.contains("toi")) problem.time_of_impact = read_vector(input, "toi", per_contact);
  if (input.contains("restitution")) problem.restitution = read_restitution(input);
  return problem;
}

const std::vector<Law>& laws() {
  static const std::vector<Law> all = {
      {"propagative", {"policy", "seed", "max_reflections", "enumeration_budget"}, run_propagative},
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

Json resolve_json(const Json& input) {
  require_object(input, "the input");
  const Law& law = select_law(input);
  std::vector<std::string> allowed = problem_keys();
  allowed.emplace_back("law");
  allowed.insert(allowed.end(), law.keys.begin(), law.keys.end());
  check_keys(input, allowed);
  return law.run(input, read_problem(input));
}

}  // namespace simpact::cli
