# SPDX-License-Identifier: GPL-2.0-or-later
#
# arm64 fixtures, cross-compiled with Debian's g++-aarch64-linux-gnu: the
# same sources as the x86-64 ones, for kprobectl's answers on arm64 files,
# checked offline on this host (the architecture is the file's, not the
# machine's). fixtures/arm64/NAME, each with its readelf view (an oracle).
# <sys/sdt.h> is architecture-neutral but Debian installs it under the
# x86-64 multiarch directory: a copy in the build tree serves the cross
# compiler.
find_program(AARCH64_GCC aarch64-linux-gnu-gcc REQUIRED)
find_program(AARCH64_GXX aarch64-linux-gnu-g++ REQUIRED)
find_file(SDT_H sys/sdt.h REQUIRED)
set(ARM64_DIR ${FIXTURE_DIR}/arm64)
get_filename_component(SDT_DIR ${SDT_H} DIRECTORY)
file(MAKE_DIRECTORY ${ARM64_DIR}/include/sys)
file(COPY ${SDT_DIR}/sdt.h ${SDT_DIR}/sdt-config.h DESTINATION ${ARM64_DIR}/include/sys)

set(ARM64_FIXTURES)
# kprobectl_arm64_fixture(NAME COMPILER gcc|g++ SOURCES ... FLAGS ...): a
# program, or with -shared a library, and its readelf view.
function(kprobectl_arm64_fixture name)
  cmake_parse_arguments(FX "" "COMPILER" "SOURCES;FLAGS" ${ARGN})
  set(sources)
  foreach(source ${FX_SOURCES})
    list(APPEND sources ${CMAKE_CURRENT_SOURCE_DIR}/${source})
  endforeach()
  set(compiler ${AARCH64_GCC})
  if(FX_COMPILER STREQUAL "g++")
    set(compiler ${AARCH64_GXX})
  endif()
  add_custom_command(OUTPUT ${ARM64_DIR}/${name}
    COMMAND ${compiler} ${FX_FLAGS} -I${ARM64_DIR}/include -o ${ARM64_DIR}/${name} ${sources}
    COMMAND readelf -W -s -l ${ARM64_DIR}/${name} > ${ARM64_DIR}/${name}.readelf
    DEPENDS ${sources} VERBATIM)
  set(ARM64_FIXTURES ${ARM64_FIXTURES} ${ARM64_DIR}/${name} PARENT_SCOPE)
endfunction()

kprobectl_arm64_fixture(target_O0 SOURCES fixtures/target.c fixtures/other.c FLAGS -O0 -g -fPIE -pie)
kprobectl_arm64_fixture(target_O2 SOURCES fixtures/target.c fixtures/other.c FLAGS -O2 -g -fPIE -pie)
kprobectl_arm64_fixture(records_O0 SOURCES fixtures/records.c fixtures/records_other.c FLAGS -O0 -g -fPIE -pie)
kprobectl_arm64_fixture(records_O2 SOURCES fixtures/records.c fixtures/records_other.c FLAGS -O2 -g -fPIE -pie)
kprobectl_arm64_fixture(shop COMPILER g++ SOURCES fixtures/shop.cc FLAGS -O2 -g -fPIE -pie)
kprobectl_arm64_fixture(libsdtfx.so SOURCES fixtures/sdt_lib.c FLAGS -O2 -g -fPIC -shared)
# A kernel image's stand-in (-k), built as arm64 kernels are: ftrace's
# patchable entry puts two NOPs at each function's symbol, before the code
# its DWARF describes.
kprobectl_arm64_fixture(kernel_like SOURCES fixtures/kernel_text.c fixtures/records.c fixtures/records_other.c
                        FLAGS -O2 -g -fno-pie -no-pie -fpatchable-function-entry=2
                        -fdebug-prefix-map=${CMAKE_CURRENT_SOURCE_DIR}/=)
add_custom_command(OUTPUT ${ARM64_DIR}/sdt ${ARM64_DIR}/sdt.notes
  COMMAND ${AARCH64_GCC} -O2 -g -fPIE -pie -I${ARM64_DIR}/include -o ${ARM64_DIR}/sdt
          ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/sdt.c ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/sdt_counted.c
          -L${ARM64_DIR} -lsdtfx
  COMMAND readelf -n --wide ${ARM64_DIR}/sdt > ${ARM64_DIR}/sdt.notes
  COMMAND readelf -n --wide ${ARM64_DIR}/libsdtfx.so > ${ARM64_DIR}/libsdtfx.so.notes
  DEPENDS fixtures/sdt.c fixtures/sdt_counted.c ${ARM64_DIR}/libsdtfx.so VERBATIM)
list(APPEND ARM64_FIXTURES ${ARM64_DIR}/sdt)
# Go, cross-built by Debian's go (GOARCH=arm64, its standard library only):
# Go's arm64 register ABI (R0-R15), its return instructions (RET), read
# here offline; the arm64 VM suite runs the cross-build's own copies.
if(KPROBECTL_GO)
  set(GO_ARM64_ENV env GOCACHE=${GO_CACHE} GOPATH=${CMAKE_CURRENT_BINARY_DIR}/go-path
      GO111MODULE=off GOFLAGS= CGO_ENABLED=0 GOOS=linux GOARCH=arm64)
  add_custom_command(OUTPUT ${ARM64_DIR}/gorets ${ARM64_DIR}/gofx ${ARM64_DIR}/gofx_nodwarf ${ARM64_DIR}/goargs
    COMMAND ${GO_ARM64_ENV} ${KPROBECTL_GO} build -o ${ARM64_DIR}/gorets ${LANG_DIR}/gorets.go
    COMMAND ${GO_ARM64_ENV} ${KPROBECTL_GO} build -o ${ARM64_DIR}/goargs ${LANG_DIR}/goargs.go
    COMMAND ${GO_ARM64_ENV} ${KPROBECTL_GO} build -o ${ARM64_DIR}/gofx ${LANG_DIR}/gofx.go
    COMMAND ${GO_ARM64_ENV} ${KPROBECTL_GO} build -ldflags=-w -o ${ARM64_DIR}/gofx_nodwarf ${LANG_DIR}/gofx.go
    DEPENDS ${LANG_DIR}/gorets.go ${LANG_DIR}/gofx.go ${LANG_DIR}/goargs.go VERBATIM)
  list(APPEND ARM64_FIXTURES ${ARM64_DIR}/gorets)
endif()
add_custom_target(arm64_fixtures ALL DEPENDS ${ARM64_FIXTURES})
