// compare_laws — every impact law of simpact on the same problems, side by
// side (laws/law_runs.h): the simultaneous Newton LCP a time-stepping engine
// solves (the baseline), the propagative law, the variational projection in
// both readings, Pasquero's law and Routh's (frictionless, inelastic).
//
// Problems (simpact_scenes/core_scenes.h; papers in README.md, "Papers"):
//   * touching Newton's cradles of 3 and 5 equal balls, 1 and 2 incoming;
//   * unequal-mass cradles;
//   * Seghete & Murphey 2010's two balls against a wall (§III-B), M = I and
//     the masses 1.1 and 1 where the text and the definition disagree;
//   * the billiard break of Seghete & Murphey 2014 (§VII-A), θ from 40° to
//     150°, with object balls of half the cue ball's radius and equal
//     masses (a and b touch at θ = 38.9°);
//   * Pasquero's split shot (§4 Example 2) and break shot (Example 3).
//
// Prints, per problem and law: the outcome v⁺ (the first outcome of a
// set-valued law), ΔE / E⁻, the spread ξ of the law's outcome set (— for a
// single-valued law) and the median time per impact (one outcome, as a
// simulation asks for it; — for the baseline, which is solved by brute
// force here). Writes the plot of the billiard break against θ (the shares
// of the energy before that balls a and c leave with, one line per law; the
// propagative law's two sequence outcomes and Routh's sampled range shown
// as a pair of lines and a band).
//
// Usage: compare_laws [--quick] [--markdown] [--svg FILE] [--plot-only]
//   --quick      short timings and fewer Routh samples in the table (ctest)
//   --markdown   also print the tables of docs/laws.md
//   --svg FILE   where the plot goes (default compare_laws.svg)
//   --plot-only  write the plot and nothing else (the plot does not depend
//                on --quick, so the copy in docs/laws.md can be checked)
// Exit status 0 when every law returned its own outcome (status success) on
// every problem, 1 otherwise.
#include "benchmark_timing.h"
#include "laws/law_runs.h"

#include <simpact_scenes/core_scenes.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace simpact;
using simpact::demos::LawReading;
using simpact::demos::LawRun;

constexpr double kPi = 3.14159265358979323846;

// The billiard break's balls: object balls a and b of half the cue ball's
// radius (so that θ can go down to 40°: a and b touch at 38.9°) and of the
// cue ball's mass, as on a billiard table; the cue ball at 1 m/s.
constexpr double kObjectRadius = 0.5, kCueRadius = 1.0;
constexpr double kObjectMass = 1.0, kCueMass = 1.0;
constexpr double kThetaFirst = 40.0, kThetaLast = 150.0;  // degrees
/// The plot's θ step [degrees].
constexpr double kThetaStep = 1.0;
/// Routh samples per θ in the plot (its band): 64 already reach the
/// propagative outcomes at both ends of the set to the plot's resolution.
constexpr int kPlotRouthSamples = 64;

ImpactProblem billiard(double theta_degrees) {
  return scenes::billiard_break(theta_degrees * kPi / 180.0, kObjectRadius, kObjectRadius, kCueRadius,
                                kObjectMass, kObjectMass, kCueMass, 1.0);
}

struct Problem {
  std::string name;
  ImpactProblem problem;
};

std::vector<Problem> problems() {
  std::vector<Problem> list;
  for (const int balls : {3, 5})
    for (const int incoming : {1, 2})
      list.push_back({"cradle " + std::to_string(balls) + ", " + std::to_string(incoming) + " in",
                      scenes::newtons_cradle(balls, incoming, 1.0)});
  list.push_back({"cradle m = 1, 2, 3", scenes::newtons_cradle(3, 1, 1.0, Eigen::Vector3d(1.0, 2.0, 3.0))});
  Eigen::VectorXd heavy(5);
  heavy << 2.0, 1.0, 1.0, 1.0, 1.0;
  list.push_back({"cradle m = 2, 1, 1, 1, 1", scenes::newtons_cradle(5, 1, 1.0, heavy)});
  list.push_back({"wall, m = 1, 1", scenes::two_balls_wall({1.0, 1.0}, {-1.0, -2.0})});
  list.push_back({"wall, m = 1.1, 1", scenes::two_balls_wall({1.1, 1.0}, {-1.0, -2.0})});
  for (const double theta : {40.0, 60.0, 90.0, 120.0, 150.0})
    list.push_back({"billiard θ = " + std::to_string(static_cast<int>(theta)) + "°", billiard(theta)});
  list.push_back({"split shot μ = 0", scenes::split_shot(0.0, 0.5, 1.0)});
  list.push_back({"split shot μ = 1/√3", scenes::split_shot(1.0 / std::sqrt(3.0), 0.5, 1.0)});
  list.push_back({"break shot φ = 0", scenes::break_shot(0.0, 0.5, 1.0)});
  list.push_back({"break shot φ = 30°", scenes::break_shot(kPi / 6.0, 0.5, 1.0)});
  return list;
}

std::string vector_text(const Eigen::VectorXd& v) {
  std::string text = "(";
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    char cell[32];
    const double x = std::abs(v[i]) < 5e-4 ? 0.0 : v[i];  // no "-0.000"
    std::snprintf(cell, sizeof cell, "%s%.3f", i ? ", " : "", x);
    text += cell;
  }
  return text + ")";
}

/// The table of docs/laws.md shows outcomes up to this long (the 5-ball cradles;
/// the planar problems' 6 and 8 entries would not fit a cell).
constexpr size_t kMarkdownOutcomeBytes = 40;

/// A spread below this is rounding: a set whose members differ only in the
/// last bits (Routh's samples of a unique plastic outcome reach ~1e-15).
constexpr double kSpreadRounding = 1e-12;

std::string spread_text(const LawReading& r) {
  if (!r.spread) return "—";
  char cell[32];
  std::snprintf(cell, sizeof cell, "%.3g (%d)", *r.spread < kSpreadRounding ? 0.0 : *r.spread, r.outcomes);
  return cell;
}

double relative_energy_change(const LawReading& r) {
  return r.energy_before > 0.0 ? (r.energy_after - r.energy_before) / r.energy_before : 0.0;
}

std::string energy_text(const LawReading& r) {
  char cell[32];
  const double change = relative_energy_change(r);
  std::snprintf(cell, sizeof cell, "%+.2f %%", std::abs(change) < 5e-15 ? 0.0 : 100.0 * change);
  return cell;
}

/// `text` left-aligned in `width` columns, counting UTF-8 code points (the
/// names carry °, √, μ, φ), not bytes as printf's field width does.
std::string pad(const std::string& text, size_t width, bool right = false) {
  size_t columns = 0;
  for (const char c : text) columns += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  const std::string fill(width > columns ? width - columns : 0, ' ');
  return right ? fill + text : text + fill;
}

// ── The plot ─────────────────────────────────────────────────────────────────

/// The billiard's two scalars of an outcome: the shares of the energy
/// before that ball a and the cue ball c leave with.
struct Scalars {
  double share_a = 0.0, share_c = 0.0;
};

Scalars scalars(const ImpactProblem& problem, const Eigen::VectorXd& v) {
  const double before = demos::kinetic_energy(problem, problem.velocity);
  return {0.5 * kObjectMass * v.segment<2>(0).squaredNorm() / before,
          0.5 * kCueMass * v.segment<2>(4).squaredNorm() / before};
}

Eigen::VectorXd velocity_of(const ImpactProblem& problem, const Eigen::VectorXd& impulses) {
  return problem.velocity +
         Eigen::MatrixXd(problem.inverse_mass) * (Eigen::MatrixXd(problem.normals).transpose() * impulses);
}

/// Per law and θ: the lowest and highest value over the law's outcome set
/// (equal for a single-valued law).
struct Curve {
  std::string name, colour, dash;
  double width = 1.6;  ///< stroke [px]; wider curves are drawn first, under the others
  bool band = false;  ///< draw the range as a band (Routh), else two lines
  std::vector<Scalars> low, high;
};

std::vector<Curve> sweep(const std::vector<LawRun>& laws, std::vector<double>& thetas) {
  // One style per law of all_laws(), in its order: the propagative law wide
  // and pale so that the laws that share one of its outcomes show on top.
  const char* colours[] = {"#333333", "#f4a6a6", "#1f77b4", "#17becf", "#2ca02c", "#ff7f0e"};
  const char* dashes[] = {"6,4", "", "", "2,3", "", ""};
  const double widths[] = {1.6, 5.0, 1.6, 2.4, 1.6, 1.6};
  std::vector<Curve> curves;
  for (size_t l = 0; l < laws.size(); ++l)
    curves.push_back({laws[l].name, colours[l % 6], dashes[l % 6], widths[l % 6],
                      laws[l].name.rfind("Routh", 0) == 0, {}, {}});
  for (double theta = kThetaFirst; theta <= kThetaLast + 1e-9; theta += kThetaStep) {
    thetas.push_back(theta);
    const ImpactProblem problem = billiard(theta);
    for (size_t l = 0; l < laws.size(); ++l) {
      const LawReading r = laws[l].resolve(problem);
      Scalars low = scalars(problem, r.velocity), high = low;
      for (Eigen::Index k = 0; k < r.set_impulses.cols(); ++k) {
        const Scalars s = scalars(problem, velocity_of(problem, r.set_impulses.col(k)));
        low = {std::min(low.share_a, s.share_a), std::min(low.share_c, s.share_c)};
        high = {std::max(high.share_a, s.share_a), std::max(high.share_c, s.share_c)};
      }
      curves[l].low.push_back(low);
      curves[l].high.push_back(high);
    }
  }
  return curves;
}

struct Panel {
  double left, top, width, height;
  std::string title;
  double Scalars::*value;
  double y_min = 0.0, y_max = 1.0, y_step = 0.1;  ///< set by fit()
  /// The y range: the data's, widened to whole grid steps (0.1, or 0.25
  /// beyond a range of 1).
  void fit(const std::vector<Curve>& curves) {
    double lo = 1e300, hi = -1e300;
    for (const Curve& c : curves)
      for (const auto* values : {&c.low, &c.high})
        for (const Scalars& s : *values) {
          lo = std::min(lo, s.*value);
          hi = std::max(hi, s.*value);
        }
    y_step = hi - lo > 1.0 ? 0.25 : 0.1;
    y_min = std::floor(lo / y_step + 1e-9) * y_step;
    y_max = std::max(std::ceil(hi / y_step - 1e-9) * y_step, y_min + y_step);
  }
  double x(double theta) const { return left + width * (theta - kThetaFirst) / (kThetaLast - kThetaFirst); }
  double y(double v) const { return top + height * (y_max - v) / (y_max - y_min); }
};

std::string point(double x, double y) {
  char text[48];
  std::snprintf(text, sizeof text, "%.1f,%.1f ", x, y);
  return text;
}

void draw_panel(std::ostringstream& svg, const Panel& p, const std::vector<Curve>& curves,
                const std::vector<double>& thetas) {
  svg << "<text x='" << p.left << "' y='" << p.top - 10 << "' font-weight='bold'>" << p.title << "</text>\n";
  svg << "<rect x='" << p.left << "' y='" << p.top << "' width='" << p.width << "' height='" << p.height
      << "' fill='none' stroke='#999'/>\n";
  for (double t = kThetaFirst; t <= kThetaLast + 1e-9; t += 10.0)
    svg << "<line x1='" << p.x(t) << "' y1='" << p.top << "' x2='" << p.x(t) << "' y2='" << p.top + p.height
        << "' stroke='#eee'/><text x='" << p.x(t) << "' y='" << p.top + p.height + 16
        << "' text-anchor='middle'>" << t << "</text>\n";
  for (double v = p.y_min; v <= p.y_max + 1e-9; v += p.y_step) {
    char label[16];
    std::snprintf(label, sizeof label, "%.2f", v);
    svg << "<line x1='" << p.left << "' y1='" << p.y(v) << "' x2='" << p.left + p.width << "' y2='" << p.y(v)
        << "' stroke='#eee'/><text x='" << p.left - 6 << "' y='" << p.y(v) + 4 << "' text-anchor='end'>" << label
        << "</text>\n";
  }
  svg << "<text x='" << p.left + p.width / 2 << "' y='" << p.top + p.height + 34
      << "' text-anchor='middle'>θ [degrees]</text>\n";
  std::vector<const Curve*> order;
  for (const Curve& c : curves) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(), [](const Curve* a, const Curve* b) { return a->width > b->width; });
  for (const Curve* curve : order) {
    const Curve& c = *curve;
    if (c.band) {
      svg << "<polygon fill='" << c.colour << "' fill-opacity='0.25' stroke='" << c.colour << "' points='";
      for (size_t i = 0; i < thetas.size(); ++i) svg << point(p.x(thetas[i]), p.y(c.high[i].*p.value));
      for (size_t i = thetas.size(); i-- > 0;) svg << point(p.x(thetas[i]), p.y(c.low[i].*p.value));
      svg << "'/>\n";
      continue;
    }
    for (const auto* values : {&c.low, &c.high}) {
      svg << "<polyline fill='none' stroke='" << c.colour << "' stroke-width='" << c.width << "'";
      if (!c.dash.empty()) svg << " stroke-dasharray='" << c.dash << "'";
      svg << " points='";
      for (size_t i = 0; i < thetas.size(); ++i) svg << point(p.x(thetas[i]), p.y((*values)[i].*p.value));
      svg << "'/>\n";
    }
  }
}

std::string billiard_svg(const std::vector<Curve>& curves, const std::vector<double>& thetas) {
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='980' height='485' font-family='sans-serif' "
         "font-size='12'>\n<rect width='100%' height='100%' fill='white'/>\n";
  svg << "<text x='70' y='22' font-size='14' font-weight='bold'>Billiard break (Seghete &amp; Murphey 2014, "
         "Fig. 4): every law against the angle θ between the centre lines</text>\n";
  for (Panel panel : {Panel{70, 60, 380, 300, "ball a's share of the energy (b's is the mirror image)", &Scalars::share_a},
                      Panel{570, 60, 380, 300, "the cue ball's share of the energy", &Scalars::share_c}}) {
    panel.fit(curves);
    draw_panel(svg, panel, curves, thetas);
  }
  for (size_t i = 0; i < curves.size(); ++i) {
    const Curve& c = curves[i];
    const double x = 70 + 300 * static_cast<double>(i % 3), y = 418 + 20 * static_cast<double>(i / 3);
    if (c.band)
      svg << "<rect x='" << x << "' y='" << y - 9 << "' width='22' height='10' fill='" << c.colour
          << "' fill-opacity='0.25' stroke='" << c.colour << "'/>";
    else
      svg << "<line x1='" << x << "' y1='" << y - 4 << "' x2='" << x + 22 << "' y2='" << y - 4 << "' stroke='"
          << c.colour << "' stroke-width='" << c.width << "'" << (c.dash.empty() ? "" : " stroke-dasharray='" + c.dash + "'")
          << "/>";
    svg << "<text x='" << x + 28 << "' y='" << y << "'>" << c.name << "</text>\n";
  }
  svg << "<text x='70' y='470' fill='#555'>Set-valued laws show their range: the propagative law's two "
         "sequence outcomes (a first, b first) as two lines, Routh's samples as a band.</text>\n</svg>\n";
  return svg.str();
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, markdown = false, plot_only = false;
  std::string svg_path = "compare_laws.svg";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) {
      quick = true;
    } else if (!std::strcmp(argv[i], "--markdown")) {
      markdown = true;
    } else if (!std::strcmp(argv[i], "--plot-only")) {
      plot_only = true;
    } else if (!std::strcmp(argv[i], "--svg") && i + 1 < argc) {
      svg_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--markdown] [--svg FILE] [--plot-only]\n", argv[0]);
      return 64;
    }
  }

  {
    demos::LawOptions plot_options;
    plot_options.routh_samples = kPlotRouthSamples;
    std::vector<double> thetas;
    const std::vector<Curve> curves = sweep(demos::all_laws(plot_options), thetas);
    std::ofstream(svg_path) << billiard_svg(curves, thetas);
    if (plot_only) return 0;
  }

  demos::LawOptions options;
  options.routh_samples = quick ? 32 : 256;
  const std::vector<LawRun> laws = demos::all_laws(options);
  const int batches = quick ? 1 : 5;
  const double min_batch_ns = quick ? 2e4 : 5e6;

  struct Row {
    std::string problem, law, outcome, energy, spread, time;
  };
  std::vector<Row> rows;
  bool all_succeeded = true;
  for (const Problem& p : problems()) {
    for (const LawRun& law : laws) {
      const LawReading r = law.resolve(p.problem);
      const bool ok = r.status == Status::kSuccess;
      all_succeeded = all_succeeded && ok;
      std::string time = "—";
      if (law.impact) {
        char cell[32];
        const ImpactProblem& problem = p.problem;
        const double ns = demos::median_call_ns([&] { law.impact(problem); }, batches, min_batch_ns);
        std::snprintf(cell, sizeof cell, "%.1f", ns / 1000.0);
        time = cell;
      }
      rows.push_back({p.name, law.name, ok ? vector_text(r.velocity) : std::string("FAILED: ") + to_string(r.status),
                      energy_text(r), spread_text(r), time});
    }
  }

  const auto print_row = [](const Row& row, bool first) {
    std::printf("%s %s %s %s %s %s\n", pad(first ? row.problem : "", 24).c_str(), pad(row.law, 30).c_str(),
                pad(row.outcome, 64).c_str(), pad(row.energy, 10, true).c_str(), pad(row.spread, 14, true).c_str(),
                pad(row.time, 10, true).c_str());
  };
  print_row({"problem", "law", "outcome v⁺", "ΔE / E⁻", "spread ξ (n)", "µs/impact"}, true);
  std::string last;
  for (const Row& row : rows) {
    if (row.problem != last && !last.empty()) std::printf("\n");
    print_row(row, row.problem != last);
    last = row.problem;
  }
  std::printf("\nplot: %s\nevery law returned its own outcome: %s\n", svg_path.c_str(), all_succeeded ? "yes" : "NO");

  if (markdown) {
    const auto header = [&laws](const char* first) {
      std::printf("\n| %s |", first);
      for (const LawRun& law : laws) std::printf(" %s |", law.name.c_str());
      std::printf("\n| --- |");
      for (size_t l = 0; l < laws.size(); ++l) std::printf(" --- |");
    };
    header("problem");
    for (size_t i = 0; i < rows.size(); i += laws.size()) {
      std::printf("\n| %s |", rows[i].problem.c_str());
      for (size_t l = 0; l < laws.size(); ++l) {
        const Row& row = rows[i + l];
        const bool short_outcome = row.outcome.size() <= kMarkdownOutcomeBytes;
        std::printf(" %s%s%s |", short_outcome ? row.outcome.c_str() : "", short_outcome ? "<br>" : "",
                    (row.energy + (row.spread == "—" ? "" : ", ξ " + row.spread)).c_str());
      }
    }
    std::printf("\n");
    header("µs per impact");
    for (size_t i = 0; i < rows.size(); i += laws.size()) {
      std::printf("\n| %s |", rows[i].problem.c_str());
      for (size_t l = 0; l < laws.size(); ++l) std::printf(" %s |", rows[i + l].time.c_str());
    }
    std::printf("\n");
  }
  return all_succeeded ? 0 : 1;
}
