"""Readable names for kernels and inlined functions.

ptxas names the copies it makes of `__noinline__` callees and internal helpers by joining names with `$`
(`$_Z11call_kernelPfPKfi$_Z6slowfnf`, `$__internal_0_$__cuda_sm20_sqrt_rn_f32_slowpath`); these are not
valid Itanium manglings, so each `$`-separated part is demangled on its own and the parts are joined
with `$` again: `call_kernel(float*, float const*, int)$slowfn(float)`. nvcc -rdc prefixes file-local
kernels with `__nv_static_<N>__<unit id>`; the prefix is dropped.
"""

from __future__ import annotations

import functools
import re

import cxxfilt

# nvcc -rdc renames file-local kernels: __nv_static_<N>__<N-character unit id><mangled name>.
_NV_STATIC = re.compile(r"__nv_static_(\d+)__")


@functools.lru_cache(maxsize=65536)
def demangle(name: str) -> str:
    """Demangled form of a mangled C++ name; unmangled names (extern "C", PTX helpers) pass through."""
    if "$" in name:
        parts = [p for p in name.split("$") if p]
        return "$".join(_demangle_one(p) for p in parts) if parts else name
    return _demangle_one(name)


def _demangle_one(name: str) -> str:
    m = _NV_STATIC.match(name)
    if m:
        rest = name[m.end() + int(m.group(1)) :]
        for candidate in (rest, rest[1:]):
            if candidate.startswith("_Z"):
                return _demangle_one(candidate)
    if not name.startswith("_Z"):
        return name
    try:
        return cxxfilt.demangle(name, external_only=False)
    except Exception:  # noqa: BLE001 - cxxfilt.InvalidName and friends: keep the mangled name
        return name
