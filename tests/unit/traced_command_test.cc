// SPDX-License-Identifier: GPL-2.0-or-later
#include <signal.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "kprobectl/trace_process.h"

using namespace kprobectl;

namespace {

std::string MapsOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

sigset_t NoSignals() {
  sigset_t none;
  sigemptyset(&none);
  return none;
}

}  // namespace

TEST_CASE("a traced command stopped at its exec: its program's mappings are read however short its run") {
  // /bin/true ends in a millisecond: unstopped, its maps are usually gone
  // before they can be read.
  for (int run = 0; run < 20; ++run) {
    auto command = TracedCommand::Start({"true"}, NoSignals(), -1, true);
    REQUIRE(command);
    REQUIRE(command->Release());
    std::string maps;
    command->AtExec([&](pid_t pid) { maps = MapsOf(pid); });
    INFO(maps);
    CHECK(maps.find("/true\n") != std::string::npos);
    CHECK(command->Stop(SIGTERM, 2000) == 0);
  }
}

TEST_CASE("a traced command not stopped at its exec is looked at once it has exec'd") {
  auto command = TracedCommand::Start({"sleep", "0.5"}, NoSignals(), -1, false);
  REQUIRE(command);
  REQUIRE(command->Release());
  std::string maps;
  command->AtExec([&](pid_t pid) { maps = MapsOf(pid); });
  CHECK(maps.find("/sleep\n") != std::string::npos);
  CHECK(command->Stop(SIGTERM, 2000) == 0);
}

TEST_CASE("a command that cannot run is an error, stopped at its exec or not") {
  for (bool stop : {true, false}) {
    auto command = TracedCommand::Start({"/nonexistent/kp-command"}, NoSignals(), -1, stop);
    REQUIRE(command);
    auto released = command->Release();
    REQUIRE_FALSE(released);
    CHECK(released.error().message == "cannot run '/nonexistent/kp-command': No such file or directory");
  }
}
