// SPDX-License-Identifier: GPL-2.0-or-later
#include "/tmp/timing.h"
#include <iostream>

#include "kprobectl/cli.h"

int main(int argc, char** argv) {
  KPT("main");
  std::vector<std::string> args(argv + 1, argv + argc);
  int r = kprobectl::RunCli(args, std::cout, std::cerr); KPT("end"); return r;
  return kprobectl::RunCli(args, std::cout, std::cerr);
}
