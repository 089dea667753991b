// SPDX-License-Identifier: GPL-2.0-or-later
//
// The running kernel's build configuration, where the system keeps it:
// /proc/config.gz (CONFIG_IKCONFIG_PROC), else /boot/config-RELEASE (as
// Debian and most distributions install it). In: a KernelEnv. Out: the
// text and where it came from, or nothing when neither can be read.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kprobectl/kernel_image.h"

namespace kprobectl {

struct KernelConfig {
  std::string text;    // "CONFIG_X=y" lines and "# CONFIG_Y is not set" comments
  std::string source;  // the file it was read from
};

std::optional<KernelConfig> ReadKernelConfig(const KernelEnv& env);

}  // namespace kprobectl
