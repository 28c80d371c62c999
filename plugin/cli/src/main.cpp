#include <simpact_cli/cli.h>

#include <iostream>

int main(int argc, char** argv) {
  return simpact::cli::run(argc, argv, std::cin, std::cout, std::cerr);
}
