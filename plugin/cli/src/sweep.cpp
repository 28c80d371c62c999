#include <simpact_cli/sweep.h>

#include <simpact/impact_problem.h>
#include <simpact_cli/campaign.h>
#include <simpact_cli/cli.h>
#include <simpact_cli/progress.h>
#include <simpact_cli/scene.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <istream>
#include <limits>
#include <optional>
#include <ostream>
#include <sstream>

namespace simpact::cli {
namespace {

Json::json_pointer pointer(const std::string& text, const std::string& where) {
  try {
    return Json::json_pointer(text);
  } catch (const std::exception&) {
    throw InputError(where + " " + quote(text) +
                     " is not a JSON pointer (it starts with \"/\", e.g. \"/bodies/0/restitution\")");
  }
}

std::vector<double> read_axis_values(const Json& axis, const std::string& where) {
  if (axis.contains("values")) {
    if (axis.contains("from") || axis.contains("to") || axis.contains("count")) {
      throw InputError(where + " has \"values\" and \"from\"/\"to\"/\"count\": give one of them");
    }
    const Eigen::VectorXd v = read_vector(axis, "values");
    if (v.size() == 0) throw InputError(where + " \"values\" is empty");
    return std::vector<double>(v.data(), v.data() + v.size());
  }
  if (!axis.contains("from") || !axis.contains("to") || !axis.contains("count")) {
    throw InputError(where + " needs \"values\", or \"from\", \"to\" and \"count\"");
  }
  const double from = read_number(axis, "from"), to = read_number(axis, "to");
  const std::int64_t count = read_integer(axis, "count", 2);
  if (count > kMaxSweepRuns) throw InputError(where + " \"count\" is above " + std::to_string(kMaxSweepRuns));
  std::vector<double> values;
  for (std::int64_t k = 0; k < count; ++k) {
    // Exact ends: from at k = 0 and to at k = count − 1.
    values.push_back(k == count - 1 ? to : from + (to - from) * double(k) / double(count - 1));
  }
  return values;
}

/// The value at `p` of `output`, a number, or an error naming the output.
double output_value(const Json& output, const Json::json_pointer& p, const std::string& text) {
  if (!output.contains(p)) {
    throw InputError("\"outputs\" " + quote(text) + " names nothing in the scene's output");
  }
  const Json& value = output.at(p);
  if (!value.is_number()) {
    throw InputError("\"outputs\" " + quote(text) + " is " + (value.is_array() ? "an array" : "not a number") +
                     " in the scene's output; name one number, e.g. " + quote(text + "/0"));
  }
  return value.get<double>();
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const double x = q * double(v.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(x));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (x - double(lo)) * (v[hi] - v[lo]);
}

struct Stats {
  double mean = 0, std = 0, min = 0, p05 = 0, median = 0, p95 = 0, max = 0;
};
/// Mean, sample standard deviation (0 for one value), quantiles by linear
/// interpolation between order statistics.
Stats stats_of(const std::vector<double>& v) {
  Stats s;
  if (v.empty()) return s;
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / double(v.size());
  double squares = 0;
  for (double x : v) squares += (x - s.mean) * (x - s.mean);
  s.std = v.size() > 1 ? std::sqrt(squares / double(v.size() - 1)) : 0.0;
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  s.p05 = quantile(v, 0.05);
  s.median = quantile(v, 0.5);
  s.p95 = quantile(v, 0.95);
  return s;
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

/// A CSV header field, quoted when it holds a comma or a quote (RFC 4180).
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

/// SVG text content: &, < and > escaped.
std::string xml(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    escaped += c == '&' ? std::string("&amp;") : c == '<' ? std::string("&lt;") : c == '>' ? std::string("&gt;") : std::string(1, c);
  }
  return escaped;
}

std::vector<double> column(const SweepResult& result, std::size_t output) {
  std::vector<double> v;
  for (const auto& run : result.values) v.push_back(run[output]);
  return v;
}

}  // namespace

std::int64_t SweepSpec::grid_points() const {
  std::int64_t points = 1;
  for (const SweepAxis& axis : grid) points *= static_cast<std::int64_t>(axis.values.size());
  return points;
}

std::vector<double> SweepSpec::grid_values(std::int64_t point) const {
  std::vector<double> values(grid.size());
  for (std::size_t a = grid.size(); a-- > 0;) {
    const auto n = static_cast<std::int64_t>(grid[a].values.size());
    values[a] = grid[a].values[static_cast<std::size_t>(point % n)];
    point /= n;
  }
  return values;
}

Json SweepSpec::run_scene(std::int64_t index) const {
  Json doc = scene;
  const std::vector<double> values = grid_values(index / samples);
  for (std::size_t a = 0; a < grid.size(); ++a) {
    for (const std::string& key : grid[a].keys) doc[Json::json_pointer(key)] = values[a];
  }
  if (set_seed) {
    if (!doc.contains("simpact")) doc["simpact"] = Json::object();
    doc["simpact"]["seed"] = seed + static_cast<std::uint64_t>(index % samples);
  }
  return doc;
}

SweepSpec parse_sweep(const Json& input, const std::filesystem::path& folder) {
  require_object(input, "the sweep");
  check_keys(input, {"scene", "scene_file", "outputs", "grid", "samples", "seed", "bins"});
  SweepSpec spec;
  if (input.contains("scene") == input.contains("scene_file")) {
    throw InputError("give exactly one of \"scene\" (a scene document) and \"scene_file\" (its path)");
  }
  if (input.contains("scene")) {
    spec.scene = input["scene"];
  } else {
    const std::filesystem::path file = folder / read_string(input, "scene_file");
    std::ifstream in(file, std::ios::binary);
    if (!in) throw InputError("\"scene_file\": cannot open " + quote(file.string()));
    try {
      spec.scene = parse_json(in);
    } catch (const InputError& e) {
      throw InputError("\"scene_file\" " + quote(file.string()) + ": " + e.what());
    }
  }
  require_object(spec.scene, "the sweep's scene");

  const Json& outputs = require(input, "outputs");
  if (!outputs.is_array() || outputs.empty() || outputs.size() > kMaxSweepOutputs) {
    throw InputError("\"outputs\" must be a list of 1 to " + std::to_string(kMaxSweepOutputs) +
                     " JSON pointers (got " + excerpt(outputs) + ")");
  }
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const std::string where = "\"outputs\" entry " + std::to_string(k);
    if (!outputs[k].is_string()) throw InputError(where + " must be a string (got " + excerpt(outputs[k]) + ")");
    pointer(outputs[k].get<std::string>(), where);
    spec.outputs.push_back(outputs[k].get<std::string>());
  }

  if (input.contains("grid")) {
    const Json& grid = input["grid"];
    if (!grid.is_array() || grid.size() > kMaxSweepAxes) {
      throw InputError("\"grid\" must be a list of at most " + std::to_string(kMaxSweepAxes) + " axes");
    }
    for (std::size_t a = 0; a < grid.size(); ++a) {
      const std::string where = "\"grid\" entry " + std::to_string(a);
      require_object(grid[a], where);
      try {
        check_keys(grid[a], {"key", "name", "values", "from", "to", "count"});
        SweepAxis axis;
        const Json& key = require(grid[a], "key");
        if (key.is_string()) {
          axis.keys.push_back(key.get<std::string>());
        } else if (key.is_array() && !key.empty() && key.size() <= 1000) {
          for (const Json& k : key) {
            if (!k.is_string()) throw InputError("\"key\" entries must be strings (got " + excerpt(k) + ")");
            axis.keys.push_back(k.get<std::string>());
          }
        } else {
          throw InputError("\"key\" must be a JSON pointer or a list of them (got " + excerpt(key) + ")");
        }
        for (const std::string& k : axis.keys) {
          pointer(k, "\"key\"");
          if (k.empty()) throw InputError("\"key\" \"\" names the whole scene, not a value in it");
        }
        if (grid[a].contains("name")) {
          axis.name = read_string(grid[a], "name");
        } else {
          for (const std::string& k : axis.keys) axis.name += (axis.name.empty() ? "" : " ") + k;
        }
        axis.values = read_axis_values(grid[a], "");
        spec.grid.push_back(std::move(axis));
      } catch (const InputError& e) {
        throw InputError(where + ": " + e.what());
      }
    }
  }
  if (input.contains("samples")) spec.samples = read_integer(input, "samples", 1);
  if (input.contains("seed")) spec.seed = read_unsigned(input, "seed");
  spec.set_seed = input.contains("seed") || spec.samples > 1;
  if (input.contains("bins")) {
    const std::int64_t bins = read_integer(input, "bins", 2);
    if (bins > 200) throw InputError("\"bins\" must be in [2, 200] (got " + std::to_string(bins) + ")");
    spec.bins = static_cast<int>(bins);
  }
  // Runs within bounds, without overflow on the way.
  double runs = double(spec.samples);
  for (const SweepAxis& axis : spec.grid) runs *= double(axis.values.size());
  if (runs > double(kMaxSweepRuns)) {
    throw InputError("the sweep has " + number(runs) + " runs (grid points x samples), more than " +
                     std::to_string(kMaxSweepRuns));
  }

  // Every grid point's scene, built with 0 steps: a value the scene rejects,
  // or an output it does not have, is named before anything runs.
  const std::int64_t points = spec.grid_points();
  std::vector<std::int64_t> checked;
  if (points <= kMaxCheckedGridPoints) {
    for (std::int64_t p = 0; p < points; ++p) checked.push_back(p);
  } else {
    checked = {0, points - 1};
  }
  for (const std::int64_t p : checked) {
    Json doc = spec.run_scene(p * spec.samples);
    doc["steps"] = 0;
    doc.erase("record");
    try {
      const Json output = scene_json(doc);
      // A recorded trajectory exists only after the steps: its outputs are
      // checked by the runs themselves.
      for (const std::string& o : spec.outputs) {
        if (o.rfind("/trajectory/", 0) != 0) output_value(output, Json::json_pointer(o), o);
      }
    } catch (const InputError& e) {
      std::string values;
      const std::vector<double> v = spec.grid_values(p);
      for (std::size_t a = 0; a < v.size(); ++a) {
        values += (a ? ", " : "") + spec.grid[a].name + " = " + number(v[a]);
      }
      throw InputError(spec.grid.empty() ? std::string(e.what())
                                         : "grid point " + std::to_string(p) + " (" + values + "): " + e.what());
    }
  }
  return spec;
}

SweepResult run_sweep(const SweepSpec& spec, const CampaignContext& context, const CampaignOptions& options) {
  std::vector<Json::json_pointer> outputs;
  for (const std::string& o : spec.outputs) outputs.emplace_back(o);
  const std::vector<std::string> records = run_campaign(
      context, spec.runs(),
      [&](std::int64_t run) {
        const Json output = scene_json(spec.run_scene(run));
        std::vector<double> values;
        for (std::size_t k = 0; k < outputs.size(); ++k) {
          values.push_back(output_value(output, outputs[k], spec.outputs[k]));
        }
        return RecordWriter().put(values).take();
      },
      options);
  SweepResult result;
  Digest digest;
  digest.add(records);
  result.digest = digest.hex();
  for (const std::string& record : records) {
    RecordReader reader(record);
    result.values.push_back(reader.reals());
  }
  return result;
}

void write_sweep_table(std::ostream& out, const SweepSpec& spec, const SweepResult& result) {
  out << "simpact sweep: " << spec.runs() << " runs = " << spec.grid_points() << " grid point(s) x "
      << spec.samples << " sample(s)";
  if (spec.set_seed) out << ", seeds " << spec.seed << ".." << spec.seed + std::uint64_t(spec.samples - 1);
  out << "\n";
  for (const SweepAxis& axis : spec.grid) {
    out << "  grid " << axis.name << ": " << axis.values.size() << " values from " << number(axis.values.front())
        << " to " << number(axis.values.back()) << "\n";
  }
  std::size_t width = 6;
  for (const std::string& o : spec.outputs) width = std::max(width, o.size());
  char line[512];
  std::snprintf(line, sizeof line, "%-*s %12s %12s %12s %12s %12s %12s %12s\n", int(width), "output", "mean",
                "std", "min", "5%", "median", "95%", "max");
  out << "\n" << line;
  for (std::size_t k = 0; k < spec.outputs.size(); ++k) {
    const Stats s = stats_of(column(result, k));
    std::snprintf(line, sizeof line, "%-*s %12.6g %12.6g %12.6g %12.6g %12.6g %12.6g %12.6g\n", int(width),
                  spec.outputs[k].c_str(), s.mean, s.std, s.min, s.p05, s.median, s.p95, s.max);
    out << line;
  }
  const std::int64_t points = spec.grid_points();
  if (!spec.grid.empty() && points <= kMaxTabulatedGridPoints) {
    out << "\nper grid point, " << (spec.samples > 1 ? "mean over its samples" : "its run") << ":\n";
    // Columns as wide as their names, two spaces apart.
    std::vector<std::string> names;
    for (const SweepAxis& axis : spec.grid) names.push_back(axis.name);
    for (const std::string& o : spec.outputs) names.push_back(o);
    auto print_row = [&](const std::vector<std::string>& cells) {
      std::string row;
      for (std::size_t c = 0; c < cells.size(); ++c) {
        const std::size_t w = std::max(names[c].size(), std::size_t{12});
        row += (c ? "  " : "") + std::string(w > cells[c].size() ? w - cells[c].size() : 0, ' ') + cells[c];
      }
      out << row << "\n";
    };
    print_row(names);
    for (std::int64_t p = 0; p < points; ++p) {
      std::vector<std::string> cells;
      for (double v : spec.grid_values(p)) cells.push_back(number(v));
      for (std::size_t k = 0; k < spec.outputs.size(); ++k) {
        double sum = 0;
        for (std::int64_t s = 0; s < spec.samples; ++s) {
          sum += result.values[static_cast<std::size_t>(p * spec.samples + s)][k];
        }
        cells.push_back(number(sum / double(spec.samples)));
      }
      print_row(cells);
    }
  }
  out << "\ndigest of every run's outputs: " << result.digest << "\n";
}

void write_sweep_csv(std::ostream& out, const SweepSpec& spec, const SweepResult& result) {
  out << "run,grid_point,sample,seed";
  for (const SweepAxis& axis : spec.grid) out << ',' << csv_field(axis.name);
  for (const std::string& o : spec.outputs) out << ',' << csv_field(o);
  out << '\n';
  char text[40];
  for (std::size_t run = 0; run < result.values.size(); ++run) {
    const auto r = static_cast<std::int64_t>(run);
    const std::int64_t sample = r % spec.samples;
    out << run << ',' << r / spec.samples << ',' << sample << ',';
    if (spec.set_seed) out << spec.seed + static_cast<std::uint64_t>(sample);
    for (double v : spec.grid_values(r / spec.samples)) {
      std::snprintf(text, sizeof text, "%.17g", v);
      out << ',' << text;
    }
    for (double v : result.values[run]) {
      std::snprintf(text, sizeof text, "%.17g", v);
      out << ',' << text;
    }
    out << '\n';
  }
}

void write_sweep_svg(std::ostream& out, const SweepSpec& spec, const SweepResult& result) {
  constexpr double kWidth = 640, kPanel = 220, kLeft = 80, kRight = 20, kTop = 30, kBottom = 40;
  const bool against_axis = spec.grid.size() == 1 && spec.grid[0].values.size() > 1;
  const std::size_t panels = spec.outputs.size();
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kPanel * double(panels)
      << "\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  auto fmt = [](double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", v);
    return std::string(text);
  };
  for (std::size_t k = 0; k < panels; ++k) {
    const double y0 = kPanel * double(k);
    const double w = kWidth - kLeft - kRight, h = kPanel - kTop - kBottom;
    const std::vector<double> v = column(result, k);
    out << "<text x=\"" << kLeft << "\" y=\"" << fmt(y0 + 18) << "\" font-size=\"13\">" << xml(spec.outputs[k])
        << xml(against_axis ? " against " + spec.grid[0].name : std::string(" over ") + std::to_string(v.size()) + " runs")
        << "</text>\n";
    out << "<rect x=\"" << kLeft << "\" y=\"" << fmt(y0 + kTop) << "\" width=\"" << w << "\" height=\"" << h
        << "\" fill=\"none\" stroke=\"#888\"/>\n";
    double lo = *std::min_element(v.begin(), v.end()), hi = *std::max_element(v.begin(), v.end());
    if (!(hi > lo)) {
      lo -= 0.5 * std::max(1.0, std::abs(lo));
      hi = lo + std::max(1.0, std::abs(lo));
    }
    if (against_axis) {
      const std::vector<double>& xs = spec.grid[0].values;
      double xlo = *std::min_element(xs.begin(), xs.end()), xhi = *std::max_element(xs.begin(), xs.end());
      if (!(xhi > xlo)) xhi = xlo + 1;
      auto X = [&](double x) { return kLeft + w * (x - xlo) / (xhi - xlo); };
      auto Y = [&](double y) { return y0 + kTop + h * (1 - (y - lo) / (hi - lo)); };
      std::string line;
      for (std::size_t p = 0; p < xs.size(); ++p) {
        double sum = 0;
        for (std::int64_t s = 0; s < spec.samples; ++s) {
          const double y = result.values[p * static_cast<std::size_t>(spec.samples) + static_cast<std::size_t>(s)][k];
          sum += y;
          out << "<circle cx=\"" << fmt(X(xs[p])) << "\" cy=\"" << fmt(Y(y))
              << "\" r=\"2\" fill=\"#1f77b4\" fill-opacity=\"0.5\"/>\n";
        }
        line += fmt(X(xs[p])) + "," + fmt(Y(sum / double(spec.samples))) + " ";
      }
      out << "<polyline points=\"" << line << "\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.5\"/>\n";
      out << "<text x=\"" << kLeft << "\" y=\"" << fmt(y0 + kTop + h + 14) << "\">" << number(xlo) << "</text>\n"
          << "<text x=\"" << kLeft + w << "\" y=\"" << fmt(y0 + kTop + h + 14) << "\" text-anchor=\"end\">"
          << number(xhi) << "</text>\n"
          << "<text x=\"" << kLeft + w / 2 << "\" y=\"" << fmt(y0 + kTop + h + 28) << "\" text-anchor=\"middle\">"
          << xml(spec.grid[0].name) << " (dots: runs; line: mean per value)</text>\n";
    } else {
      std::vector<int> counts(static_cast<std::size_t>(spec.bins), 0);
      for (double x : v) {
        const int bin = std::clamp(static_cast<int>((x - lo) / (hi - lo) * spec.bins), 0, spec.bins - 1);
        ++counts[static_cast<std::size_t>(bin)];
      }
      const int most = *std::max_element(counts.begin(), counts.end());
      for (int b = 0; b < spec.bins; ++b) {
        const double bh = h * double(counts[static_cast<std::size_t>(b)]) / double(std::max(1, most));
        out << "<rect x=\"" << fmt(kLeft + w * b / spec.bins) << "\" y=\"" << fmt(y0 + kTop + h - bh)
            << "\" width=\"" << fmt(w / spec.bins - 1) << "\" height=\"" << fmt(bh) << "\" fill=\"#1f77b4\"/>\n";
      }
      out << "<text x=\"" << kLeft << "\" y=\"" << fmt(y0 + kTop + h + 14) << "\">" << number(lo) << "</text>\n"
          << "<text x=\"" << kLeft + w << "\" y=\"" << fmt(y0 + kTop + h + 14) << "\" text-anchor=\"end\">"
          << number(hi) << "</text>\n"
          << "<text x=\"" << kLeft - 6 << "\" y=\"" << fmt(y0 + kTop + 8) << "\" text-anchor=\"end\">" << most
          << "</text>\n";
      continue;
    }
    out << "<text x=\"" << kLeft - 6 << "\" y=\"" << fmt(y0 + kTop + 8) << "\" text-anchor=\"end\">" << number(hi)
        << "</text>\n<text x=\"" << kLeft - 6 << "\" y=\"" << fmt(y0 + kTop + h) << "\" text-anchor=\"end\">"
        << number(lo) << "</text>\n";
  }
  out << "</svg>\n";
}

int run_sweep_command(const SweepCommand& command, std::istream& in, std::ostream& out, std::ostream& err) {
  const CampaignContext* current = CampaignContext::current();
  // Tests and embedders without a context: one process.
  std::optional<CampaignContext> local;
  if (current == nullptr) {
    local.emplace(nullptr, nullptr);
    current = &*local;
  }
  const CampaignContext& context = *current;
  const bool root = context.is_root();
  auto fail = [&](const std::string& message, int code) {
    if (root) err << "error: " << message << '\n';
    return code;
  };
  SweepSpec spec;
  try {
    if (command.path == "-") {
      spec = parse_sweep(parse_json(in), std::filesystem::current_path());
    } else {
      std::ifstream file(command.path, std::ios::binary);
      if (!file || std::filesystem::is_directory(command.path)) {
        return fail("cannot open " + quote(command.path), kExitInputError);
      }
      spec = parse_sweep(parse_json(file), std::filesystem::path(command.path).parent_path());
    }
  } catch (const InputError& e) {
    return fail(e.what(), kExitInputError);
  } catch (const InvalidProblem& e) {
    return fail(e.what(), kExitInputError);
  }
  ProgressOptions progress_options;
  progress_options.enabled = campaign_progress_wanted(context);
  ProgressLine progress("simpact sweep", spec.runs(), "runs", progress_options);
  CampaignOptions options;
  options.threads = command.threads > 0 ? command.threads : default_campaign_threads();
  options.progress = &progress;
  SweepResult result;
  try {
    result = run_sweep(spec, context, options);
  } catch (const CampaignError& e) {
    progress.finish();
    const std::int64_t run = e.item();
    return fail("run " + std::to_string(run) + " (grid point " + std::to_string(run / spec.samples) +
                    ", sample " + std::to_string(run % spec.samples) + "): " + e.message(),
                kExitInputError);
  }
  progress.finish();
  if (!root) return kExitSuccess;
  for (const auto& [path, write] :
       {std::make_pair(command.csv, &write_sweep_csv), std::make_pair(command.svg, &write_sweep_svg)}) {
    if (path.empty()) continue;
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    if (file) write(file, spec, result);
    if (!file || !file.flush()) return fail("cannot write " + quote(path), kExitOutput);
  }
  std::ostringstream table;
  write_sweep_table(table, spec, result);
  out << table.str();
  if (!command.csv.empty()) out << "wrote " << command.csv << "\n";
  if (!command.svg.empty()) out << "wrote " << command.svg << "\n";
  return out.flush() ? kExitSuccess : fail("cannot write the output", kExitOutput);
}

}  // namespace simpact::cli
