// The README's core snippets, extracted from README.md at build time
// (cmake/ExtractReadmeSnippets.cmake), compiled inside test bodies and
// run: a README edit that breaks them fails this test's build, and the
// results the README states in comments are checked here. The snippets'
// headers are included first at file scope, so their own #include lines
// expand to nothing inside the functions.
#include <simpact/diagnostics.h>
#include <simpact/frictional_reference.h>
#include <simpact/propagative.h>
#include <simpact/routh.h>

#include <gtest/gtest.h>

#include <Eigen/Core>

namespace {

/// The cradle's outcome is exact up to rounding of a few reflections.
constexpr double kExact = 1e-12;

// "Using the core": three touching balls, the first at 1 m/s; the README
// says r.outcomes[0].velocity == (0, 0, 1), one outcome, ξ = 0.
TEST(ReadmeSnippet, CorePropagativeCradle) {
#include "readme_core_propagative.inc"
  ASSERT_EQ(r.status, simpact::Status::kSuccess) << r.message;
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_TRUE(r.outcomes[0].velocity.isApprox(Eigen::Vector3d(0, 0, 1), kExact))
      << r.outcomes[0].velocity.transpose();
  ASSERT_TRUE(r.indeterminacy.has_value());
  EXPECT_NEAR(*r.indeterminacy, 0.0, kExact);
}

// "Frictional impacts": the block landing flat; every call the snippet
// makes returns a usable result, the set has the samples asked for, and
// no sample leaves a corner approaching.
TEST(ReadmeSnippet, CoreRouthBlock) {
#include "readme_core_routh.inc"
  EXPECT_EQ(one.status, simpact::Status::kSuccess) << one.message;
  ASSERT_FALSE(one.outcomes.empty());
  EXPECT_EQ(all.velocities.cols(), set.samples);
  EXPECT_FALSE(ap.outcomes.empty()) << ap.message;
  EXPECT_EQ(seq.status, simpact::Status::kSuccess) << seq.message;
  const Eigen::VectorXd u = Jn * one.outcomes[0].velocity;
  EXPECT_GE(u.minCoeff(), -1e-9) << "a corner still approaches after the sample";
}

}  // namespace
