# Install rules: headers, the static libraries vkc_compiler needs, the vkc tool, the CMake
# package (find_package(vkc CONFIG): vkc::compiler, vkc::runtime, vkc::vkc, vkc_add_model) and vkc.pc.
# Included from the top CMakeLists.txt after every layer. See docs/library.md.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(VKC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/vkc)

# External targets the exported libraries may link, and how consumers find them:
#   <target>|<find_dependency arguments>|<pkg-config module>|<pkg-config libs>
set(_vkc_external_deps
  "Threads::Threads|Threads||-pthread"
  "protobuf::libprotobuf|Protobuf|protobuf|"
  "onnx|ONNX CONFIG||-lonnx"
  "onnx_proto|ONNX CONFIG||-lonnx_proto"
  "flatbuffers::flatbuffers|FlatBuffers CONFIG|flatbuffers|"
  "Nettle::Nettle|Nettle|nettle|"
  "PCRE2::PCRE2|PCRE2|libpcre2-8|"
  "utf8proc::utf8proc|utf8proc|libutf8proc|"
  "fmt::fmt|fmt CONFIG|fmt|"
  "nlohmann_json::nlohmann_json|nlohmann_json CONFIG||"
  "yaml-cpp|yaml-cpp CONFIG|yaml-cpp|"
  "Vulkan::Vulkan|Vulkan|vulkan|")

# Walks the link graph from `target`: vkc targets land in _VKC_POSTORDER (dependencies first),
# imported targets in _VKC_EXTERNAL.
function(_vkc_walk_links target)
  get_property(visited GLOBAL PROPERTY _VKC_VISITED)
  if(target IN_LIST visited)
    return()
  endif()
  set_property(GLOBAL APPEND PROPERTY _VKC_VISITED ${target})
  get_target_property(type ${target} TYPE)
  set(deps)
  if(NOT type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(direct ${target} LINK_LIBRARIES)
    list(APPEND deps ${direct})
  endif()
  get_target_property(interface ${target} INTERFACE_LINK_LIBRARIES)
  list(APPEND deps ${interface})
  foreach(dep IN LISTS deps)
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.+)>$" "\\1" dep "${dep}")
    if(NOT TARGET ${dep})
      continue()
    endif()
    get_target_property(imported ${dep} IMPORTED)
    if(imported)
      set_property(GLOBAL APPEND PROPERTY _VKC_EXTERNAL ${dep})
    else()
      _vkc_walk_links(${dep})
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY _VKC_POSTORDER ${target})
endfunction()

_vkc_walk_links(vkc_compiler)
get_property(VKC_EXPORTED_TARGETS GLOBAL PROPERTY _VKC_POSTORDER)
get_property(_vkc_external GLOBAL PROPERTY _VKC_EXTERNAL)
list(REMOVE_DUPLICATES _vkc_external)

# Exported as vkc::<folder> (vkc_compiler -> vkc::compiler); headers from every
# BUILD_INTERFACE include directory (source and generated) go to include/.
set(VKC_PC_LIBS)
foreach(target IN LISTS VKC_EXPORTED_TARGETS)
  string(REGEX REPLACE "^vkc_" "" export_name ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
  get_target_property(dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
  foreach(dir IN LISTS dirs)
    if(dir MATCHES "^\\$<BUILD_INTERFACE:(.+)>$")
      install(DIRECTORY ${CMAKE_MATCH_1}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
    endif()
  endforeach()
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    target_include_directories(${target} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  else()
    target_include_directories(${target} PUBLIC $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
    list(PREPEND VKC_PC_LIBS -l${target})  # dependents before their dependencies
  endif()
endforeach()
# The public headers use C++20 (std::span, defaulted comparisons); consumers inherit that.
target_compile_features(vkc_compiler PUBLIC cxx_std_20)
target_compile_features(vkc_runtime PUBLIC cxx_std_20)
set_target_properties(vkc PROPERTIES EXPORT_NAME vkc)
add_library(vkc::compiler ALIAS vkc_compiler)
add_library(vkc::runtime ALIAS vkc_runtime)
add_executable(vkc::vkc ALIAS vkc)

# find_dependency lines and pkg-config requirements for the external targets in use.
set(VKC_FIND_DEPENDENCIES "")
set(VKC_PC_REQUIRES)
set(_vkc_known)
foreach(entry IN LISTS _vkc_external_deps)
  string(REPLACE "|" ";" fields "${entry}")
  list(GET fields 0 dep_target)
  list(APPEND _vkc_known ${dep_target})
  if(NOT dep_target IN_LIST _vkc_external AND NOT dep_target STREQUAL "Threads::Threads"
     AND NOT (dep_target STREQUAL "protobuf::libprotobuf" AND "onnx" IN_LIST _vkc_external))
    continue()  # unused; Threads always, Protobuf whenever ONNX (which needs it found first)
  endif()
  list(GET fields 1 find_args)
  list(GET fields 2 pc_module)
  list(GET fields 3 pc_libs)
  if(NOT VKC_FIND_DEPENDENCIES MATCHES "find_dependency\\(${find_args}\\)")
    string(APPEND VKC_FIND_DEPENDENCIES "find_dependency(${find_args})\n")
  endif()
  if(pc_module)
    list(APPEND VKC_PC_REQUIRES ${pc_module})
  endif()
  list(APPEND VKC_PC_LIBS ${pc_libs})
endforeach()
foreach(dep IN LISTS _vkc_external)
  if(NOT dep IN_LIST _vkc_known)
    message(FATAL_ERROR "cmake/VkcInstall.cmake: exported vkc libraries link ${dep}; add it to _vkc_external_deps")
  endif()
endforeach()
list(JOIN VKC_PC_REQUIRES " " VKC_PC_REQUIRES)
list(JOIN VKC_PC_LIBS " " VKC_PC_LIBS)

install(TARGETS ${VKC_EXPORTED_TARGETS} EXPORT vkcTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS vkc EXPORT vkcTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT vkcTargets NAMESPACE vkc:: DESTINATION ${VKC_INSTALL_CMAKEDIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/vkcConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/vkcConfig.cmake INSTALL_DESTINATION ${VKC_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/vkcConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/vkcConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/vkcConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/VkcAddModel.cmake ${CMAKE_CURRENT_LIST_DIR}/VkcFindLibrary.cmake
  ${CMAKE_CURRENT_LIST_DIR}/FindNettle.cmake ${CMAKE_CURRENT_LIST_DIR}/FindPCRE2.cmake
  ${CMAKE_CURRENT_LIST_DIR}/Findutf8proc.cmake
  DESTINATION ${VKC_INSTALL_CMAKEDIR})

# pkg-config: relocatable (prefix from the .pc file's own directory).
file(RELATIVE_PATH VKC_PC_PREFIX_FROM_PCFILEDIR /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" VKC_PC_PREFIX_FROM_PCFILEDIR "${VKC_PC_PREFIX_FROM_PCFILEDIR}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/vkc.pc.in ${CMAKE_CURRENT_BINARY_DIR}/vkc.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/vkc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# Packages of what the install rules above put in place: `cmake --build build --target package`
# writes build/vkc_<version>_<arch>.deb (for apt install ./vkc_...deb) and vkc-<version>-Linux.tar.gz.
# The package holds static libraries, headers and the CMake/pkg-config files, so it depends on the
# -dev packages find_package(vkc) finds through, and on the vkc tool's shared libraries.
set(CPACK_PACKAGE_NAME vkc)
set(CPACK_PACKAGE_VENDOR "vkc")
set(CPACK_PACKAGE_CONTACT "vkc developers <vkc@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Ahead-of-time ONNX to ExecuTorch Vulkan (.pte) compiler: vkc tool and C++ library")
set(CPACK_GENERATOR "DEB;TGZ")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libprotobuf-dev, libonnx-dev, libflatbuffers-dev, nettle-dev, libfmt-dev, nlohmann-json3-dev, libyaml-cpp-dev, libvulkan-dev, libpcre2-dev, libutf8proc-dev, libsentencepiece-dev")
find_program(VKC_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(VKC_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # plus the vkc tool's shared libraries, computed
endif()
set(CPACK_ARCHIVE_COMPONENT_INSTALL OFF)
include(CPack)
