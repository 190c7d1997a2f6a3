# Every external dependency, found once. All come from Debian bookworm packages
# (scripts/setup.sh installs them). See docs/architecture.md for why each is here.
find_package(Threads REQUIRED)
find_package(Protobuf REQUIRED)            # must come before ONNX
find_package(ONNX CONFIG REQUIRED)         # targets: onnx, onnx_proto
find_package(FlatBuffers CONFIG REQUIRED)  # flatbuffers::flatbuffers, flatbuffers::flatc
find_package(OpenSSL REQUIRED)             # SHA-256 keys for named data
find_package(fmt CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED) # JSON reports (vkc inspect --json)
find_package(CLI11 CONFIG REQUIRED)
find_package(yaml-cpp CONFIG REQUIRED)       # device profiles (target: yaml-cpp, no namespace in 0.7)
if(VKC_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
