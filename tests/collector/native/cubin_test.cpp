// Prints what parse_cubin (collector/native/src/cubin.cpp) reads of a CUBIN file's functions, one line each:
// "<mangled name> <stack bytes>", or "error: <reason>". Built and run by tests/collector/test_cubin.py.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "cubin.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: cubin_test FILE.cubin\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  rlc::CubinInfo info;
  std::string error;
  if (!rlc::parse_cubin(bytes.data(), bytes.size(), &info, &error)) {
    printf("error: %s\n", error.c_str());
    return 1;
  }
  for (const rlc::CubinFunction& f : info.functions) printf("%s %u\n", f.name.c_str(), f.stack);
  return 0;
}
