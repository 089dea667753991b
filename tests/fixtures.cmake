# SPDX-License-Identifier: GPL-2.0-or-later
#
# Fixtures: small C programs the tests resolve and probe. Each is built with
# fixed flags (no sanitizers), and `readelf` describes it at build time as an
# oracle independent of our own ELF code.
set(FIXTURE_DIR ${CMAKE_CURRENT_BINARY_DIR}/fixtures)
file(MAKE_DIRECTORY ${FIXTURE_DIR})
# 'fixtures' builds them all (the test programs depend on it; the arm64
# cross-build builds it alone).
add_custom_target(fixtures)
# Not through ccache: with the source tree as its base it compiles a file
# named relative to the build folder, and the DWARF then names the sources
# as ../../tests/fixtures/..., not the absolute paths the tests expect.
# Nor in a unity build: each source is its own unit, as the tests expect.
function(kprobectl_fixture_uncached name)
  set_target_properties(${name} PROPERTIES C_COMPILER_LAUNCHER "" CXX_COMPILER_LAUNCHER "" UNITY_BUILD OFF)
endfunction()
function(kprobectl_fixture name)
  cmake_parse_arguments(FX "" "" "SOURCES;FLAGS;LINK" ${ARGN})
  add_executable(${name} ${FX_SOURCES})
  kprobectl_fixture_uncached(${name})
  target_compile_options(${name} PRIVATE ${FX_FLAGS})
  target_link_options(${name} PRIVATE ${FX_LINK})
  set_target_properties(${name} PROPERTIES RUNTIME_DIRECTORY ${FIXTURE_DIR} RUNTIME_OUTPUT_DIRECTORY ${FIXTURE_DIR})
  add_dependencies(fixtures ${name})
  add_custom_command(TARGET ${name} POST_BUILD
    COMMAND readelf -W -s -l $<TARGET_FILE:${name}> > ${FIXTURE_DIR}/${name}.readelf
    VERBATIM)
endfunction()
set(FIXTURE_SOURCES fixtures/target.c fixtures/other.c)
kprobectl_fixture(target_O0 SOURCES ${FIXTURE_SOURCES} FLAGS -O0 -g -fPIE LINK -pie)
kprobectl_fixture(target_O2 SOURCES ${FIXTURE_SOURCES} FLAGS -O2 -g -fPIE LINK -pie)
kprobectl_fixture(target_nopie SOURCES ${FIXTURE_SOURCES} FLAGS -O2 -g -fno-pie LINK -no-pie)
set(RECORDS_SOURCES fixtures/records.c fixtures/records_other.c)
kprobectl_fixture(records_O0 SOURCES ${RECORDS_SOURCES} FLAGS -O0 -g -fPIE LINK -pie)
kprobectl_fixture(records_O2 SOURCES ${RECORDS_SOURCES} FLAGS -O2 -g -fPIE LINK -pie)
kprobectl_fixture(types SOURCES fixtures/types.c FLAGS -O2 -g -fPIE LINK -pie)
# Sleeps of given lengths: hist --latency's buckets.
kprobectl_fixture(sleeper SOURCES fixtures/sleeper.c FLAGS -O2 -g -fPIE LINK -pie)
kprobectl_fixture(callers SOURCES fixtures/callers.c FLAGS -O2 -g -fPIE LINK -pie)
# Recursion: return probes whose arguments their entry keeps, call by call.
kprobectl_fixture(recursive SOURCES fixtures/recursive.c FLAGS -O2 -g -fPIE LINK -pie)
# records_gz: SHF_COMPRESSED debug sections, as distributions' debug packages ship them.
kprobectl_fixture(records_gz SOURCES ${RECORDS_SOURCES} FLAGS -O2 -g -gz=zlib -fPIE LINK -pie -gz=zlib)
# A header's inline function whose code starts a line of the caller's file.
kprobectl_fixture(header_inline SOURCES fixtures/header_inline.c FLAGS -O2 -g -fPIE LINK -pie)
# Inlined copies that begin at one instruction, one inside the other (list names the outer).
kprobectl_fixture(nested_inline SOURCES fixtures/nested_inline.c FLAGS -O2 -g -fPIE LINK -pie)
# gcc's split functions: hot/cold parts, split parts inlined back, folded inlines.
kprobectl_fixture(split SOURCES fixtures/split.c FLAGS -O2 -g -fPIE -freorder-blocks-and-partition LINK -pie)
kprobectl_fixture(kernel_split SOURCES fixtures/kernel_text.c fixtures/split.c
                  FLAGS -O2 -g -fno-pie -freorder-blocks-and-partition -fdebug-prefix-map=${CMAKE_CURRENT_SOURCE_DIR}/=
                  LINK -no-pie)
# gcc's partial inlining: set_irq's head inlined and kept, the rest set_irq.part.0.
kprobectl_fixture(partial SOURCES fixtures/partial.c FLAGS -O2 -g -fPIE LINK -pie)
# A weak function overridden in another file: its code and DWARF stay, its symbol goes.
kprobectl_fixture(kernel_weak SOURCES fixtures/kernel_text.c fixtures/weak_default.c fixtures/weak_override.c
                  FLAGS -O2 -g -fno-pie LINK -no-pie)
# A function on the kprobe blacklist (NOKPROBE_SYMBOL).
kprobectl_fixture(kernel_blacklist SOURCES fixtures/kernel_text.c fixtures/blacklisted.c FLAGS -O2 -g -fno-pie LINK -no-pie)
# An inline function whose copies' ranges hold its callers' lines (own_lines.c says how).
kprobectl_fixture(own_lines SOURCES fixtures/own_lines.c FLAGS -O2 -g -fPIE LINK -pie)
# Parameters known only by their registers' values at the frame's entry (DW_OP_entry_value).
kprobectl_fixture(entry_value SOURCES fixtures/entry_value.c FLAGS -O2 -g -fPIE LINK -pie)
# Variables located through memory (DW_OP_deref and offsets after a register).
kprobectl_fixture(deref SOURCES fixtures/deref.c FLAGS -O2 -g -fPIE LINK -pie)
# Structs split over registers and stack slots (DW_OP_piece).
kprobectl_fixture(pieces SOURCES fixtures/pieces.c FLAGS -O2 -g -fPIE LINK -pie)
# DWARF 4 (line programs with inline file names, version 4 headers).
kprobectl_fixture(records_dwarf4 SOURCES ${RECORDS_SOURCES} FLAGS -O2 -gdwarf-4 -fPIE LINK -pie)
# clang's DWARF 5 (a function in the CU's own file, named relative to the
# compilation directory, has DW_AT_decl_file 0).
# Not cross-built: the arm64 tree has no clang target of its own.
if(NOT CMAKE_CROSSCOMPILING)
  find_program(KPROBECTL_CLANG NAMES clang-19 clang REQUIRED)
  set(CLANG_DECL ${FIXTURE_DIR}/clang_decl)
  add_custom_command(OUTPUT ${CLANG_DECL}
    COMMAND ${KPROBECTL_CLANG} -O2 -g -gdwarf-5 -fPIE -pie -o ${CLANG_DECL} clang_decl.c
    WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/fixtures DEPENDS fixtures/clang_decl.c VERBATIM)
  add_custom_target(clang_decl DEPENDS ${CLANG_DECL})
  add_dependencies(fixtures clang_decl)
endif()
# A stand-in for vmlinux (-k): not PIE, with _text, duplicate static names,
# and source paths recorded relative to the tree (fixtures/records.c), as
# kernel builds record fs/open.c.
kprobectl_fixture(kernel_like SOURCES fixtures/kernel_text.c ${RECORDS_SOURCES}
                  FLAGS -O2 -g -fno-pie -fdebug-prefix-map=${CMAKE_CURRENT_SOURCE_DIR}/= LINK -no-pie)
# Linked statically, it has one symbol table (.symtab, no .dynsym), and
# built as the kernel is, without unwind tables, its own code has only
# .debug_frame: as a vmlinux. At -O0 every local lives in the frame (CFA).
kprobectl_fixture(kernel_static SOURCES fixtures/kernel_text.c ${RECORDS_SOURCES}
                  FLAGS -O0 -g -fno-pie -fno-asynchronous-unwind-tables -fno-unwind-tables LINK -no-pie -static)

# Built from a copy of the sources that is deleted afterwards: for listings
# without source text, and -s DIR to find it again.
set(GONE_DIR ${CMAKE_CURRENT_BINARY_DIR}/gone-sources)
add_custom_command(OUTPUT ${GONE_DIR}/records.c ${GONE_DIR}/records_other.c
  COMMAND ${CMAKE_COMMAND} -E make_directory ${GONE_DIR}
  COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/records.c
          ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/records_other.c ${GONE_DIR}/
  DEPENDS fixtures/records.c fixtures/records_other.c)
kprobectl_fixture(records_nosource SOURCES ${GONE_DIR}/records.c ${GONE_DIR}/records_other.c FLAGS -O2 -g -fPIE LINK -pie)
add_custom_command(TARGET records_nosource POST_BUILD COMMAND ${CMAKE_COMMAND} -E rm -rf ${GONE_DIR})

# BTF as a kernel has it (--btf): pahole -J writes the .BTF section of
# kernel_btf and a raw copy (kernel_btf.btf); kpmod_btf.ko is a module whose
# split BTF has kernel_btf's as its base, as /sys/kernel/btf/MODULE has.
# vmlinux-6.18.btf: a real kernel's /sys/kernel/btf/vmlinux, kept compressed.
# Each kernel says which it is (kernel_version.c), each module which it was
# built for (its .modinfo vermagic; btf_version.h): kernel_btf_b and
# kpmod_btf_b.ko are another kernel, whose structs have another layout;
# kpmod_btf_preempt.ko is built for kernel_btf's release with other
# options, kpmod_btf_bare.ko has no .modinfo; kpmod_btf_xz.ko.xz and
# kpmod_btf_zst.ko.zst are kpmod_btf.ko compressed, as distributions ship modules.
set(BTF_KERNEL_SOURCES fixtures/kernel_text.c fixtures/btf_types.c fixtures/kernel_version.c)
# Without DWARF, it adds nothing to the BTF pahole makes (the index tests know kernel_btf.btf's size).
set_source_files_properties(fixtures/kernel_version.c PROPERTIES COMPILE_OPTIONS -g0)
set(BTF_MODULE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/btf_module.c ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/btf_version.h)
# Linked relocatable with a build-id, as the kernel links its modules.
set(BTF_MODULE_CC ${CMAKE_C_COMPILER} -O2 -g -r -nostdlib -Wl,--build-id=sha1
    ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/btf_module.c)
kprobectl_fixture(kernel_btf SOURCES ${BTF_KERNEL_SOURCES} FLAGS -O2 -g -fno-pie LINK -no-pie)
add_custom_command(TARGET kernel_btf POST_BUILD
  COMMAND pahole -J $<TARGET_FILE:kernel_btf>
  COMMAND pahole -J --btf_encode_detached=${FIXTURE_DIR}/kernel_btf.btf $<TARGET_FILE:kernel_btf>
  COMMAND ${BTF_MODULE_CC} -o ${FIXTURE_DIR}/kpmod_btf.ko
  COMMAND pahole -J --btf_base $<TARGET_FILE:kernel_btf> ${FIXTURE_DIR}/kpmod_btf.ko
  COMMAND xz -c ${FIXTURE_DIR}/kpmod_btf.ko > ${FIXTURE_DIR}/kpmod_btf_xz.ko.xz
  COMMAND zstd -q -f -c ${FIXTURE_DIR}/kpmod_btf.ko > ${FIXTURE_DIR}/kpmod_btf_zst.ko.zst
  COMMAND ${BTF_MODULE_CC} -DKP_PREEMPT -o ${FIXTURE_DIR}/kpmod_btf_preempt.ko
  COMMAND pahole -J --btf_base $<TARGET_FILE:kernel_btf> ${FIXTURE_DIR}/kpmod_btf_preempt.ko
  COMMAND ${BTF_MODULE_CC} -DKP_NO_MODINFO -o ${FIXTURE_DIR}/kpmod_btf_bare.ko
  COMMAND pahole -J --btf_base $<TARGET_FILE:kernel_btf> ${FIXTURE_DIR}/kpmod_btf_bare.ko
  COMMAND xz -dc ${CMAKE_CURRENT_SOURCE_DIR}/data/btf/vmlinux-6.18.44.btf.xz > ${FIXTURE_DIR}/vmlinux-6.18.btf
  VERBATIM)
set_property(TARGET kernel_btf APPEND PROPERTY LINK_DEPENDS ${BTF_MODULE_DEPENDS})
# A kernel image that names its release in its linux_banner alone.
kprobectl_fixture(kernel_banner SOURCES fixtures/kernel_text.c fixtures/kernel_version.c ${FIXTURE_SOURCES}
                  FLAGS -O2 -g -fno-pie -DKP_BANNER_ONLY LINK -no-pie)
kprobectl_fixture(kernel_btf_b SOURCES ${BTF_KERNEL_SOURCES} FLAGS -O2 -g -fno-pie -DKP_LAYOUT_B LINK -no-pie)
add_custom_command(TARGET kernel_btf_b POST_BUILD
  COMMAND pahole -J $<TARGET_FILE:kernel_btf_b>
  COMMAND pahole -J --btf_encode_detached=${FIXTURE_DIR}/kernel_btf_b.btf $<TARGET_FILE:kernel_btf_b>
  COMMAND ${BTF_MODULE_CC} -DKP_LAYOUT_B -o ${FIXTURE_DIR}/kpmod_btf_b.ko
  COMMAND pahole -J --btf_base $<TARGET_FILE:kernel_btf_b> ${FIXTURE_DIR}/kpmod_btf_b.ko
  VERBATIM)
set_property(TARGET kernel_btf_b APPEND PROPERTY LINK_DEPENDS ${BTF_MODULE_DEPENDS})

# A relocatable object stands in for a kernel module (-m): plain, xz and zstd.
add_custom_command(OUTPUT ${FIXTURE_DIR}/kpmod.ko ${FIXTURE_DIR}/kpmod_xz.ko.xz ${FIXTURE_DIR}/kpmod_zst.ko.zst
  COMMAND ${CMAKE_C_COMPILER} -c -O2 -g ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/records.c -o ${FIXTURE_DIR}/kpmod.ko
  COMMAND xz -c ${FIXTURE_DIR}/kpmod.ko > ${FIXTURE_DIR}/kpmod_xz.ko.xz
  COMMAND zstd -q -f -c ${FIXTURE_DIR}/kpmod.ko > ${FIXTURE_DIR}/kpmod_zst.ko.zst
  DEPENDS fixtures/records.c VERBATIM)
add_custom_target(kpmod DEPENDS ${FIXTURE_DIR}/kpmod.ko ${FIXTURE_DIR}/kpmod_xz.ko.xz ${FIXTURE_DIR}/kpmod_zst.ko.zst)
add_dependencies(fixtures kpmod)

# C++: namespaces, classes, overloads, templates, a lambda, std::string.
kprobectl_fixture(shop SOURCES fixtures/shop.cc FLAGS -O2 -g -fPIE LINK -pie)
kprobectl_fixture(abi_tags SOURCES fixtures/abi_tags.cc FLAGS -O2 -g -fPIE LINK -pie)
kprobectl_fixture(alias SOURCES fixtures/alias.c FLAGS -O2 -g -fPIE LINK -pie)
# USDT markers (<sys/sdt.h>): a program and a shared library it links.
add_library(sdtfx SHARED fixtures/sdt_lib.c)
kprobectl_fixture_uncached(sdtfx)
target_compile_options(sdtfx PRIVATE -O2 -g)
set_target_properties(sdtfx PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${FIXTURE_DIR})
kprobectl_fixture(sdt SOURCES fixtures/sdt.c fixtures/sdt_counted.c FLAGS -O2 -g -fPIE LINK -pie)
target_link_libraries(sdt PRIVATE sdtfx)
# readelf -n describes the notes, an oracle for ours.
add_custom_command(TARGET sdtfx POST_BUILD
  COMMAND readelf -n --wide $<TARGET_FILE:sdtfx> > ${FIXTURE_DIR}/libsdtfx.so.notes VERBATIM)
add_custom_command(TARGET sdt POST_BUILD COMMAND readelf -n --wide $<TARGET_FILE:sdt> > ${FIXTURE_DIR}/sdt.notes VERBATIM)
add_dependencies(fixtures sdtfx)

add_library(fx SHARED fixtures/versioned.c)
kprobectl_fixture_uncached(fx)
target_compile_options(fx PRIVATE -O2 -g)
target_link_options(fx PRIVATE -Wl,--version-script=${CMAKE_CURRENT_SOURCE_DIR}/fixtures/versioned.map)
set_target_properties(fx PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${FIXTURE_DIR} LINK_DEPENDS
                      ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/versioned.map)
add_custom_command(TARGET fx POST_BUILD
  COMMAND readelf -W -s -l $<TARGET_FILE:fx> > ${FIXTURE_DIR}/libfx.so.readelf VERBATIM)
add_dependencies(fixtures fx)

# Go and Rust (fixtures/lang), built with Debian's golang-go and rustc by
# their paths (a rustup toolchain first on PATH is not what CI has), with
# and without optimisation; Rust with both of its manglings.
find_program(KPROBECTL_GO go PATHS /usr/lib/go/bin /usr/bin NO_DEFAULT_PATH)
find_program(KPROBECTL_RUSTC rustc PATHS /usr/bin NO_DEFAULT_PATH)
set(LANG_DIR ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/lang)
# The arm64 cross-build's Go fixtures are arm64's (GOARCH; Go cross-builds
# its standard library itself), for the arm64 VM suite.
set(GOARCH amd64)
if(CMAKE_CROSSCOMPILING AND CMAKE_SYSTEM_PROCESSOR STREQUAL "aarch64")
  set(GOARCH arm64)
endif()
# Go's build cache beside ccache's where there is one (what it caches is
# keyed by the sources' paths and contents: safe to share between trees).
set(GO_CACHE ${CMAKE_CURRENT_BINARY_DIR}/go-cache)
if(KPROBECTL_BUILD_CACHE)
  set(GO_CACHE ${KPROBECTL_BUILD_CACHE}/go)
endif()
if(KPROBECTL_GO)
  set(GO_ENV env GOCACHE=${GO_CACHE} GOPATH=${CMAKE_CURRENT_BINARY_DIR}/go-path GO111MODULE=off
      GOFLAGS= CGO_ENABLED=0 GOOS=linux GOARCH=${GOARCH})
  add_custom_command(OUTPUT ${FIXTURE_DIR}/gofx ${FIXTURE_DIR}/gofx_noopt
    COMMAND ${GO_ENV} ${KPROBECTL_GO} build -o ${FIXTURE_DIR}/gofx ${LANG_DIR}/gofx.go
    COMMAND ${GO_ENV} ${KPROBECTL_GO} build "-gcflags=-N -l" -o ${FIXTURE_DIR}/gofx_noopt ${LANG_DIR}/gofx.go
    DEPENDS ${LANG_DIR}/gofx.go VERBATIM)
  add_custom_command(OUTPUT ${FIXTURE_DIR}/gostack ${FIXTURE_DIR}/gostack_noopt
    COMMAND ${GO_ENV} ${KPROBECTL_GO} build -o ${FIXTURE_DIR}/gostack ${LANG_DIR}/gostack.go
    COMMAND ${GO_ENV} ${KPROBECTL_GO} build "-gcflags=-N -l" -o ${FIXTURE_DIR}/gostack_noopt ${LANG_DIR}/gostack.go
    DEPENDS ${LANG_DIR}/gostack.go VERBATIM)
  # gofx_nodwarf: without DWARF (-ldflags=-w), for $argN and $retval by Go's ABI alone.
  add_custom_command(OUTPUT ${FIXTURE_DIR}/gofx_nodwarf
    COMMAND ${GO_ENV} ${KPROBECTL_GO} build -ldflags=-w -o ${FIXTURE_DIR}/gofx_nodwarf ${LANG_DIR}/gofx.go
    DEPENDS ${LANG_DIR}/gofx.go VERBATIM)
  add_custom_command(OUTPUT ${FIXTURE_DIR}/gorets ${FIXTURE_DIR}/gorets_noopt
    COMMAND ${GO_ENV} ${KPROBECTL_GO} build -o ${FIXTURE_DIR}/gorets ${LANG_DIR}/gorets.go
    COMMAND ${GO_ENV} ${KPROBECTL_GO} build "-gcflags=-N -l" -o ${FIXTURE_DIR}/gorets_noopt ${LANG_DIR}/gorets.go
    DEPENDS ${LANG_DIR}/gorets.go VERBATIM)
  add_custom_command(OUTPUT ${FIXTURE_DIR}/goargs ${FIXTURE_DIR}/goargs_noopt
    COMMAND ${GO_ENV} ${KPROBECTL_GO} build -o ${FIXTURE_DIR}/goargs ${LANG_DIR}/goargs.go
    COMMAND ${GO_ENV} ${KPROBECTL_GO} build "-gcflags=-N -l" -o ${FIXTURE_DIR}/goargs_noopt ${LANG_DIR}/goargs.go
    DEPENDS ${LANG_DIR}/goargs.go VERBATIM)
  add_custom_target(go_fixtures DEPENDS ${FIXTURE_DIR}/gofx ${FIXTURE_DIR}/gofx_noopt ${FIXTURE_DIR}/gofx_nodwarf
                                        ${FIXTURE_DIR}/gostack ${FIXTURE_DIR}/gostack_noopt ${FIXTURE_DIR}/gorets
                                        ${FIXTURE_DIR}/gorets_noopt ${FIXTURE_DIR}/goargs ${FIXTURE_DIR}/goargs_noopt)
  add_dependencies(fixtures go_fixtures)
endif()
if(KPROBECTL_RUSTC)
  add_custom_command(OUTPUT ${FIXTURE_DIR}/rsfx_O0 ${FIXTURE_DIR}/rsfx_O2 ${FIXTURE_DIR}/rsfx_v0
    COMMAND ${KPROBECTL_RUSTC} -g -C opt-level=0 -o ${FIXTURE_DIR}/rsfx_O0 ${LANG_DIR}/rsfx.rs
    COMMAND ${KPROBECTL_RUSTC} -g -C opt-level=2 -o ${FIXTURE_DIR}/rsfx_O2 ${LANG_DIR}/rsfx.rs
    COMMAND ${KPROBECTL_RUSTC} -g -C opt-level=2 -C symbol-mangling-version=v0 -o ${FIXTURE_DIR}/rsfx_v0
            ${LANG_DIR}/rsfx.rs
    DEPENDS ${LANG_DIR}/rsfx.rs VERBATIM)
  add_custom_target(rust_fixtures DEPENDS ${FIXTURE_DIR}/rsfx_O0 ${FIXTURE_DIR}/rsfx_O2 ${FIXTURE_DIR}/rsfx_v0)
  add_dependencies(fixtures rust_fixtures)
endif()

include(arm64_fixtures.cmake)
