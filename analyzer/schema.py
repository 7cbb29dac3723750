"""A small declarative checker for the JSON documents ReuseLens reads (run.json, analysis.json, report.json).

Each format's one reader states the document's shape once, as nested specs built from the classes below, and
calls :func:`check`. The first violation raises :class:`SchemaError` whose text names the field's path and what
was expected (``kernels[3].nodes[7].pc: expected an integer 0 to 2^64-1, found str 'x'``); the reader prefixes
the file name and raises its own ReuseLensError, so malformed input is one line, never a traceback further on.

Unknown fields are allowed (formats add fields without a version bump, docs/run-directory.md). Every number,
string and list has explicit limits so that no later stage sees a value it cannot hold: an int past 64 bits
for the C++ engine, NaN or infinity in arithmetic, a list of a billion entries.

Public API: :class:`SchemaError`, :class:`JsonError`, :func:`decode`, :func:`check`, and the spec classes :class:`Int`, :class:`Num`, :class:`Str`,
:class:`PathText`, :class:`Bool`, :class:`Enum`, :class:`Maybe`, :class:`List`, :class:`Obj`, :class:`Map`, :data:`ANY`.
"""

from __future__ import annotations

import json
import math
from typing import Any, Callable, Iterable

U32 = 1 << 32
U64 = 1 << 64
MAX_LIST = 10_000_000  # entries of any one list: far above a real profile, below what exhausts memory later
MAX_STR = 1 << 20  # characters of any one string (a mangled name, a path, a message)
MISSING = "is missing"


class SchemaError(ValueError):
    """`path: problem`, the path in the document's own notation (`launches[2].grid[0]`)."""

    def __init__(self, problem: str, path: str = ""):
        super().__init__(problem)
        self.problem, self.path = problem, path

    def within(self, step: str) -> SchemaError:
        """The same error one level up: `step` is `.name` or `[index]`."""
        self.path = step + self.path
        return self

    def __str__(self) -> str:
        if not self.path:
            return self.problem
        return f"{self.path.lstrip('.')}{' ' if self.problem == MISSING else ': '}{self.problem}"


class JsonError(SchemaError):
    """The text is not JSON; `detail` is the decoder's own words."""

    def __init__(self, detail: str):
        super().__init__(f"not readable as JSON ({detail})")
        self.detail = detail


def decode(raw: bytes | str) -> Any:
    """JSON text -> value; JsonError for text that is not JSON, including nesting so deep that Python's decoder
    gives up with RecursionError (`[[[[...` of 100,000 levels is a few hundred kilobytes)."""
    try:
        return json.loads(raw)
    except RecursionError:
        raise JsonError("nested too deeply") from None
    except ValueError as error:  # JSONDecodeError, and UnicodeDecodeError for bytes that are not UTF-8
        raise JsonError(str(error)) from None


def check(document: Any, spec: Spec) -> None:
    """Raise SchemaError at the first place `document` departs from `spec`."""
    spec.check(document)


def describe(value: Any) -> str:
    """A short, printable account of a found value (never the whole of a huge string or list)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"bool {str(value).lower()}"
    if isinstance(value, (int, float)):
        text = repr(value)
        return f"{type(value).__name__} {text if len(text) <= 24 else text[:21] + '...'}"
    if isinstance(value, str):
        return f"str {value[:40]!r}" + ("..." if len(value) > 40 else "")
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _bound(n: int) -> str:
    for power in (64, 63, 32, 31):
        if n == (1 << power) - 1:
            return f"2^{power}-1"
    return str(n)


class Spec:
    def check(self, value: Any) -> None:
        raise NotImplementedError


class _Anything(Spec):
    def check(self, value: Any) -> None:
        return None


ANY = _Anything()


class Int(Spec):
    """An integer (JSON true/false are not integers) in [low, high]."""

    def __init__(self, low: int = 0, high: int = U64 - 1):
        self.low, self.high = low, high

    def check(self, value: Any) -> None:
        if type(value) is not int or not self.low <= value <= self.high:
            raise SchemaError(f"expected an integer {_bound(self.low)} to {_bound(self.high)}, found {describe(value)}")


class Num(Spec):
    """A finite number (int or float) in [low, high]; NaN and infinities, which Python's json accepts, are not."""

    def __init__(self, low: float = -math.inf, high: float = math.inf):
        self.low, self.high = low, high

    def check(self, value: Any) -> None:
        ok = type(value) in (int, float) and math.isfinite(value) and self.low <= value <= self.high
        if not ok:
            span = "" if (self.low, self.high) == (-math.inf, math.inf) else f" {self.low:g} to {self.high:g}"
            raise SchemaError(f"expected a finite number{span}, found {describe(value)}")


class Str(Spec):
    def __init__(self, max_len: int = MAX_STR, nonempty: bool = False):
        self.max_len, self.nonempty = max_len, nonempty

    def check(self, value: Any) -> None:
        if type(value) is not str or len(value) > self.max_len or (self.nonempty and not value):
            size = f"{'a non-empty' if self.nonempty else 'a'} string of at most {self.max_len} characters"
            raise SchemaError(f"expected {size}, found {describe(value)}")


class PathText(Str):
    """A file path: no NUL character (the OS cannot open one, and Python raises ValueError on it); with
    `relative`, also neither absolute nor climbing out with `..` (a path inside the document's directory; readers
    still resolve links before opening, rundir.inside_run)."""

    def __init__(self, relative: bool = False, max_len: int = 4096):
        super().__init__(max_len, nonempty=True)
        self.relative = relative

    def check(self, value: Any) -> None:
        super().check(value)
        if "\0" in value:
            raise SchemaError(f"expected a path, found {describe(value)} with a NUL character")
        if self.relative and (value.startswith("/") or ".." in value.split("/")):
            raise SchemaError(f"expected a path inside the directory, found {describe(value)}")


class Bool(Spec):
    def check(self, value: Any) -> None:
        if type(value) is not bool:
            raise SchemaError(f"expected true or false, found {describe(value)}")


class Enum(Spec):
    def __init__(self, *choices: Any):
        self.choices = choices

    def check(self, value: Any) -> None:
        # type() as well as ==: True == 1 must not pass for 1, nor 1.0 for 1
        if not any(type(value) is type(c) and value == c for c in self.choices):
            raise SchemaError(f"expected one of {', '.join(map(repr, self.choices))}, found {describe(value)}")


class Maybe(Spec):
    """null, or a value of `spec`."""

    def __init__(self, spec: Spec):
        self.spec = spec

    def check(self, value: Any) -> None:
        if value is not None:
            self.spec.check(value)


class List(Spec):
    def __init__(
        self,
        item: Spec,
        max_len: int = MAX_LIST,
        length: int | None = None,
        rule: Callable[[list[Any]], str | None] | None = None,
    ):
        self.item, self.max_len, self.length, self.rule = item, max_len, length, rule

    def check(self, value: Any) -> None:
        if type(value) is not list:
            raise SchemaError(f"expected a list, found {describe(value)}")
        if self.length is not None and len(value) != self.length:
            raise SchemaError(f"expected a list of {self.length}, found {describe(value)}")
        if len(value) > self.max_len:
            raise SchemaError(f"expected at most {self.max_len} entries, found {len(value)}")
        item = self.item
        for index, entry in enumerate(value):
            try:
                item.check(entry)
            except SchemaError as error:
                raise error.within(f"[{index}]") from None
        if self.rule is not None:
            problem = self.rule(value)
            if problem:
                raise SchemaError(problem)


class Obj(Spec):
    """A JSON object with the named fields (others are allowed and not looked at). A field in `required` must be
    present; any other listed field may be missing. `rule` checks relations between fields once they are known to
    be well formed; it returns a problem (optionally `field: problem`) or None."""

    def __init__(
        self,
        fields: dict[str, Spec],
        required: Iterable[str] = (),
        rule: Callable[[dict[str, Any]], str | SchemaError | None] | None = None,
    ):
        self.fields, self.required, self.rule = fields, tuple(required), rule
        self._fields = tuple((name, *_inline_test(spec), spec) for name, spec in fields.items())

    def check(self, value: Any) -> None:
        if type(value) is not dict:
            raise SchemaError(f"expected an object, found {describe(value)}")
        for name in self.required:
            if name not in value:
                raise SchemaError(MISSING).within(f".{name}")
        # A run.json of a thousand launches has tens of thousands of scalar fields: the common shapes are tested
        # inline, without a call per field; anything else, and every failure, goes through the spec's check.
        for name, kind, nullable, low, high, length, spec in self._fields:
            if name not in value:
                continue
            item = value[name]
            if item is None and nullable:
                continue
            if kind is _INT:
                if type(item) is int and low <= item <= high:
                    continue
            elif kind is _STR:
                if type(item) is str and low <= len(item) <= high:
                    continue
            elif kind is _BOOL:
                if type(item) is bool:
                    continue
            elif kind is _INTS:  # a short list of integers (grid, block): low..high bound the items
                if type(item) is list and len(item) == length and _ints_within(item, low, high):
                    continue
            try:
                spec.check(item)
            except SchemaError as error:
                raise error.within(f".{name}") from None
        if self.rule is not None:
            problem = self.rule(value)
            if isinstance(problem, SchemaError):
                raise problem
            if problem:
                raise SchemaError(problem)


class Map(Spec):
    """A JSON object used as a dictionary: string keys of at most `max_key` characters, values of `value`."""

    def __init__(self, value: Spec, max_len: int = MAX_LIST, max_key: int = MAX_STR):
        self.value, self.max_len, self.max_key = value, max_len, max_key

    def check(self, value: Any) -> None:
        if type(value) is not dict:
            raise SchemaError(f"expected an object, found {describe(value)}")
        if len(value) > self.max_len:
            raise SchemaError(f"expected at most {self.max_len} entries, found {len(value)}")
        for key, entry in value.items():
            if len(key) > self.max_key:
                raise SchemaError(f"key {key[:40]!r}... is longer than {self.max_key} characters")
            try:
                self.value.check(entry)
            except SchemaError as error:
                raise error.within(f"[{key[:60]!r}]") from None


_INT, _STR, _BOOL, _INTS, _OTHER = "int", "str", "bool", "ints", "other"


def _inline_test(spec: Spec) -> tuple[str, bool, int, int, int]:
    """How Obj.check tests a field of `spec` inline: (kind, null allowed, low, high, length); low and high bound
    an integer, a string's length (a plain Str: a PathText has more to check), or the items of a list of
    integers of fixed `length` without a rule."""
    nullable = type(spec) is Maybe
    inner = spec.spec if nullable else spec
    if type(inner) is Int:
        return _INT, nullable, inner.low, inner.high, 0
    if type(inner) is Str:
        return _STR, nullable, 1 if inner.nonempty else 0, inner.max_len, 0
    if type(inner) is Bool:
        return _BOOL, nullable, 0, 0, 0
    if type(inner) is List and type(inner.item) is Int and inner.length is not None and inner.rule is None:
        return _INTS, nullable, inner.item.low, inner.item.high, inner.length
    return _OTHER, False, 0, 0, 0


def _ints_within(items: list[Any], low: int, high: int) -> bool:
    for item in items:
        if type(item) is not int or not low <= item <= high:
            return False
    return True


def field_error(path: str, problem: str) -> SchemaError:
    """A rule's problem located at `path` (`block`, `edges[3].to`) inside the object it checks."""
    return SchemaError(problem, path if path.startswith("[") else f".{path}")
