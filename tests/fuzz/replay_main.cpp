// Replays a libFuzzer harness on files, so the harnesses also build with g++ as plain executables.
//
//   fuzz_replay_<name> DIR_OR_FILE...   runs LLVMFuzzerTestOneInput once per regular file found
//                                       (folders are walked recursively), prints the count.
// Exit 0 when every input ran (a harness aborts on a finding), 1 when no input was found or a path
// is missing: a replay that silently ran nothing must not pass.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void runFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    fs::path root = argv[i];
    std::error_code ec;
    if (fs::is_regular_file(root, ec)) {
      runFile(root);
      ++count;
    } else if (fs::is_directory(root, ec)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::recursive_directory_iterator(root))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) {
        runFile(f);
        ++count;
      }
    } else {
      std::fprintf(stderr, "fuzz replay: no such file or folder: %s\n", argv[i]);
      return 1;
    }
  }
  std::printf("replayed %zu inputs\n", count);
  return count > 0 ? 0 : 1;
}
