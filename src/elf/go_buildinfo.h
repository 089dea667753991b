// SPDX-License-Identifier: GPL-2.0-or-later
//
// In: the bytes of a Go binary's .go.buildinfo section (and a way to read
// the file's memory, for Go before 1.18). Out: the Go version that built it
// ("go1.19.8"), or "" when the section says none.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace kprobectl {

// Reads `size` bytes at a virtual address of the file ("" when unmapped).
using ReadVirtual = std::function<std::string(uint64_t address, uint64_t size)>;

std::string GoVersionFromBuildInfo(std::string_view bytes, const ReadVirtual& read);

// The minor number of a Go version ("go1.19.8": 19), 0 when it names none.
unsigned GoMinorVersion(std::string_view version);

}  // namespace kprobectl
