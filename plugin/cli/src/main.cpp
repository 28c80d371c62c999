#include <simpact_cli/campaign.h>
#include <simpact_cli/cli.h>

#include <iostream>

int main(int argc, char** argv) {
  // MPI when started by mpirun (`simpact sweep` spreads its runs over the
  // ranks; docs/mpi.md); one process otherwise.
  const simpact::cli::CampaignContext context(&argc, &argv);
  return simpact::cli::run(argc, argv, std::cin, std::cout, std::cerr);
}
