// A main() for the fuzz targets' entry points outside libFuzzer: feeds every file named (or found
// in a folder named) on the command line to LLVMFuzzerTestOneInput once. The regular test suite
// replays the seed corpora and the regression inputs through each target with it, under any
// compiler and under -DVKC_SANITIZE.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  size_t n = 0;
  auto replay = [&](const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    ++n;
  };
  for (int i = 1; i < argc; ++i) {
    const fs::path arg = argv[i];
    if (!fs::is_directory(arg)) {
      replay(arg);
      continue;
    }
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(arg))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) replay(f);
  }
  std::printf("replayed %zu input(s)\n", n);
  return n ? 0 : 1;
}
