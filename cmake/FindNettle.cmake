# FindNettle: GNU Nettle (Debian: nettle-dev), for SHA-256. Nettle ships pkg-config files but no
# CMake package, so this module finds it and defines the imported target Nettle::Nettle.
# Installed beside vkcConfig.cmake, which uses it to find the dependency for consumers.
find_path(NETTLE_INCLUDE_DIR nettle/sha2.h)
find_library(NETTLE_LIBRARY NAMES nettle)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Nettle REQUIRED_VARS NETTLE_LIBRARY NETTLE_INCLUDE_DIR)
if(Nettle_FOUND AND NOT TARGET Nettle::Nettle)
  add_library(Nettle::Nettle UNKNOWN IMPORTED)
  set_target_properties(Nettle::Nettle PROPERTIES IMPORTED_LOCATION "${NETTLE_LIBRARY}"
                                                  INTERFACE_INCLUDE_DIRECTORIES "${NETTLE_INCLUDE_DIR}")
endif()
mark_as_advanced(NETTLE_INCLUDE_DIR NETTLE_LIBRARY)
