// bullet_examples — Bullet's own examples re-created headlessly
// (simpact_scenes/bullet_examples.h), run with stock SI and with simpact in
// front of SI, printed as Markdown tables for docs/guarantees.md:
//  - NewtonsCradle with the example's 2.1 r spacing and touching (2.0 r):
//    the first strike's outcome (bottom spheres' x velocities over the
//    striker's speed; ideal (0, …, 0, 1)) and the swing energy over 20 s;
//  - BasicDemo's block of 125 boxes dropped on the ground, as the example
//    has it (e = 0) and bouncing (e = 0.5): energy, where the pile ends,
//    whether it came to rest, the mean and the longest step (5 s);
//  - a hinge chain falling onto the ground: energy, joint error, rest (5 s).
// Swing energy S = E − E_rest: the mechanical energy above the state at
// rest (everything hanging still; the cradle starts at the bottom of its
// swing, so S0 is its initial kinetic energy). The drops start at rest and
// can only lose energy: their column is the largest rise of the mechanical
// energy E (measured from the ground) above its running minimum, over E0.
//
//   bullet_examples [--quick]
// --quick runs 2 s instead of 20 s and 5 s (for the ctest smoke run).
// Exit status 0 unless an exception escaped or a state turned non-finite
// under simpact.
#include "simpact_scenes/bullet_examples.h"

#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace {

using namespace simpact::scenes;

struct Solver {
  const char* name;
  WorldOptions options;
};

std::vector<Solver> solvers() {
  std::vector<Solver> list;
  WorldOptions stock;
  stock.solver = SolverKind::kStockSi;
  list.push_back({"stock SI", stock});
  WorldOptions propagative;
  propagative.solver = SolverKind::kSimpact;
  propagative.base = SolverKind::kStockSi;
  list.push_back({"simpact propagative (SI)", propagative});
  WorldOptions automatic = propagative;
  automatic.simpact.law = simpact::bullet::ImpactLaw::kAuto;
  list.push_back({"simpact auto (SI)", automatic});
  return list;
}

// Steps `example` to `steps`, tracking energy; returns "" or what failed.
struct Run {
  std::string failure;
  double max_energy = -INFINITY;
  double final_energy = 0.0;
  double minimum_energy = INFINITY;
  double rise = 0.0;  ///< largest rise of the energy above its running minimum [J]
  double seconds = 0.0;
  double longest_step = 0.0;  ///< [s]
  int steps = 0;
};

Run run(BulletExample& example, int steps, int already = 0) {
  Run result;
  result.steps = already;
  const auto start = std::chrono::steady_clock::now();
  for (int s = already; s < steps; ++s) {
    try {
      const auto step_start = std::chrono::steady_clock::now();
      example.world->step(example.dt);
      result.longest_step = std::max(
          result.longest_step, std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count());
    } catch (const std::exception& error) {
      result.failure = std::string("exception: ") + error.what();
      break;
    }
    ++result.steps;
    if (!example_state_finite(example)) {
      result.failure = "non-finite state at step " + std::to_string(s);
      break;
    }
    const double energy = example.world->energy();
    result.max_energy = std::max(result.max_energy, energy);
    result.rise = std::max(result.rise, energy - result.minimum_energy);
    result.minimum_energy = std::min(result.minimum_energy, energy);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.final_energy = example.world->energy();
  return result;
}

std::string outcome_text(const std::vector<double>& outcome) {
  if (outcome.empty()) return "no strike";
  std::string text = "(";
  char buffer[32];
  for (std::size_t i = 0; i < outcome.size(); ++i) {
    std::snprintf(buffer, sizeof buffer, "%s%.3f", i ? ", " : "", outcome[i] + 0.0);
    text += buffer;
  }
  return text + ")";
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int cradle_steps = quick ? 120 : 1200;  // 2 s or 20 s at 60 Hz
  const int drop_steps = quick ? 120 : 300;     // 2 s or 5 s
  bool simpact_failed = false;

  std::printf("## NewtonsCradle (5 pendula, r = 1 m, rods 8 m, striker at 2 m/s, e = 1, 60 Hz, %.0f s)\n\n",
              cradle_steps / 60.0);
  std::printf("| spacing | solver | first strike: bottom vx / v | max S/S0 | final S/S0 | ms/step | failure |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const double spacing : {2.1, 2.0}) {
    for (const Solver& solver : solvers()) {
      BulletCradleOptions options;
      options.spacing = spacing;
      std::string failure;
      std::vector<double> strike;
      Run result;
      try {
        auto cradle = bullet_newtons_cradle(solver.options, options);
        const double e0 = cradle->world->energy();
        const double s0 = cradle->world->kinetic_energy();  // all swing energy is kinetic at t = 0
        const auto start = std::chrono::steady_clock::now();
        int used = 0;
        try {
          const CradleStrike first = cradle_first_strike(*cradle, options, cradle_steps);
          strike = first.outcome;
          used = first.steps;
        } catch (const std::exception& error) {
          failure = std::string("exception: ") + error.what();
        }
        if (failure.empty()) result = run(*cradle, cradle_steps, used);
        if (failure.empty()) failure = result.failure;
        result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const double max_swing = 1.0 + (std::max(result.max_energy, e0) - e0) / s0;
        const double final_swing = 1.0 + (result.final_energy - e0) / s0;
        std::printf("| %.1f r | %s | %s | %.3f | %.3f | %.3f | %s |\n", spacing, solver.name,
                    outcome_text(strike).c_str(), max_swing, final_swing,
                    1e3 * result.seconds / std::max(1, result.steps), failure.empty() ? "—" : failure.c_str());
      } catch (const std::exception& error) {
        failure = std::string("exception: ") + error.what();
        std::printf("| %.1f r | %s | — | — | — | — | %s |\n", spacing, solver.name, failure.c_str());
      }
      if (!failure.empty() && solver.options.solver == SolverKind::kSimpact) simpact_failed = true;
    }
  }

  // e = 0 is the example; e = 0.5 what a user who makes the boxes bounce
  // gets (box–ground contacts e, box–box e²: every landing and collapse
  // cluster then goes through the restitution blend and its plastic LCP).
  for (const double restitution : {0.0, 0.5}) {
    std::printf("\n## BasicDemo pile (125 boxes of 0.2 m, dropped 1.9 m, e = %g, mu = 0.5, 60 Hz, %.0f s)\n\n",
                restitution, drop_steps / 60.0);
    std::printf("| solver | max rise of E / E0 | final E/E0 | top of pile [m] | max speed at end [m/s] | ms/step | longest step [ms] | failure |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    for (const Solver& solver : solvers()) {
      BoxPileExampleOptions options;
      options.restitution = restitution;
      auto pile = bullet_box_pile(solver.options, options);
      const double e0 = pile->world->energy();
      Run result = run(*pile, drop_steps);
      result.rise = std::max(result.rise, result.max_energy - e0);  // the first step against E0
      double top = -INFINITY;
      for (const btRigidBody* box : pile->bodies) top = std::max(top, double(box->getCenterOfMassPosition().y()) + 0.1);
      std::printf("| %s | %.4f | %.4f | %.3f | %.3g | %.3f | %.1f | %s |\n", solver.name, result.rise / e0,
                  result.final_energy / e0, top, example_max_speed(*pile), 1e3 * result.seconds / std::max(1, result.steps),
                  1e3 * result.longest_step, result.failure.empty() ? "—" : result.failure.c_str());
      if (!result.failure.empty() && solver.options.solver == SolverKind::kSimpact) simpact_failed = true;
    }
  }

  std::printf("\n## Hinge chain (8 links of 0.5 m, dropped 1 m, e = 0.5, 60 Hz, %.0f s)\n\n", drop_steps / 60.0);
  std::printf("| solver | max rise of E / E0 | final E/E0 | max joint error [m] | max speed at end [m/s] | ms/step | failure |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const Solver& solver : solvers()) {
    auto chain = bullet_hinge_chain(solver.options);
    const double e0 = chain->world->energy();
    double joint_error = 0.0;
    Run result;
    double minimum = e0;
    const auto start = std::chrono::steady_clock::now();
    for (int s = 0; s < drop_steps && result.failure.empty(); ++s) {
      const Run one = run(*chain, s + 1, s);
      result.failure = one.failure;
      result.max_energy = std::max(result.max_energy, one.max_energy);
      result.rise = std::max(result.rise, one.final_energy - minimum);
      minimum = std::min(minimum, one.final_energy);
      result.final_energy = one.final_energy;
      result.steps = one.steps;
      joint_error = std::max(joint_error, hinge_chain_joint_error(*chain));
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("| %s | %.4f | %.4f | %.2g | %.3g | %.3f | %s |\n", solver.name, result.rise / e0,
                result.final_energy / e0, joint_error, example_max_speed(*chain),
                1e3 * result.seconds / std::max(1, result.steps),
                result.failure.empty() ? "—" : result.failure.c_str());
    if (!result.failure.empty() && solver.options.solver == SolverKind::kSimpact) simpact_failed = true;
  }
  return simpact_failed ? 1 : 0;
}
