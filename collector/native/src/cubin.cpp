#include "cubin.h"

#include <cstring>

namespace rlc {
namespace {

struct Ehdr {
  unsigned char ident[16];
  uint16_t type, machine;
  uint32_t version;
  uint64_t entry, phoff, shoff;
  uint32_t flags;
  uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};
struct Shdr {
  uint32_t name, type;
  uint64_t flags, addr, offset, size;
  uint32_t link, info;
  uint64_t addralign, entsize;
};
struct Sym {
  uint32_t name;
  unsigned char info, other;
  uint16_t shndx;
  uint64_t value, size;
};

constexpr uint32_t SHT_SYMTAB = 2;
constexpr unsigned char STT_FUNC = 2;
constexpr unsigned char STB_GLOBAL = 1;

const char* str_at(const unsigned char* base, size_t size, const Shdr& strtab, uint32_t off) {
  if (strtab.offset + off >= size || off >= strtab.size) return "";
  const char* s = reinterpret_cast<const char*>(base + strtab.offset + off);
  size_t max = strtab.size - off;
  return memchr(s, 0, max) ? s : "";
}

}  // namespace

bool parse_cubin(const void* data, size_t size, CubinInfo* out, std::string* error) {
  *out = CubinInfo{};
  const auto* p = static_cast<const unsigned char*>(data);
  if (size < sizeof(Ehdr) ||
      memcmp(p,
             "\x7f"
             "ELF",
             4) != 0 ||
      p[4] != 2 /*ELFCLASS64*/) {
    *error = "not a 64-bit ELF image";
    return false;
  }
  Ehdr eh;
  memcpy(&eh, p, sizeof eh);
  // CUDA ELF: ABI version >= 8 keeps the SM number in bits 8..15 of e_flags, older ones in bits 0..7.
  out->sm = eh.ident[8] >= 8 ? (eh.flags >> 8) & 0xff : eh.flags & 0xff;
  if (eh.shentsize != sizeof(Shdr) || eh.shoff == 0 || eh.shoff + (uint64_t)eh.shnum * sizeof(Shdr) > size ||
      eh.shstrndx >= eh.shnum) {
    *error = "ELF section header table out of bounds";
    return false;
  }
  std::vector<Shdr> sh(eh.shnum);
  memcpy(sh.data(), p + eh.shoff, eh.shnum * sizeof(Shdr));
  for (const Shdr& s : sh) {
    if (s.type != 8 /*NOBITS*/ && s.offset + s.size > size) {
      *error = "ELF section out of bounds";
      return false;
    }
  }
  const Shdr& shstr = sh[eh.shstrndx];
  auto sec_name = [&](uint32_t i) { return std::string(str_at(p, size, shstr, sh[i].name)); };
  for (uint32_t i = 0; i < eh.shnum; ++i) {
    std::string n = sec_name(i);
    if (n.rfind(".nv.shared.", 0) == 0) out->static_shared[n.substr(11)] = sh[i].size;
  }
  for (uint32_t i = 0; i < eh.shnum; ++i) {
    if (sh[i].type != SHT_SYMTAB || sh[i].entsize != sizeof(Sym) || sh[i].link >= eh.shnum) continue;
    const Shdr& strtab = sh[sh[i].link];
    size_t n = sh[i].size / sizeof(Sym);
    for (size_t k = 0; k < n; ++k) {
      Sym sym;
      memcpy(&sym, p + sh[i].offset + k * sizeof(Sym), sizeof sym);
      if ((sym.info & 0xf) != STT_FUNC || sym.shndx == 0 || sym.shndx >= eh.shnum) continue;
      if (sec_name(sym.shndx).rfind(".text.", 0) != 0) continue;
      CubinFunction f;
      f.name = str_at(p, size, strtab, sym.name);
      f.value = sym.value;
      f.size = sym.size;
      f.section = sym.shndx;
      f.global = (sym.info >> 4) == STB_GLOBAL;
      if (!f.name.empty()) out->functions.push_back(std::move(f));
    }
  }
  out->elf = true;
  return true;
}

}  // namespace rlc
