// SPDX-License-Identifier: GPL-2.0-or-later
//
// Shared by the fuzz targets (tests/fuzz/README.md). Each target defines
// LLVMFuzzerTestOneInput; it is linked with libFuzzer (scripts/fuzz, clang)
// or with replay_main.cc (every build: the corpus and the regressions, as
// a test).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

// A property that must hold: a crash the fuzzer reports, not an assert()
// that a release build drops.
#define KP_FUZZ_CHECK(cond)                                                                 \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      std::fprintf(stderr, "%s:%d: fuzz property failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                         \
    }                                                                                       \
  } while (0)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
