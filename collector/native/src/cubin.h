// Reading what the collector needs from a loaded CUBIN (ELF): function symbols and the target arch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rlc {

struct CubinFunction {
  std::string name;    // mangled symbol name
  uint64_t value = 0;  // offset of the function inside its section
  uint64_t size = 0;
  uint32_t section = 0;  // ELF section index (.text.<kernel>)
  bool global = false;   // STB_GLOBAL: kernels and externally visible device functions
};

struct CubinInfo {
  bool elf = false;
  uint32_t sm = 0;                                // 90 for sm_90, 0 if unknown
  std::vector<CubinFunction> functions;           // STT_FUNC symbols in .text.* sections
  std::map<std::string, uint64_t> static_shared;  // kernel -> bytes of .nv.shared.<kernel>
};

// Parses an in-memory CUBIN; returns false (with *error) for anything that is not a 64-bit ELF.
bool parse_cubin(const void* data, size_t size, CubinInfo* out, std::string* error);

}  // namespace rlc
