#include "module_patcher.h"

#include <sanitizer.h>

namespace rlc {

namespace {

// The patch's device callbacks (patch.cu) for each instruction kind; a missing optional one only degrades.
struct PatchPoint {
  Sanitizer_InstructionId id;
  const char* cb;
  bool required;
};
const PatchPoint kPatchPoints[] = {
    {SANITIZER_INSTRUCTION_GLOBAL_MEMORY_ACCESS, "rl_global", true},
    {SANITIZER_INSTRUCTION_SHARED_MEMORY_ACCESS, "rl_shared", true},
    {SANITIZER_INSTRUCTION_LOCAL_MEMORY_ACCESS, "rl_local", true},
    {SANITIZER_INSTRUCTION_MEMCPY_ASYNC, "rl_memcpy_async", true},
    {SANITIZER_INSTRUCTION_BARRIER, "rl_barrier", true},
    {SANITIZER_INSTRUCTION_SYNCWARP, "rl_syncwarp", true},
    {SANITIZER_INSTRUCTION_CUDA_BARRIER, "rl_cuda_barrier", true},
    {SANITIZER_INSTRUCTION_BLOCK_EXIT, "rl_block_exit", true},
    {SANITIZER_INSTRUCTION_MATRIX_MEMORY_ACCESS, "rl_matrix", false},
    {SANITIZER_INSTRUCTION_SET_SHARED_MEMORY_SIZE, "rl_smem_size", false},
    {SANITIZER_INSTRUCTION_BULK_COPY_GLOBAL_TO_SHARED, "rl_bulk_g2s", false},
    {SANITIZER_INSTRUCTION_BULK_COPY_SHARED_TO_GLOBAL, "rl_bulk_s2g", false},
};

// Object-level mode (object_patch.cu): the global accesses only, which is all an allocation can see.
const PatchPoint kObjectPatchPoints[] = {
    {SANITIZER_INSTRUCTION_GLOBAL_MEMORY_ACCESS, "rl_obj_global", true},
    {SANITIZER_INSTRUCTION_MEMCPY_ASYNC, "rl_obj_memcpy_async", true},
    {SANITIZER_INSTRUCTION_BULK_COPY_GLOBAL_TO_SHARED, "rl_obj_bulk_g2s", false},
    {SANITIZER_INSTRUCTION_BULK_COPY_SHARED_TO_GLOBAL, "rl_obj_bulk_s2g", false},
};

// False if a required instruction kind could not be patched.
template <size_t N>
bool patch_instruction_points(CUmodule mod, const PatchPoint (&points)[N], Diagnostics& diag, bool fatal) {
  bool ok = true;
  for (const PatchPoint& p : points) {
    SanitizerResult r = sanitizerPatchInstructions(p.id, mod, p.cb);
    if (r != SANITIZER_SUCCESS) {
      std::string what = std::string("sanitizerPatchInstructions(") + p.cb + ")";
      if (p.required)
        ok = diag.check(r, what.c_str(), fatal) && ok;
      else
        diag.check(r, what.c_str());
    }
  }
  return ok;
}

}  // namespace

// fatal: a failure makes the run partial (a module a launch needs); otherwise it is logged and the module stays
// unpatched (a module patched ahead of its launches, Tool::on_graph_exec).
bool patch_module_instructions(CUmodule mod, ModuleEntry& me, ContextState& cs, const std::string& patch_path,
                               bool object_level, Diagnostics& diag, bool fatal) {
  if (!cs.patches_loaded) {
    if (!diag.check(sanitizerAddPatchesFromFile(patch_path.c_str(), me.ctx), "sanitizerAddPatchesFromFile", fatal)) {
      me.patch_failed = true;
      return false;
    }
    cs.patches_loaded = true;
  }
  bool ok = object_level ? patch_instruction_points(mod, kObjectPatchPoints, diag, fatal)
                         : patch_instruction_points(mod, kPatchPoints, diag, fatal);
  if (ok) ok = diag.check(sanitizerPatchModule(mod), "sanitizerPatchModule", fatal);
  me.patched = ok;
  me.patch_failed = !ok;
  diag.log("module %s %s", me.sha.substr(0, 12).c_str(), ok ? "patched" : "could not be patched");
  return ok;
}

// sanitizerGetFunctionPcAndSize for each symbol; a symbol the API does not know (a local __device__ callee
// placed in its kernel's section) is placed from any resolved symbol of the same section, since a section is
// loaded contiguously.
bool resolve_section_bases(CUmodule mod, ModuleEntry& me, const std::vector<FunctionEntry>& functions) {
  bool changed = false;
  for (uint32_t id : me.functions) {
    const FunctionEntry& f = functions[id];
    if (me.section_base.count(f.section)) continue;
    uint64_t pc = 0, size = 0;
    if (sanitizerGetFunctionPcAndSize(mod, f.name.c_str(), &pc, &size) == SANITIZER_SUCCESS && pc != 0) {
      me.section_base[f.section] = pc - f.value;
      changed = true;
    }
  }
  return changed;
}

}  // namespace rlc
