# vkc_find_library(PACKAGE TARGET HEADER LIBRARY): for the Find<PACKAGE>.cmake modules of Debian
# libraries that ship pkg-config files but no CMake package. Finds HEADER and LIBRARY and defines
# the imported target TARGET. Installed beside vkcConfig.cmake with those modules.
include(FindPackageHandleStandardArgs)
function(vkc_find_library package target header library)
  string(TOUPPER ${package} prefix)
  find_path(${prefix}_INCLUDE_DIR ${header})
  find_library(${prefix}_LIBRARY NAMES ${library})
  find_package_handle_standard_args(${package} REQUIRED_VARS ${prefix}_LIBRARY ${prefix}_INCLUDE_DIR)
  set(${package}_FOUND ${${package}_FOUND} PARENT_SCOPE)
  if(${package}_FOUND AND NOT TARGET ${target})
    add_library(${target} UNKNOWN IMPORTED)
    set_target_properties(${target} PROPERTIES IMPORTED_LOCATION "${${prefix}_LIBRARY}"
                                               INTERFACE_INCLUDE_DIRECTORIES "${${prefix}_INCLUDE_DIR}")
  endif()
  mark_as_advanced(${prefix}_INCLUDE_DIR ${prefix}_LIBRARY)
endfunction()
