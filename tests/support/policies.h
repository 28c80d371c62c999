// Helpers to run one problem under every order policy and to compare sets of
// outcomes with expected velocities.
#pragma once

#include "support/compare.h"

#include <simpact/propagative.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace simpact::testing {

/// A single-outcome policy run: the policy and, for kRandom, the seed.
struct PolicyRun {
  OrderPolicy policy;
  std::uint64_t seed;

  std::string name() const {
    std::string s = to_string(policy);
    if (policy == OrderPolicy::kRandom) s += "(seed " + std::to_string(seed) + ")";
    return s;
  }
};

/// Random seeds tried wherever "every policy" is checked.
inline constexpr std::uint64_t kRandomSeedsPerCheck = 8;

/// Every policy that returns one outcome: most/least negative, time of
/// impact, index, and kRandom with several seeds. kTimeOfImpact needs the
/// problem's time_of_impact hints.
inline std::vector<PolicyRun> SingleOutcomePolicies() {
  std::vector<PolicyRun> runs = {{OrderPolicy::kMostNegative, 0},
                                 {OrderPolicy::kLeastNegative, 0},
                                 {OrderPolicy::kTimeOfImpact, 0},
                                 {OrderPolicy::kIndex, 0}};
  for (std::uint64_t seed = 0; seed < kRandomSeedsPerCheck; ++seed)
    runs.push_back({OrderPolicy::kRandom, 0x5eed0000u + 7919u * seed});
  return runs;
}

inline PropagativeParameters Parameters(OrderPolicy policy, std::uint64_t seed = 0) {
  PropagativeParameters parameters;
  parameters.policy = policy;
  parameters.seed = seed;
  return parameters;
}

/// Every returned outcome velocity equals one of `expected` and every
/// expected velocity is returned (kAll's distinct outcomes vs a closed form).
inline ::testing::AssertionResult OutcomeVelocitiesAre(const std::vector<Outcome>& outcomes,
                                                       const std::vector<Eigen::VectorXd>& expected,
                                                       double abs_tol, double rel_tol) {
  auto matches = [&](const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
    return static_cast<bool>(VectorsNear(a, b, abs_tol, rel_tol));
  };
  for (std::size_t k = 0; k < outcomes.size(); ++k) {
    bool found = false;
    for (const auto& e : expected) found = found || matches(outcomes[k].velocity, e);
    if (!found) {
      auto failure = ::testing::AssertionFailure();
      failure << "outcome " << k << " velocity [" << outcomes[k].velocity.transpose()
              << "] matches none of the " << expected.size() << " expected velocities:";
      for (const auto& e : expected)
        failure << "\n  [" << e.transpose()
                << "]: " << VectorsNear(outcomes[k].velocity, e, abs_tol, rel_tol).message();
      return failure;
    }
  }
  for (std::size_t k = 0; k < expected.size(); ++k) {
    bool found = false;
    for (const auto& o : outcomes) found = found || matches(o.velocity, expected[k]);
    if (!found)
      return ::testing::AssertionFailure()
             << "expected velocity [" << expected[k].transpose() << "] is missing from the "
             << outcomes.size() << " outcomes";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace simpact::testing
