# SPDX-License-Identifier: GPL-2.0-or-later
#
# Cross-builds kprobectl and its test fixtures for arm64 (AArch64) with
# Debian's cross compiler (g++-aarch64-linux-gnu) against Debian's arm64
# -dev packages unpacked into a sysroot: scripts/build --arch arm64 makes
# the sysroot and passes it as KPROBECTL_SYSROOT.
#
# The cross compiler keeps its own C and C++ libraries (libc6-dev-arm64-cross,
# libstdc++-12-dev-arm64-cross) ahead of the sysroot's, whose /usr/include
# and /usr/lib/aarch64-linux-gnu give the rest (libdw, libbpf, libtracefs,
# CLI11, Catch2, <sys/sdt.h>...). pkg-config reads the sysroot's .pc files
# only, with their paths inside the sysroot.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# The toolchain file is read again in each try_compile project.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES KPROBECTL_SYSROOT)
if(NOT KPROBECTL_SYSROOT OR NOT IS_DIRECTORY "${KPROBECTL_SYSROOT}/usr/lib/aarch64-linux-gnu")
  message(FATAL_ERROR "KPROBECTL_SYSROOT='${KPROBECTL_SYSROOT}' is no arm64 sysroot: "
                      "build with scripts/build --arch arm64, which makes one")
endif()
set(CMAKE_SYSROOT "${KPROBECTL_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH "${KPROBECTL_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)  # readelf, pahole, xz: the host's
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(ENV{PKG_CONFIG_SYSROOT_DIR} "${KPROBECTL_SYSROOT}")
set(ENV{PKG_CONFIG_LIBDIR} "${KPROBECTL_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${KPROBECTL_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
