"""analyzer/_engine.pyi must describe the compiled module exactly: the same public names, the same classes and
methods, and for every function the same argument names with defaults in the same places (pybind11 writes each
signature into the function's docstring). A binding added, renamed or removed without the stub fails here."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

_engine = pytest.importorskip("reuselens.analyzer._engine", reason="the compiled engine is not built")

STUB = Path(__file__).resolve().parents[2] / "analyzer" / "_engine.pyi"


def public(names) -> set[str]:
    return {n for n in names if not n.startswith("_")}


def stub_tree() -> ast.Module:
    return ast.parse(STUB.read_text(), filename=str(STUB))


def stub_module_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return public(names)


def stub_class(tree: ast.Module, name: str) -> ast.ClassDef:
    return next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)


def stub_methods(cls: ast.ClassDef) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}


def stub_signature(fn: ast.FunctionDef) -> list[tuple[str, bool]]:
    """(argument name, has a default) for each argument, `self` left out."""
    args = fn.args.args
    with_default = len(args) - len(fn.args.defaults)
    sig = [(a.arg, i >= with_default) for i, a in enumerate(args)]
    return [s for s in sig if s[0] != "self"]


def top_level_split(text: str) -> list[str]:
    """Splits `text` at the commas outside brackets (annotations such as Annotated[list[int], ...] hold commas)."""
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    return [p.strip() for p in parts + [current] if p.strip()]


def bound_signature(obj) -> list[tuple[str, bool]]:
    """(argument name, has a default) from the signature line pybind11 puts first in the docstring."""
    first = obj.__doc__.strip().splitlines()[0]
    inside = re.match(r"^\w+\((.*)\) -> .*$", first)
    assert inside, f"no pybind11 signature in {first!r}"
    sig = [(p.split(":")[0].strip(), "=" in p) for p in top_level_split(inside.group(1))]
    return [s for s in sig if s[0] != "self"]


def compiled_classes() -> dict[str, type]:
    return {n: v for n, v in vars(_engine).items() if inspect.isclass(v) and not n.startswith("_")}


def test_stub_names_exactly_the_module_public_names():
    assert stub_module_names(stub_tree()) == public(dir(_engine))


def test_stub_classes_have_exactly_the_compiled_methods():
    tree = stub_tree()
    for name, cls in compiled_classes().items():
        compiled = public(vars(cls)) | ({"__init__"} if "__init__" in vars(cls) else set())
        declared = set(stub_methods(stub_class(tree, name)))
        assert declared == compiled, name


def test_stub_bases_match_the_compiled_classes():
    tree = stub_tree()
    for name, cls in compiled_classes().items():
        declared = [ast.unparse(b) for b in stub_class(tree, name).bases]
        compiled = [b.__name__ for b in cls.__bases__ if b.__name__ not in ("object", "pybind11_object")]
        assert declared == compiled, name


def test_stub_arguments_match_the_bindings():
    tree = stub_tree()
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    for name, fn in functions.items():
        assert stub_signature(fn) == bound_signature(getattr(_engine, name)), name
    for cls_name, cls in compiled_classes().items():
        if not issubclass(cls, BaseException):
            for name, fn in stub_methods(stub_class(tree, cls_name)).items():
                assert stub_signature(fn) == bound_signature(getattr(cls, name)), f"{cls_name}.{name}"


def test_stub_constants_are_ints():
    tree = stub_tree()
    annotated = {
        n.target.id: ast.unparse(n.annotation)
        for n in tree.body
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
    }
    for name, annotation in annotated.items():
        assert type(getattr(_engine, name)).__name__ == annotation, name


def test_every_stub_definition_has_a_one_line_docstring():
    tree = stub_tree()
    defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and not n.name.startswith("_")]
    defs += [m for n in ast.walk(tree) if isinstance(n, ast.ClassDef) for m in stub_methods(n).values()]
    for node in defs:
        doc = ast.get_docstring(node)
        assert doc and "\n" not in doc, node.name
