"""The grep-level counts of issue 34, read from the source of a checkout (stdlib ast and text only: nothing of
the product is imported, and ../shared is not read).

Usage: ``python bench/code_counts.py [ROOT]`` prints the counts of one checkout (default: this one);
``python bench/code_counts.py --before DIR [ROOT]`` prints a before / after table (DIR before, ROOT after);
``--list`` also prints every finding, one per line, after the table. It takes a few seconds.

What each row counts:

(a) ``target_acc`` parameters: function parameters (positional, keyword-only, ``*``/``**``) named
    ``target_acc`` in every function and lambda under core/ and pages/ and in app.py; one per function.
(b) ``is_accuracy`` uses outside core/targets.py: every read of the name (``x.is_accuracy`` or a bare
    ``is_accuracy``; imports and definitions are not uses), split into core/ without core/cli/, core/cli/,
    and pages/ with app.py.
(c) hand-typed registry lists under core/, pages/, tests/ and app.py, docstrings included, outside the
    files that define a registry's entries. A registry's entries are read from its source: curve families
    (the ``name`` of each ``CurveFamily(...)`` in core/curves), schedule families (``ScheduleFamily(...)`` in
    core/curves), speed families (``SpeedFamily(...)`` and ``_family(...)`` in core/speed), readers
    (``Reader(...)`` in core/logs/reader.py), store kinds (``kind = "..."`` in core/library/store_*.py), device
    names (table keys and aliases: ``_gpu``/``_acc``/``_paleo(...)`` in core/devices/table.py) and CLI
    commands (the keys of ``COMMANDS`` in core/cli/__init__.py). One finding is either a list, tuple or set
    literal with two or more string elements that are entries of one registry, or one string (a docstring,
    an f-string part, a message) that enumerates two or more entries of one registry next to each other,
    separated only by commas, ``|``, ``/``, "or"/"and" and quotes or backticks (``"optimus, pow3 or
    exp3"``, ``{duckdb|postgresql}``); entries mentioned apart in prose are not counted. The column "whole"
    counts the findings that name at least half of the registry's entries (a copy of the list, not an example).
(d) function-level imports that repeat a module-level import of the same module in the same file: an
    ``import m`` or ``from m import x`` inside a function where the module's top level already imports from
    ``m`` (``import m`` or ``from m import ...``; ``if TYPE_CHECKING:`` blocks aside: they import nothing at
    run time). Such an import defers nothing: ``m`` is loaded with the module. One per import statement,
    under core/, pages/ and app.py.
(e) facade names unused outside their area: the names a facade ``core/<area>/__init__.py`` exports
    (``__all__``, else its public names other than ``import m`` modules), and of those, the ones no file
    outside the area uses. Outside the area: core/ except core/<area>/, pages/, app.py, serve.py, bench/,
    examples/, data/, and tests/ except tests/core/<area>/ (an area's own tests are inside it: they may
    import the module that defines a name). A use is ``from core.<area> import name``, ``alias.name``
    after ``import core.<area> as alias`` or ``from core import <area>``, ``core.<area>.name``, the text
    ``core.<area>.name`` in a string (``monkeypatch.setattr("core.plan.grid", ...)``), or a one-line
    ``from core.<area> import name`` in a doctest or a string (code a test runs in a subprocess). The row
    "... nor by tests" counts the names that no file outside the area other than tests uses (tests not
    counted as users).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


@dataclass
class Counts:
    """Every row's number, and each finding as ``path:line: text`` under its row."""

    numbers: dict[str, int] = field(default_factory=dict)
    findings: dict[str, list[str]] = field(default_factory=dict)

    def add(self, row: str, finding: str | None = None, n: int = 1) -> None:
        self.numbers[row] = self.numbers.get(row, 0) + n
        if finding is not None:
            self.findings.setdefault(row, []).append(finding)


def py_files(root: Path, *tops: str) -> list[Path]:
    out = []
    for top in tops:
        path = root / top
        if path.is_file():
            out.append(path)
        elif path.is_dir():
            out += sorted(p for p in path.rglob("*.py") if "__pycache__" not in p.parts)
    return out


def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


# ---------------------------------------------------------------- (a) and (b)
def target_acc_parameters(root: Path, counts: Counts) -> None:
    for path in py_files(root, "core", "pages", "app.py"):
        for node in ast.walk(parse(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                a = node.args
                names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if x]
                if "target_acc" in names:
                    counts.add("(a) target_acc parameters", f"{rel(root, path)}:{node.lineno}: "
                               f"{getattr(node, 'name', 'lambda')}")


def is_accuracy_uses(root: Path, counts: Counts) -> None:
    for path in py_files(root, "core", "pages", "app.py"):
        name = rel(root, path)
        if name == "core/targets.py":
            continue
        where = "core/cli" if name.startswith("core/cli/") else "core" if name.startswith("core/") else "pages"
        for node in ast.walk(parse(path)):
            if (isinstance(node, ast.Attribute) and node.attr == "is_accuracy") or \
                    (isinstance(node, ast.Name) and node.id == "is_accuracy"):
                counts.add(f"(b) is_accuracy uses in {where}", f"{name}:{node.lineno}")


# ---------------------------------------------------------------- (c)
@dataclass(frozen=True)
class Registry:
    name: str
    files: tuple[str, ...]          # globs under the root that define the entries
    callees: tuple[str, ...] = ()   # constructors whose first argument or ``name=`` is an entry
    attribute: str | None = None    # or: a class attribute holding the entry (``kind = "duckdb"``)
    dict_keys: str | None = None    # or: the keys of a dict literal assigned to this name
    aliases: bool = False           # ``aliases=(...)`` of each call are entries too
    also_exclude: tuple[str, ...] = ()  # other files of the registry itself (its lookup, its lists)


REGISTRIES = (
    Registry("curve families", ("core/curves/*.py",), ("CurveFamily",), also_exclude=("core/curves/registry.py",)),
    Registry("schedule families", ("core/curves/*.py",), ("ScheduleFamily",),
             also_exclude=("core/curves/registry.py",)),
    Registry("speed families", ("core/speed/*.py",), ("SpeedFamily", "_family"),
             also_exclude=("core/speed/registry.py",)),
    Registry("readers", ("core/logs/reader.py",), ("Reader",)),
    Registry("store kinds", ("core/library/store_*.py",), attribute="kind", also_exclude=("core/library/stores.py",)),
    Registry("devices", ("core/devices/table.py",), ("_gpu", "_acc", "_paleo"), aliases=True,
             also_exclude=("core/devices/names.py",)),
    Registry("CLI commands", ("core/cli/__init__.py",), dict_keys="COMMANDS"),
)


def _callee(node: ast.Call) -> str:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def _const_str(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def registry_entries(root: Path, reg: Registry) -> tuple[set[str], set[Path]]:
    """The entries of one registry, and the files that define them."""
    entries: set[str] = set()
    defining: set[Path] = {root / f for f in reg.also_exclude}
    for pattern in reg.files:
        for path in sorted(root.glob(pattern)):
            found = set()
            for node in ast.walk(parse(path)):
                if reg.callees and isinstance(node, ast.Call) and _callee(node) in reg.callees:
                    kw = {k.arg: k.value for k in node.keywords}
                    name = _const_str(kw.get("name")) or (_const_str(node.args[0]) if node.args else None)
                    if name:
                        found.add(name)
                    if reg.aliases and isinstance(kw.get("aliases"), ast.Tuple):
                        found.update(s for s in map(_const_str, kw["aliases"].elts) if s)
                elif reg.attribute and isinstance(node, ast.ClassDef):
                    for stmt in node.body:
                        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == reg.attribute
                                                                for t in stmt.targets) and _const_str(stmt.value):
                            found.add(_const_str(stmt.value))
                elif reg.dict_keys and isinstance(node, (ast.Assign, ast.AnnAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    if any(isinstance(t, ast.Name) and t.id == reg.dict_keys for t in targets) \
                            and isinstance(node.value, ast.Dict):
                        found.update(s for s in map(_const_str, node.value.keys) if s)
            if found:
                entries |= found
                defining.add(path)
    return entries, defining


def _enumeration_pattern(entries: set[str]) -> tuple[re.Pattern, re.Pattern]:
    """A run of two or more entries next to each other, separated only by list punctuation; and one entry."""
    alternatives = "|".join(re.escape(e) for e in sorted(entries, key=len, reverse=True))
    word = rf"(?<![\w.\-/])[`'\"]?({alternatives})[`'\"]?(?![\w\-]|\.\w|/\w)"
    sep = r"(?:\s*[,|/]\s*|\s+(?:or|and)\s+|,\s*(?:or|and)\s+)"
    return re.compile(rf"{word}(?:{sep}{word})+"), re.compile(word)


def registry_lists(root: Path, counts: Counts) -> None:
    registries = []
    for reg in REGISTRIES:
        entries, defining = registry_entries(root, reg)
        if len(entries) >= 2:
            registries.append((reg, entries, defining, *_enumeration_pattern(entries)))
    for path in py_files(root, "core", "pages", "tests", "app.py"):
        literals: list[tuple[int, list[str]]] = []      # (line, the strings of one list/tuple/set literal)
        texts: list[tuple[int, str]] = []
        for node in ast.walk(parse(path)):
            if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
                literals.append((node.lineno, [s for s in map(_const_str, node.elts) if s is not None]))
            elif (text := _const_str(node)) is not None:
                texts.append((getattr(node, "lineno", 0), text))
        for reg, entries, defining, run, word in registries:
            if path in defining:
                continue
            found = [(line, named) for line, strings in literals
                     if len(set(named := [s for s in strings if s in entries])) >= 2]
            found += [(line, word.findall(m.group(0))) for line, text in texts for m in run.finditer(text)]
            for line, names in found:
                if len(set(names)) < 2:
                    continue
                counts.add("(c) hand-typed registry lists", f"{rel(root, path)}:{line}: {reg.name}: {', '.join(names)}")
                if len(set(names)) >= len(entries) / 2:
                    counts.add("(c2) ... naming half a registry or more")


# ---------------------------------------------------------------- (d)
def _modules(node: ast.Import | ast.ImportFrom, package: str) -> set[str]:
    """The modules an import statement imports from, dotted and absolute."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names}
    base = node.module or ""
    if node.level:
        anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
        base = ".".join([*anchor, base] if base else anchor)
    return {base}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _top_level_modules(body: list[ast.stmt], package: str) -> set[str]:
    out: set[str] = set()
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= _modules(node, package)
        elif isinstance(node, ast.Try):
            out |= _top_level_modules(node.body, package)
        elif isinstance(node, ast.If) and not _is_type_checking(node):
            out |= _top_level_modules(node.body, package) | _top_level_modules(node.orelse, package)
    return out


def repeated_imports(root: Path, counts: Counts) -> None:
    row = "(d) function-level imports repeating a top-level one"
    for path in py_files(root, "core", "pages", "app.py"):
        tree = parse(path)
        parts = path.relative_to(root).with_suffix("").parts
        package = ".".join(parts[:-1] if parts[-1] != "__init__" else parts[:-1])
        top = _top_level_modules(tree.body, package)
        seen: set[int] = set()
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(func):
                if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in seen:
                    seen.add(id(node))          # a function nested in another is walked twice
                    for module in sorted(_modules(node, package) & top):
                        counts.add(row, f"{rel(root, path)}:{node.lineno}: {module} (in {func.name})")


# ---------------------------------------------------------------- (e)
def facade_exports(path: Path) -> list[str]:
    """``__all__`` of a facade, else its public top-level names other than ``import m`` modules."""
    tree = parse(path)
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            names += [a.asname or a.name for a in node.names]
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [t.id for t in targets if isinstance(t, ast.Name)]
    return [n for n in names if not n.startswith("_")]


def facade_uses(source: str, filename: str) -> dict[str, set[str]]:
    """Area -> the names of its facade ``core.<area>`` that one module uses."""
    tree = ast.parse(source, filename=filename)
    used: dict[str, set[str]] = {}
    aliases: dict[str, str] = {}            # local name -> area
    attributes: list[ast.Attribute] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if len(parts) == 2 and parts[0] == "core":
                used.setdefault(parts[1], set()).update(a.name for a in node.names)
            elif node.module == "core":
                aliases.update({a.asname or a.name: a.name for a in node.names})
        elif isinstance(node, ast.Import):
            aliases.update({a.asname: a.name.split(".")[1] for a in node.names
                            if a.asname and a.name.count(".") == 1 and a.name.startswith("core.")})
        elif isinstance(node, ast.Attribute):
            attributes.append(node)
    for node in attributes:
        value = node.value
        if isinstance(value, ast.Name) and value.id in aliases:
            used.setdefault(aliases[value.id], set()).add(node.attr)
        elif isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "core":
            used.setdefault(value.attr, set()).add(node.attr)
    for area, name in re.findall(r"\bcore\.(\w+)\.(\w+)", source):
        used.setdefault(area, set()).add(name)
    for area, names in re.findall(r"^[ \t]*(?:>>> |\.\.\. )?from core\.(\w+) import ([\w ,]+)$", source, flags=re.M):
        used.setdefault(area, set()).update(n.split(" as ")[0].strip() for n in names.split(","))
    return used


def unused_facade_names(root: Path, counts: Counts) -> None:
    facades = {p.parent.name: facade_exports(p) for p in sorted((root / "core").glob("*/__init__.py"))}
    uses = {rel(root, path): facade_uses(path.read_text(encoding="utf-8"), str(path))
            for path in py_files(root, "core", "pages", "app.py", "serve.py", "bench", "tests", "examples", "data")}
    for area, names in facades.items():
        if not names:
            continue
        by_product: set[str] = set()
        by_tests: set[str] = set()
        for name, used in uses.items():
            if not name.startswith((f"core/{area}/", f"tests/core/{area}/")):
                (by_tests if name.startswith("tests/") else by_product).update(used.get(area, ()))
        counts.add("(e) facade names", n=len(names))
        for n in names:
            if n not in by_product and n not in by_tests:
                counts.add("(e) facade names unused outside their area", f"core.{area}.{n}")
            if n not in by_product:
                counts.add("(e2) ... nor by tests (tests not counted as users)", f"core.{area}.{n}")


# ---------------------------------------------------------------- the table
ROWS = ("(a) target_acc parameters", "(b) is_accuracy uses in core", "(b) is_accuracy uses in core/cli",
        "(b) is_accuracy uses in pages", "(c) hand-typed registry lists", "(c2) ... naming half a registry or more",
        "(d) function-level imports repeating a top-level one", "(e) facade names",
        "(e) facade names unused outside their area", "(e2) ... nor by tests (tests not counted as users)")


def count(root: Path) -> Counts:
    counts = Counts()
    for step in (target_acc_parameters, is_accuracy_uses, registry_lists, repeated_imports, unused_facade_names):
        step(root, counts)
    return counts


def table(after: Counts, before: Counts | None = None) -> str:
    width = max(map(len, ROWS))
    if before is None:
        lines = [f"| {'count':<{width}} | {'value':>6} |", f"|{'-' * (width + 2)}|{'-' * 8}|"]
        lines += [f"| {row:<{width}} | {after.numbers.get(row, 0):>6} |" for row in ROWS]
        return "\n".join(lines)
    lines = [f"| {'count':<{width}} | {'before':>6} | {'after':>6} | {'change':>6} |",
             f"|{'-' * (width + 2)}|{'-' * 8}|{'-' * 8}|{'-' * 8}|"]
    for row in ROWS:
        b, a = before.numbers.get(row, 0), after.numbers.get(row, 0)
        lines.append(f"| {row:<{width}} | {b:>6} | {a:>6} | {a - b:>+6} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", nargs="?", type=Path, default=HERE, help="the checkout to count (default: this one)")
    parser.add_argument("--before", type=Path, help="a checkout to compare with: prints before / after")
    parser.add_argument("--list", action="store_true", help="also print every finding of ROOT")
    args = parser.parse_args(argv)
    for root in filter(None, (args.root, args.before)):
        if not (root / "core").is_dir():
            parser.error(f"{root}: not a checkout of the planner (no core/ folder)")
    after = count(args.root.resolve())
    before = count(args.before.resolve()) if args.before else None
    print(table(after, before))
    if args.list:
        for row in ROWS:
            for finding in sorted(after.findings.get(row, [])):
                print(f"{row.split()[0]} {finding}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
