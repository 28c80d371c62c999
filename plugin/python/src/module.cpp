// simpact's Python module, the compiled half (`simpact._simpact`); the
// Python half (plugin/python/simpact/__init__.py) gives it numpy-shaped
// functions, result objects and docstrings.
//
// The laws and scenes go through the same validated JSON boundary as the
// command line (simpact_cli: resolve_json, scene_json, parse_sweep): a
// Python call and `simpact resolve`/`simpact scene` on the same document
// run the same code on the same doubles, so their results are bitwise the
// same. Documents are converted between Python objects and JSON in memory
// (numbers keep their bits; numpy arrays become nested arrays). Long work
// runs with the GIL released. Input errors (simpact_cli::InputError, the
// core's InvalidProblem) become ValueError with the message naming the key.
#include <simpact/design.h>
#include <simpact/impact_problem.h>
#include <simpact_cli/campaign.h>
#include <simpact_cli/resolve.h>
#include <simpact_cli/scene.h>
#include <simpact_cli/sweep.h>

#include <pybind11/eigen.h>
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;
using simpact::cli::Json;

namespace {

/// Python value → JSON. numpy arrays of any numeric dtype become nested
/// arrays of doubles (integers stay integers); bools stay bools.
Json to_json(const py::handle& value, int depth = 0) {
  if (depth > simpact::cli::kMaxNestingDepth) {
    throw simpact::cli::InputError("the input nests deeper than " +
                                   std::to_string(simpact::cli::kMaxNestingDepth) + " levels");
  }
  if (value.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::int_>(value)) {
    const py::int_ i = py::reinterpret_borrow<py::int_>(value);
    if (py::int_(0) <= i) return value.cast<std::uint64_t>();
    return value.cast<std::int64_t>();
  }
  if (py::isinstance<py::float_>(value)) return value.cast<double>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::dict>(value)) {
    Json object = Json::object();
    for (const auto& [key, item] : py::reinterpret_borrow<py::dict>(value)) {
      if (!py::isinstance<py::str>(key)) {
        throw simpact::cli::InputError("a key is not a string: " + py::repr(key).cast<std::string>());
      }
      object[key.cast<std::string>()] = to_json(item, depth + 1);
    }
    return object;
  }
  if (py::isinstance<py::array>(value)) {
    const py::array array = py::reinterpret_borrow<py::array>(value);
    const char kind = array.dtype().kind();
    if (array.ndim() == 0) return to_json(array.attr("item")(), depth);
    if (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b') {
      throw simpact::cli::InputError("a numpy array of dtype " + py::str(array.dtype()).cast<std::string>() +
                                     " is not numbers");
    }
    return to_json(array.attr("tolist")(), depth);
  }
  if (py::hasattr(value, "__index__") && !py::isinstance<py::sequence>(value)) {
    return to_json(value.attr("__index__")(), depth);  // numpy integer scalars
  }
  if (py::hasattr(value, "__float__") && !py::isinstance<py::sequence>(value)) {
    return to_json(py::float_(py::reinterpret_borrow<py::object>(value)), depth);
  }
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    Json array = Json::array();
    for (const py::handle item : value) array.push_back(to_json(item, depth + 1));
    return array;
  }
  throw simpact::cli::InputError("cannot read a value of type " +
                                 py::str(value.get_type().attr("__name__")).cast<std::string>());
}

bool all_numbers(const Json& array) {
  for (const Json& x : array) {
    if (!x.is_number()) return false;
  }
  return true;
}

bool all_integers(const Json& array) {
  for (const Json& x : array) {
    if (!x.is_number_integer()) return false;
  }
  return true;
}

/// JSON → Python: arrays of numbers become numpy arrays (int64 when every
/// entry is an integer, else float64), arrays of equally long such arrays
/// become 2-D arrays; everything else maps to dict, list, str, float, int,
/// bool and None.
py::object from_json(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: return py::none();
    case Json::value_t::boolean: return py::bool_(value.get<bool>());
    case Json::value_t::number_integer: return py::int_(value.get<std::int64_t>());
    case Json::value_t::number_unsigned: return py::int_(value.get<std::uint64_t>());
    case Json::value_t::number_float: return py::float_(value.get<double>());
    case Json::value_t::string: return py::str(value.get<std::string>());
    case Json::value_t::object: {
      py::dict dict;
      for (const auto& [key, item] : value.items()) dict[py::str(key)] = from_json(item);
      return dict;
    }
    case Json::value_t::array: {
      if (!value.empty() && all_numbers(value)) {
        if (all_integers(value)) {
          py::array_t<std::int64_t> out(static_cast<py::ssize_t>(value.size()));
          auto view = out.mutable_unchecked<1>();
          for (std::size_t i = 0; i < value.size(); ++i) view(py::ssize_t(i)) = value[i].get<std::int64_t>();
          return std::move(out);
        }
        py::array_t<double> out(static_cast<py::ssize_t>(value.size()));
        auto view = out.mutable_unchecked<1>();
        for (std::size_t i = 0; i < value.size(); ++i) view(py::ssize_t(i)) = value[i].get<double>();
        return std::move(out);
      }
      bool matrix = !value.empty();
      for (const Json& row : value) {
        matrix = matrix && row.is_array() && !row.empty() && row.size() == value[0].size() && all_numbers(row);
      }
      if (matrix) {
        py::array_t<double> out({static_cast<py::ssize_t>(value.size()), static_cast<py::ssize_t>(value[0].size())});
        auto view = out.mutable_unchecked<2>();
        for (std::size_t i = 0; i < value.size(); ++i) {
          for (std::size_t j = 0; j < value[i].size(); ++j) {
            view(py::ssize_t(i), py::ssize_t(j)) = value[i][j].get<double>();
          }
        }
        return std::move(out);
      }
      py::list list;
      for (const Json& item : value) list.append(from_json(item));
      return std::move(list);
    }
    default: return py::none();
  }
}

/// Runs `command` on `input` without the GIL; input errors → ValueError.
template <class Command>
py::object run_document(const py::handle& input, Command command) {
  Json document, output;
  try {
    document = to_json(input);
    {
      py::gil_scoped_release release;
      output = command(document);
      simpact::cli::require_finite_output(output);
    }
  } catch (const simpact::cli::InputError& e) {
    throw py::value_error(e.what());
  } catch (const simpact::InvalidProblem& e) {
    throw py::value_error(e.what());
  }
  return from_json(output);
}

py::dict strike_to_dict(const simpact::StrikeAnalysis& a) {
  py::dict d;
  d["inner_products"] = a.inner_products;
  d["cosines"] = a.cosines;
  d["max_abs_cosine"] = a.max_abs_cosine;
  d["indeterminacy"] = a.indeterminacy ? py::object(py::float_(*a.indeterminacy)) : py::none();
  d["outcomes"] = a.outcomes;
  d["order_spread"] = a.order_spread ? py::object(py::float_(*a.order_spread)) : py::none();
  return d;
}

simpact::ImpactProblem dense_problem(const Eigen::MatrixXd& inverse_mass, const Eigen::MatrixXd& normals,
                                     const Eigen::VectorXd& velocity) {
  if (inverse_mass.rows() != velocity.size() || inverse_mass.cols() != velocity.size()) {
    throw py::value_error("Minv must be n x n with n = len(v) = " + std::to_string(velocity.size()) + " (got " +
                          std::to_string(inverse_mass.rows()) + " x " + std::to_string(inverse_mass.cols()) + ")");
  }
  if (normals.cols() != velocity.size()) {
    throw py::value_error("J must have len(v) = " + std::to_string(velocity.size()) + " columns (got " +
                          std::to_string(normals.cols()) + ")");
  }
  simpact::ImpactProblem problem = simpact::ImpactProblem::from_dense(inverse_mass, normals, velocity);
  return problem;
}

}  // namespace

PYBIND11_MODULE(_simpact, m) {
  m.doc() = "simpact's compiled core; use the functions of the simpact package.";

  m.def("resolve_document", [](const py::object& doc) { return run_document(doc, simpact::cli::resolve_json); },
        "`simpact resolve` on a document (dict): the output document, numbers as numpy arrays.");
  m.def("scene_document",
        [](const py::object& doc) {
          return run_document(doc, [](const Json& d) { return simpact::cli::scene_json(d); });
        },
        "`simpact scene` on a document (dict): the output document, numbers as numpy arrays.");
  m.def(
      "sweep_document",
      [](const py::object& doc, const std::string& folder, int threads) {
        Json document;
        simpact::cli::SweepSpec spec;
        simpact::cli::SweepResult result;
        try {
          document = to_json(doc);
          py::gil_scoped_release release;
          spec = simpact::cli::parse_sweep(document, folder);
          const simpact::cli::CampaignContext* current = simpact::cli::CampaignContext::current();
          std::optional<simpact::cli::CampaignContext> local;
          if (current == nullptr) current = &local.emplace(nullptr, nullptr);
          simpact::cli::CampaignOptions options;
          options.threads = threads > 0 ? threads : simpact::cli::default_campaign_threads();
          result = simpact::cli::run_sweep(spec, *current, options);
        } catch (const simpact::cli::InputError& e) {
          throw py::value_error(e.what());
        } catch (const simpact::InvalidProblem& e) {
          throw py::value_error(e.what());
        } catch (const simpact::cli::CampaignError& e) {
          throw py::value_error("run " + std::to_string(e.item()) + ": " + e.message());
        }
        const std::size_t outputs = spec.outputs.size();
        py::array_t<double> values({static_cast<py::ssize_t>(result.values.size()), static_cast<py::ssize_t>(outputs)});
        auto view = values.mutable_unchecked<2>();
        for (std::size_t r = 0; r < result.values.size(); ++r) {
          for (std::size_t k = 0; k < outputs; ++k) view(py::ssize_t(r), py::ssize_t(k)) = result.values[r][k];
        }
        py::list grid;
        for (std::int64_t p = 0; p < spec.grid_points(); ++p) grid.append(spec.grid_values(p));
        py::list names;
        for (const auto& axis : spec.grid) names.append(axis.name);
        py::dict out;
        out["values"] = values;
        out["outputs"] = spec.outputs;
        out["grid_names"] = names;
        out["grid_values"] = grid;
        out["samples"] = spec.samples;
        out["seed"] = spec.seed;
        out["digest"] = result.digest;
        return out;
      },
      py::arg("document"), py::arg("folder"), py::arg("threads") = 0,
      "`simpact sweep` on a document: every run's outputs and the digest.");

  m.def(
      "analyze_strike",
      [](const Eigen::MatrixXd& inverse_mass, const Eigen::MatrixXd& normals, const Eigen::VectorXd& velocity) {
        const simpact::ImpactProblem problem = dense_problem(inverse_mass, normals, velocity);
        simpact::StrikeAnalysis analysis;
        try {
          py::gil_scoped_release release;
          analysis = simpact::analyze_strike(problem);
        } catch (const simpact::InvalidProblem& e) {
          throw py::value_error(e.what());
        }
        return strike_to_dict(analysis);
      },
      py::arg("Minv"), py::arg("J"), py::arg("v"));

  m.def(
      "design_for_uniqueness",
      [](const py::function& model, const Eigen::VectorXd& initial, const std::vector<int>& free,
         const Eigen::VectorXd& scales, double length_scale, double proximity_weight, double tolerance,
         double gap_tolerance, int max_rounds, int max_evaluations) {
        simpact::DesignParameters parameters;
        parameters.free = free;
        parameters.scales = scales;
        parameters.length_scale = length_scale;
        parameters.proximity_weight = proximity_weight;
        parameters.tolerance = tolerance;
        parameters.gap_tolerance = gap_tolerance;
        parameters.max_rounds = max_rounds;
        parameters.max_evaluations = max_evaluations;
        // The model is Python: each evaluation takes the GIL back.
        const simpact::DesignModel call = [&model](const Eigen::VectorXd& x) {
          py::gil_scoped_acquire gil;
          const py::tuple point = model(x).cast<py::tuple>();
          if (point.size() != 4) {
            throw simpact::InvalidProblem("the model must return (Minv, J, v, constraints)");
          }
          simpact::DesignPoint p;
          p.problem = dense_problem(point[0].cast<Eigen::MatrixXd>(), point[1].cast<Eigen::MatrixXd>(),
                                    point[2].cast<Eigen::VectorXd>());
          p.constraints = point[3].cast<Eigen::VectorXd>();
          return p;
        };
        simpact::DesignResult result;
        try {
          py::gil_scoped_release release;
          result = simpact::design_for_uniqueness(call, initial, parameters);
        } catch (const simpact::InvalidProblem& e) {
          throw py::value_error(e.what());
        }
        py::dict out;
        out["converged"] = result.converged;
        out["message"] = result.message;
        out["parameters"] = result.parameters;
        out["initial"] = strike_to_dict(result.initial);
        out["final"] = strike_to_dict(result.final);
        out["initial_constraints"] = result.initial_constraints;
        out["final_constraints"] = result.final_constraints;
        out["rounds"] = result.rounds;
        out["evaluations"] = result.evaluations;
        return out;
      },
      py::arg("model"), py::arg("x0"), py::arg("free"), py::arg("scales"), py::arg("length_scale"),
      py::arg("proximity_weight"), py::arg("tolerance"), py::arg("gap_tolerance"), py::arg("max_rounds"),
      py::arg("max_evaluations"));
}
