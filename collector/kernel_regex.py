"""The kernel filter's regex syntax, checked before a run exactly as the tool library will read it.

The tool library (collector/native/src/kernel_filter.cpp) compiles the filter with the C library's
regcomp(REG_EXTENDED | REG_NOSUB), whose matcher needs no stack in proportion to the name (std::regex's
recursion overflowed it on 30,000-character template names), and refuses two things on top: escapes of letters
and digits other than \\w \\W \\s \\S \\b \\B (back-references, and \\d, which POSIX would read as a plain "d"),
and non-ASCII characters. This module applies the same rules with the same regcomp, so a filter the launcher
accepts is one the collector accepts (tests/collector/test_kernel_filter.py compares the two). docs/collector.md
"Kernel filter syntax".
"""

from __future__ import annotations

import ctypes

REG_EXTENDED = 1
REG_NOSUB = 8
_GNU_LETTER_ESCAPES = "wWsSbB"
_REGEX_T_BYTES = 1024  # larger than any C library's regex_t (glibc: 64 bytes)


def _bracket_end(text: str, open_at: int) -> int:
    """The index just past the bracket expression opened at text[open_at] (len(text) if it is not closed)."""
    i = open_at + 1
    if i < len(text) and text[i] == "^":
        i += 1
    if i < len(text) and text[i] == "]":  # a leading ']' is a member, not the end
        i += 1
    while i < len(text) and text[i] != "]":
        kind = text[i + 1] if text[i] == "[" and i + 1 < len(text) else ""
        if kind in (":", "=", "."):  # [:alpha:], [=a=], [.-.] may hold a ']'
            close = text.find(kind + "]", i + 2)
            if close < 0:
                return len(text)
            i = close + 2
        else:
            i += 1
    return i + 1 if i < len(text) else len(text)


def _syntax_problem(text: str) -> str | None:
    i = 0
    while i < len(text):
        c = text[i]
        if ord(c) >= 0x80:
            return "non-ASCII characters are not supported (kernel names are ASCII)"
        if c == "[":
            i = _bracket_end(text, i)
            continue
        if c == "\\" and i + 1 < len(text):
            e = text[i + 1]
            if e.isascii() and e.isdigit():
                return f"back-reference \\{e} is not supported"
            if e.isascii() and e.isalpha() and e not in _GNU_LETTER_ESCAPES:
                return f"\\{e} is not POSIX extended syntax (write a bracket expression such as [0-9])"
            i += 2
            continue
        i += 1
    return None


def _libc() -> ctypes.CDLL | None:
    import ctypes.util  # only with a filter to check: 3 ms of the launcher's start-up on the H200 host

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.regcomp.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        libc.regerror.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
        libc.regfree.argtypes = [ctypes.c_void_p]
        return libc
    except (OSError, AttributeError):
        return None


def kernel_regex_problem(text: str) -> str | None:
    """Why `text` is not a kernel filter the collector accepts, or None when it is one."""
    problem = _syntax_problem(text)
    if problem is not None:
        return problem
    libc = _libc()
    if libc is None:  # no C library to ask (not Linux): the collector reports it in collector.log
        return None
    compiled = ctypes.create_string_buffer(_REGEX_T_BYTES)
    result = libc.regcomp(compiled, text.encode("ascii"), REG_EXTENDED | REG_NOSUB)
    if result == 0:
        libc.regfree(compiled)
        return None
    message = ctypes.create_string_buffer(256)
    libc.regerror(result, compiled, message, len(message))
    return message.value.decode("ascii", "replace")
