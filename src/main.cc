// SPDX-License-Identifier: GPL-2.0-or-later
#include <iostream>

#include "kprobectl/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return kprobectl::RunCli(args, std::cout, std::cerr);
}
