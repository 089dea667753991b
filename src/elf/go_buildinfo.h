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

// Whether a Go version passes arguments in registers (its internal ABI,
// "ABIInternal") on the ELF machine `machine`: since 1.17 on x86-64, 1.18
// on arm64.
bool GoRegisterAbi(std::string_view version, uint16_t machine);

}  // namespace kprobectl
