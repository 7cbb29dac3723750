// Instrumenting a loaded module with the device patch (patch.cu), and finding where its functions were loaded.
#pragma once

#include <cuda.h>

#include <string>
#include <vector>

#include "diagnostics.h"
#include "run_state.h"

namespace rlc {

// Loads the patch fatbin into the context once, patches every instruction kind the patch handles (the object
// patch's kinds in object-level mode) and the module; sets me.patched or me.patch_failed.
bool patch_module_instructions(CUmodule mod, ModuleEntry& me, ContextState& cs, const std::string& patch_path,
                               bool object_level, Diagnostics& diag, bool fatal = true);
// Absolute addresses of the module's sections, from the functions the API can place; true if any is new.
bool resolve_section_bases(CUmodule mod, ModuleEntry& me, const std::vector<FunctionEntry>& functions);

}  // namespace rlc
