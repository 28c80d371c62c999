// libFuzzer target: any bytes as a `simpact scene` input document.
//
// A valid scene may ask for up to kMaxSceneWork body-steps, which is bounded
// but takes seconds; the fuzzer wants thousands of inputs per second, so a
// document that parses is run with at most kFuzzMaxSteps steps. Inputs that
// do not parse go to the command unchanged (the error paths are the point).
#include "cli_fuzz_check.h"

#include <simpact_cli/json_input.h>
#include <simpact_cli/scene.h>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

namespace {

// Enough for impacts to happen and to propagate through a small cradle
// (the bundled scenes collide within 1-24 steps).
constexpr std::int64_t kFuzzMaxSteps = 32;

std::string with_capped_steps(const std::string& text) {
  try {
    std::istringstream in(text);
    simpact::cli::Json scene = simpact::cli::parse_json(in);
    if (!scene.is_object()) return text;
    const auto steps = scene.find("steps");
    if (steps == scene.end() || !steps->is_number()) return text;
    if (!(steps->get<double>() > static_cast<double>(kFuzzMaxSteps))) return text;
    *steps = kFuzzMaxSteps;
    return scene.dump();
  } catch (const simpact::cli::InputError&) {
    return text;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  simpact::cli::fuzz::check_command(simpact::cli::run_scene, with_capped_steps(text));
  return 0;
}
