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

# The soname of a pkg-config module's library NAME (lib<NAME>.so), found
# through the module's link libraries.
function(kprobectl_pkg_soname var prefix name)
  foreach(library ${${prefix}_LINK_LIBRARIES})
    if(library MATCHES "/lib${name}\\.so$")
      kprobectl_soname(soname ${library})
      set(${var} ${soname} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "pkg-config's ${prefix} names no lib${name}.so (${${prefix}_LINK_LIBRARIES})")
endfunction()
