# SPDX-License-Identifier: GPL-2.0-or-later
# kprobectl_soname(VAR LIBRARY): the SONAME of the shared library LIBRARY
# (a path), for a library the code loads with dlopen when a command needs it
# rather than links (include/kprobectl/shared_library.h says why).
function(kprobectl_soname var library)
  if(CMAKE_READELF)
    set(readelf ${CMAKE_READELF})
  else()
    find_program(readelf NAMES readelf REQUIRED)
  endif()
  execute_process(COMMAND ${readelf} -d ${library} OUTPUT_VARIABLE dynamic RESULT_VARIABLE failed)
  if(failed OR NOT dynamic MATCHES "\\(SONAME\\)[^[]*\\[([^]]+)\\]")
    message(FATAL_ERROR "cannot read the SONAME of ${library}")
  endif()
  set(${var} ${CMAKE_MATCH_1} PARENT_SCOPE)
endfunction()

# The Debian package that installed the library file LIBRARY (dpkg-query
# -S on it), else the one Debian's naming gives its soname (libfoo.so.4:
# libfoo4; libfoo2.so.1: libfoo2-1).
function(kprobectl_package var library soname)
  get_filename_component(real ${library} REALPATH)
  execute_process(COMMAND dpkg-query -S ${real} OUTPUT_VARIABLE owner RESULT_VARIABLE failed ERROR_QUIET)
  if(NOT failed AND owner MATCHES "^([^:,]+)")
    set(${var} ${CMAKE_MATCH_1} PARENT_SCOPE)
    return()
  endif()
  string(REGEX REPLACE "\\.so\\." ";" parts ${soname})
  list(GET parts 0 base)
  list(GET parts 1 version)
  if(base MATCHES "[0-9]$")
    set(${var} ${base}-${version} PARENT_SCOPE)
  else()
    set(${var} ${base}${version} PARENT_SCOPE)
  endif()
endfunction()

# The soname of a pkg-config module's library NAME (lib<NAME>.so), found
# through the module's link libraries, and (VAR_PACKAGE) its package.
function(kprobectl_pkg_soname var prefix name)
  foreach(library ${${prefix}_LINK_LIBRARIES})
    if(library MATCHES "/lib${name}\\.so$")
      kprobectl_soname(soname ${library})
      set(${var} ${soname} PARENT_SCOPE)
      get_filename_component(dir ${library} DIRECTORY)
      kprobectl_package(package ${dir}/${soname} ${soname})
      set(${var}_PACKAGE ${package} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "pkg-config's ${prefix} names no lib${name}.so (${${prefix}_LINK_LIBRARIES})")
endfunction()
