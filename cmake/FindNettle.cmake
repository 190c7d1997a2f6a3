# FindNettle: GNU Nettle (Debian: nettle-dev), for SHA-256: the imported target Nettle::Nettle.
include(${CMAKE_CURRENT_LIST_DIR}/VkcFindLibrary.cmake)
vkc_find_library(Nettle Nettle::Nettle nettle/sha2.h nettle)
