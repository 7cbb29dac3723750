"""An expert's answer key for the real-application suite, and how ReuseLens's findings score against it.

The key (tests/realapps/answer_key.json, `format: reuselens-answer-key`, version 1) was written by reading the
kernels before any run. Per app it lists `expected` items (a pattern at file:line in one kernel, primary or
secondary), `acceptable` entries (findings that would be correct but that the key does not require) and
`controls` (lines or whole kernels that must get no warning-level finding). docs/patterns.md, "Answer key on
real applications", describes the format and the rules below.

A finding sits on the places of its PCs (`source.file`/`line` and every frame of `source.inline`, so a
finding inside an inlined helper also sits on the call site), on its barrier's line (removable-barrier) and on
its own `file`/`line` fields if it has them. It matches an item when the kernel's demangled name contains the
item's `kernel`, its pattern is the item's (or an alternative the item lists, or one the key declares
equivalent) and one of its places has the item's file (by base name) and line (or a line of the item's
`statement_lines`, for a statement the compiler may place on any of its lines).

Scores per app and overall:
  recall (primary / all): expected items matched by a finding of any severity, over the items;
  precision: warning-level findings that match an expected item or an acceptable entry, over all warnings;
  control FP: warning-level findings on a control (its lines, or any line for `lines: "all"`, restricted to
              the control's `patterns` when it lists some);
  unplaced: findings with no source line (a binary without -lineinfo, or PCs the line table misses).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Iterable

FORMAT = "reuselens-answer-key"
VERSION = 1
SCORE_FORMAT = "reuselens-answer-key-score"


class AnswerKeyError(ValueError):
    """The key file is unreadable or not a version-1 answer key."""


def load_key(path: Path) -> dict[str, Any]:
    try:
        key = json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:
        raise AnswerKeyError(f"{path}: cannot read the answer key ({error})") from None
    if not isinstance(key, dict) or key.get("format") != FORMAT or key.get("version") != VERSION:
        raise AnswerKeyError(f"{path}: not a version-{VERSION} {FORMAT} file")
    if not isinstance(key.get("apps"), dict):
        raise AnswerKeyError(f"{path}: no 'apps' object")
    return key


# ---- where a finding sits ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Place:
    file: str
    line: int


def _source_places(source: Any) -> list[Place]:
    if not isinstance(source, dict):
        return []
    places = []
    if source.get("file") and isinstance(source.get("line"), int) and source["line"] > 0:
        places.append(Place(str(source["file"]), source["line"]))
    for frame in source.get("inline") or ():
        if isinstance(frame, dict) and frame.get("file") and isinstance(frame.get("line"), int) and frame["line"] > 0:
            places.append(Place(str(frame["file"]), frame["line"]))
    return places


def finding_places(kernel: dict[str, Any], finding: dict[str, Any]) -> list[Place]:
    """Every source line a finding sits on; empty when it has none (an unplaced finding)."""
    nodes = {node.get("id"): node for node in kernel.get("nodes", []) if isinstance(node, dict)}
    places: list[Place] = []
    for pc in finding.get("pcs") or ():
        places += _source_places((nodes.get(pc) or {}).get("source"))
    barrier = finding.get("barrier")
    if isinstance(barrier, dict):
        places += _source_places(barrier.get("source"))
    places += _source_places({"file": finding.get("file"), "line": finding.get("line")})
    return list(dict.fromkeys(places))


def kernel_name(kernel: dict[str, Any]) -> str:
    return str(kernel.get("name") or kernel.get("mangled") or "")


# ---- matching ------------------------------------------------------------------------------------------------


def _equivalents(key: dict[str, Any]) -> dict[str, frozenset[str]]:
    groups: dict[str, frozenset[str]] = {}
    for group in key.get("equivalent_patterns", []):
        members = frozenset(group["patterns"])
        for pattern in members:
            groups[pattern] = groups.get(pattern, frozenset()) | members
    return groups


def _same_file(place_file: str, key_file: str) -> bool:
    return PurePosixPath(place_file.replace("\\", "/")).name == PurePosixPath(key_file).name


def _on_lines(places: Iterable[Place], key_file: str, lines: Iterable[int]) -> bool:
    wanted = set(lines)
    return any(_same_file(p.file, key_file) and p.line in wanted for p in places)


@dataclass
class Matcher:
    key: dict[str, Any]
    equivalents: dict[str, frozenset[str]] = field(init=False)

    def __post_init__(self) -> None:
        self.equivalents = _equivalents(self.key)

    def expand(self, pattern: str) -> frozenset[str]:
        return self.equivalents.get(pattern, frozenset({pattern}))

    def item_accepts(self, item: dict[str, Any], finding: dict[str, Any]) -> bool:
        pattern = finding.get("pattern")
        if pattern in self.expand(item["pattern"]):
            return True
        for alternative in item.get("alternatives", ()):
            if pattern == alternative["pattern"] and alternative.get("scope") in (None, finding.get("scope")):
                return True
        return False

    def matches_item(self, item: dict[str, Any], name: str, finding: dict[str, Any], places: list[Place]) -> bool:
        return (
            item["kernel"] in name
            and self.item_accepts(item, finding)
            and _on_lines(places, item["file"], [item["line"], *item.get("statement_lines", ())])
        )

    def matches_acceptable(
        self, entry: dict[str, Any], name: str, finding: dict[str, Any], places: list[Place]
    ) -> bool:
        allowed = set().union(*(self.expand(p) for p in entry["patterns"]))
        return (
            entry["kernel"] in name
            and finding.get("pattern") in allowed
            and _on_lines(places, entry["file"], entry["lines"])
        )

    def hits_control(self, control: dict[str, Any], name: str, finding: dict[str, Any], places: list[Place]) -> bool:
        if control["kernel"] not in name:
            return False
        if control.get("patterns") and finding.get("pattern") not in control["patterns"]:
            return False
        return control["lines"] == "all" or _on_lines(places, control["file"], control["lines"])


# ---- scoring -------------------------------------------------------------------------------------------------


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def score_app(key: dict[str, Any], app: str, report: dict[str, Any]) -> dict[str, Any]:
    """One app's figures (see the module docstring) and the lists behind them."""
    spec = key["apps"][app]
    matcher = Matcher(key)
    expected = spec.get("expected", [])
    found: set[str] = set()
    warnings = precise = 0
    unplaced = unplaced_warnings = 0
    control_hits: list[dict[str, Any]] = []
    unexpected: list[dict[str, Any]] = []
    for kernel in report.get("kernels", []):
        name = kernel_name(kernel)
        for finding in kernel.get("findings", []):
            places = finding_places(kernel, finding)
            is_warning = finding.get("severity") == "warning"
            if not places:
                unplaced += 1
                unplaced_warnings += is_warning
            matched = [item["id"] for item in expected if matcher.matches_item(item, name, finding, places)]
            found.update(matched)
            if not is_warning:
                continue
            warnings += 1
            where = {
                "kernel": name,
                "pattern": finding.get("pattern"),
                "id": finding.get("id"),
                "places": [f"{PurePosixPath(p.file).name}:{p.line}" for p in places],
            }
            if matched or any(matcher.matches_acceptable(e, name, finding, places) for e in spec.get("acceptable", [])):
                precise += 1
            else:
                unexpected.append(where)
            if any(matcher.hits_control(c, name, finding, places) for c in spec.get("controls", [])):
                control_hits.append(where)
    primary = [item["id"] for item in expected if item.get("primary")]
    return {
        "primary_expected": len(primary),
        "primary_found": sum(i in found for i in primary),
        "expected": len(expected),
        "found": len(found),
        "recall_primary": _ratio(sum(i in found for i in primary), len(primary)),
        "recall_all": _ratio(len(found), len(expected)),
        "warnings": warnings,
        "warnings_precise": precise,
        "precision": _ratio(precise, warnings),
        "control_fp": len(control_hits),
        "unplaced": unplaced,
        "unplaced_warnings": unplaced_warnings,
        "missed_primary": [i for i in primary if i not in found],
        "missed_secondary": [item["id"] for item in expected if not item.get("primary") and item["id"] not in found],
        "control_hits": control_hits,
        "unexpected_warnings": unexpected,
    }


_COUNTS = (
    "primary_expected",
    "primary_found",
    "expected",
    "found",
    "warnings",
    "warnings_precise",
    "control_fp",
    "unplaced",
    "unplaced_warnings",
)


def overall(per_app: dict[str, dict[str, Any]]) -> dict[str, Any]:
    scored = [s for s in per_app.values() if "missing" not in s]
    total = {name: sum(s[name] for s in scored) for name in _COUNTS}
    total.update(
        apps_scored=len(scored),
        apps_missing=sorted(a for a, s in per_app.items() if "missing" in s),
        recall_primary=_ratio(total["primary_found"], total["primary_expected"]),
        recall_all=_ratio(total["found"], total["expected"]),
        precision=_ratio(total["warnings_precise"], total["warnings"]),
    )
    return total


def find_report(runs: Path, app: str) -> Path | None:
    """The app's report.json under a runs folder: DIR/<app>/, DIR/<app>-full/, or the latest round's
    <app>-full/ under DIR/r<N>/ or DIR/runs/r<N>/ (the layout benchmarks/realapps.py leaves)."""
    for direct in (runs / app / "report.json", runs / f"{app}-full" / "report.json"):
        if direct.is_file():
            return direct
    rounds = []
    for base in (runs, runs / "runs"):
        for folder in base.glob("r*"):
            match = re.fullmatch(r"r(\d+)", folder.name)
            candidate = folder / f"{app}-full" / "report.json"
            if match and candidate.is_file():
                rounds.append((int(match.group(1)), candidate))
    return max(rounds)[1] if rounds else None


def score(key: dict[str, Any], runs: Path) -> dict[str, Any]:
    per_app: dict[str, dict[str, Any]] = {}
    for app in key["apps"]:
        path = find_report(runs, app)
        if path is None:
            per_app[app] = {"missing": f"no report.json for {app} under {runs}"}
            continue
        try:
            report = json.loads(path.read_text())
        except (OSError, ValueError) as error:
            per_app[app] = {"missing": f"{path}: unreadable ({error})"}
            continue
        per_app[app] = {"report": str(path), **score_app(key, app, report)}
    return {"format": SCORE_FORMAT, "version": 1, "runs": str(runs), "apps": per_app, "overall": overall(per_app)}


# ---- checking the key itself ---------------------------------------------------------------------------------

# Blank, a // or /* comment, a block comment's continuation ("* text", "*/"), or a lone brace.
_COMMENT_OR_BRACE = re.compile(r"^(//.*|/\*.*|\*(\s.*|/.*)?|[{}]\s*;?|)$")


def _is_code(text: str) -> bool:
    return not _COMMENT_OR_BRACE.match(text.strip())


def _kernels_overlap(a: str, b: str) -> bool:
    return a in b or b in a


def check_key(key: dict[str, Any], pattern_ids: Iterable[str]) -> list[str]:
    """Problems with the key's structure: unknown pattern ids, duplicate ids, bad lines, and a control that
    would count an expected item's own finding as a false positive."""
    known = set(pattern_ids)
    problems: list[str] = []
    matcher = Matcher(key)
    for group in key.get("equivalent_patterns", []):
        problems += [f"equivalent_patterns: unknown pattern {p!r}" for p in group["patterns"] if p not in known]
    ids: set[str] = set()
    for app, spec in key["apps"].items():
        for item in spec.get("expected", []):
            where = f"{app} {item.get('id')}"
            for name in ("id", "kernel", "file", "line", "pattern", "primary", "why"):
                if name not in item:
                    problems.append(f"{where}: no {name!r}")
            if item.get("id") in ids:
                problems.append(f"{where}: duplicate id")
            ids.add(item.get("id"))
            patterns = [item.get("pattern")] + [a.get("pattern") for a in item.get("alternatives", ())]
            problems += [f"{where}: unknown pattern {p!r}" for p in patterns if p not in known]
            if not isinstance(item.get("line"), int) or item["line"] < 1:
                problems.append(f"{where}: line must be a positive integer")
            elif "statement_lines" in item and item["line"] not in item["statement_lines"]:
                problems.append(f"{where}: statement_lines must include line {item['line']}")
        for section in ("controls", "acceptable"):
            for entry in spec.get(section, []):
                where = f"{app} {section} {entry.get('kernel')}"
                for name in ("kernel", "file", "lines", "why"):
                    if name not in entry:
                        problems.append(f"{where}: no {name!r}")
                if section == "acceptable" and not entry.get("patterns"):
                    problems.append(f"{where}: an acceptable entry must list its patterns")
                problems += [f"{where}: unknown pattern {p!r}" for p in entry.get("patterns", ()) if p not in known]
                lines = entry.get("lines")
                if lines != "all" and not (
                    isinstance(lines, list) and lines and all(isinstance(n, int) and n > 0 for n in lines)
                ):
                    problems.append(f'{where}: lines must be "all" or a list of positive integers')
        for control in spec.get("controls", []):
            for item in spec.get("expected", []):
                if not _kernels_overlap(control.get("kernel", ""), item.get("kernel", "")):
                    continue
                item_lines = {item.get("line"), *item.get("statement_lines", ())}
                same_lines = control.get("lines") == "all" or (
                    PurePosixPath(control.get("file", "")).name == PurePosixPath(item.get("file", "")).name
                    and item_lines & set(control.get("lines") or ())
                )
                accepted = set(matcher.expand(item.get("pattern", ""))) | {
                    a.get("pattern") for a in item.get("alternatives", ())
                }
                if same_lines and (not control.get("patterns") or accepted & set(control["patterns"])):
                    problems.append(
                        f"{app}: control on {control.get('kernel')} covers expected item {item.get('id')} "
                        f"with a pattern it expects"
                    )
    return problems


def check_key_sources(key: dict[str, Any], manifest: dict[str, Any], src: Path) -> list[str]:
    """Problems with the key's places in the staged sources: an unknown app, a missing file, a line past the
    end of its file or one without code (blank, comment, lone brace)."""
    apps = {app["name"]: app for app in manifest["apps"]}
    problems: list[str] = []
    for name, spec in key["apps"].items():
        if name not in apps:
            problems.append(f"{name}: not an app of the manifest")
            continue
        root = src / apps[name]["source"] / apps[name]["dir"]
        entries = [
            (e.get("id"), e["file"], [e["line"], *e.get("statement_lines", ())]) for e in spec.get("expected", [])
        ]
        entries += [
            (e["kernel"], e["file"], [] if e["lines"] == "all" else e["lines"])
            for e in spec.get("controls", []) + spec.get("acceptable", [])
        ]
        for label, rel, lines in entries:
            path = root / rel
            if not path.is_file():
                problems.append(f"{name} {label}: {rel} is not in the staged sources ({root})")
                continue
            text = path.read_text(errors="replace").splitlines()
            for line in lines:
                if line > len(text):
                    problems.append(f"{name} {label}: {rel}:{line} is past the end ({len(text)} lines)")
                elif not _is_code(text[line - 1]):
                    problems.append(f"{name} {label}: {rel}:{line} holds no code: {text[line - 1].strip()!r}")
    return problems
