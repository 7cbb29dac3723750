// Minimal JSON text helpers for run.json (the collector has no JSON dependency).
#pragma once

#include <cstdint>
#include <string>

namespace rlc {
std::string json_str(const std::string& s);  // quoted and escaped
std::string json_u64_or_null(bool present, uint64_t v);
// A finite double in the fewest digits that read back as the same double (the replay must use the very value the
// online engine used).
std::string json_number(double v);
// Writes `text` to `path` atomically (temporary file in the same directory + rename).
bool write_file_atomic(const std::string& path, const std::string& text, std::string* error);
}  // namespace rlc
