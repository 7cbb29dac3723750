"""`reuselens lines FILE`: the PC -> file:line table of a CUBIN, executable, library, object or run directory."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from reuselens.analyzer.errors import ReuseLensError, SettingsError
from reuselens.cli.common import prefix_map_from_args

if TYPE_CHECKING:  # the line mapper is imported when the command runs, not by every `reuselens` start-up
    from reuselens.analyzer.lineinfo import SourceMapper

LINES_FORMAT_VERSION = 1


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "lines",
        help="print the PC -> source line table of a CUBIN or executable",
        description="Print, for every SASS instruction of every kernel, the source file:line it comes from "
        "(and the inline chain with --inline). FILE is a CUBIN, an executable, shared library or "
        "object with embedded device code, a fatbinary, or a run directory.",
    )
    parser.add_argument("file", metavar="FILE")
    parser.add_argument(
        "--arch",
        metavar="SM",
        help="GPU architecture to read from a fatbinary, e.g. sm_90 (default: the highest present)",
    )
    parser.add_argument(
        "--kernel", metavar="REGEX", help="only functions whose mangled or demangled name matches REGEX (re.search)"
    )
    parser.add_argument("--inline", action="store_true", help="show the full inline chain of each instruction")
    parser.add_argument("--sass", action="store_true", help="show the SASS text of each instruction (nvdisasm)")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.add_argument(
        "--prefix-map",
        action="append",
        default=[],
        metavar="OLD=NEW",
        help="rewrite source paths that start with OLD (build tree) to NEW; repeatable",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    mapper, labels = _open(Path(args.file).expanduser(), args.arch, prefix_map_from_args(args))
    pattern = _compile(args.kernel)
    if not mapper.module_ids:
        raise ReuseLensError(
            f"{args.file}: the run lists no modules (the app loaded no device code before it stopped); nothing to map"
        )
    modules = [_module_rows(mapper, module, labels[module], pattern, args) for module in mapper.module_ids]
    if pattern is not None and not any(module["functions"] for module in modules):
        raise ReuseLensError(
            f"--kernel {args.kernel!r} matches no function in {args.file} "
            f"({_function_count(mapper)} functions; leave out --kernel to list them)"
        )
    if args.format == "json":
        doc = {
            "format": "reuselens-lines",
            "version": LINES_FORMAT_VERSION,
            "input": str(args.file),
            "modules": modules,
            "notes": mapper.notes,
        }
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        _print_table(modules, mapper.notes, args)
    return 0


def _function_count(mapper: SourceMapper) -> int:
    return sum(len(mapper.table(module).kernels()) for module in mapper.module_ids)


def _open(path: Path, arch: str | None, prefix_map: dict[str, str]) -> tuple[SourceMapper, dict[str, str]]:
    from reuselens.analyzer.lineinfo import SourceMapper, cubins_from_binary, select_cubins

    if path.is_dir():
        mapper = SourceMapper.from_run(path, prefix_map=prefix_map)
        return mapper, {m: "" for m in mapper.module_ids}
    if not path.exists():
        raise ReuseLensError(f"{path}: no such file")
    if arch is not None and not re.fullmatch(r"sm_\d+[a-z]?", arch):
        raise SettingsError(f"--arch {arch!r}: expected a name like sm_90")
    cubins = select_cubins(cubins_from_binary(path), arch.rstrip("abcdef") if arch else None)
    modules, labels = {}, {}
    for i, (cubin_arch, data) in enumerate(cubins):
        key = f"{i}"
        modules[key], labels[key] = data, cubin_arch
    return SourceMapper(modules, prefix_map=prefix_map), labels


def _compile(regex: str | None) -> re.Pattern | None:
    if regex is None:
        return None
    try:
        return re.compile(regex)
    except re.error as error:
        raise SettingsError(f"--kernel {regex!r} is not a valid regular expression: {error}") from None


def _module_rows(mapper: SourceMapper, module: str, arch: str, pattern, args) -> dict:
    from reuselens.analyzer.lineinfo import demangle
    from reuselens.analyzer.lineinfo.mapper import INSTRUCTION_BYTES

    table = mapper.table(module)
    functions = []
    kernels = [
        k for k in table.kernels() if pattern is None or any(pattern.search(n) for n in (k.name, demangle(k.name)))
    ]
    if args.sass:
        mapper.prepare_sass({module: [k.name for k in kernels]})  # one nvdisasm run for the module
    for kernel in kernels:
        names = (kernel.name, demangle(kernel.name))
        section = table.elf.sections[kernel.shndx]
        rows = []
        for pc in range(0, section.size, INSTRUCTION_BYTES):
            owner = table.containing_function(kernel.shndx, pc)
            loc = mapper.lookup(module, kernel.name, pc)
            row = {"pc": pc, "symbol": demangle(owner.name) if owner else names[1]}
            row.update(loc.to_dict() if loc else {"file": None, "line": None})
            if args.sass:
                row["sass"] = mapper.sass(module, kernel.name, pc)
            rows.append(row)
        functions.append({"name": kernel.name, "demangled": names[1], "instructions": rows})
    return {
        "module": module if not arch else None,
        "arch": arch or (f"sm_{table.arch}" if table.arch else None),
        "line_info": table.has_line_info,
        "functions": functions,
    }


def _print_table(modules: list[dict], notes: list[str], args) -> None:
    out = sys.stdout
    for module in modules:
        for function in module["functions"]:
            out.write(f"{function['demangled']}  [{module['arch']}]\n")
            for row in function["instructions"]:
                where = f"{row['file']}:{row['line']}" if row["file"] else "(no line info)"
                line = f"  {row['pc']:#06x}  {where}"
                if args.inline and row.get("inline"):
                    line += "  " + " <- ".join(
                        f"{f['function']} {Path(f['file']).name}:{f['line']}" for f in row["inline"]
                    )
                if args.sass:
                    line += f"  | {row.get('sass') or ''}"
                out.write(line + "\n")
    for note in notes:
        out.write(f"note: {note}\n")
