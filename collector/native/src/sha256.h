// SHA-256 (FIPS 180-4) of a byte buffer, as lowercase hex: names the module files modules/<sha256>.cubin.
#pragma once

#include <cstddef>
#include <string>

namespace rlc {
std::string sha256_hex(const void* data, size_t size);
}
