"""Count the import cycles between rulegrad's modules.

In: the package's source folders (pyproject's package-dir mapping). Out: each strongly
connected component of the module import graph that holds more than one module (or a module
that imports itself), printed with the imports that close it; exit 1 if there is any.

Every import counts, module level or inside a function (a lazy import is still a dependency);
only imports under `if TYPE_CHECKING:` do not, since they never run. `from package import x`
is an edge to the submodule `x` when there is one, else to the package's `__init__`. Imports
of private names (`from m import _x`) are listed too.

Run: `python bench/import_cycles.py` (tests/test_import_cycles.py runs it in CI).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the importable package and the folder each subpackage lives in (pyproject.toml)
PACKAGES = {
    "rulegrad": "api", "rulegrad.dsl": "dsl", "rulegrad.generator": "generator",
    "rulegrad.rules": "rules", "rulegrad.rules.generated": "rules/generated",
    "rulegrad.runtime": "runtime", "rulegrad.backends": "backends",
    "rulegrad.backends.c": "backends/c", "rulegrad.nn": "api/nn", "rulegrad.tools": "tools",
}


def modules() -> dict[str, Path]:
    """Every module of the package, by dotted name."""
    found: dict[str, Path] = {}
    for pkg, folder in PACKAGES.items():
        base = ROOT / folder
        if not base.is_dir():
            continue
        for path in sorted(base.glob("*.py")):
            found[pkg if path.stem == "__init__" else f"{pkg}.{path.stem}"] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """The import statements that run, at any depth (not those under `if TYPE_CHECKING:`)."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def graph() -> tuple[dict[str, set[str]], list[str]]:
    """The import graph between the package's modules, and the imports of private names."""
    mods = modules()
    edges: dict[str, set[str]] = {m: set() for m in mods}
    private: list[str] = []
    for mod, path in mods.items():
        tree = ast.parse(path.read_text(), str(path))
        for node in _imports(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = _absolute(mod, path.stem == "__init__", node)
                targets = []
                for alias in node.names:
                    if f"{base}.{alias.name}" in mods:  # a submodule: the edge is to it
                        targets.append(f"{base}.{alias.name}")
                        continue
                    targets.append(base)  # a name defined by the module `base`
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        private.append(f"{path.relative_to(ROOT)}:{node.lineno}: "
                                       f"{base}.{alias.name}")
            for target in targets:
                # `import rulegrad.runtime.uop` also runs the packages above it
                while target and target not in mods and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in mods and target != mod:
                    edges[mod].add(target)
    return edges, private


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def main() -> int:
    edges, private = graph()
    found = cycles(edges)
    for component in found:
        print(f"cycle of {len(component)} modules:")
        members = set(component)
        for mod in component:
            inside = sorted(edges[mod] & members)
            print(f"  {mod} -> {', '.join(inside)}")
    for line in private:
        print(f"private import: {line}")
    print(f"{len(found)} import cycles over {sum(map(len, found))} of {len(edges)} modules; "
          f"{len(private)} imports of private names")
    return 1 if found or private else 0


if __name__ == "__main__":
    sys.exit(main())
