// libFuzzer target: any bytes as a `simpact resolve` input document.
#include "cli_fuzz_check.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  simpact::cli::fuzz::check_command(simpact::cli::run_resolve,
                                    std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
