"""What a `rulegrad check` verdict depends on, and a folder that keeps verdicts for other processes.

In: a `.rules` file. Out: `content_key` (the hash of its text, of the rules files it imports, of
its helper modules and of the user's modules they import; not of their names or folders) and
`verdict_key` (that, plus the semantics table and the checker's own modules: what the check's
verdict on the file depends on).
`add_rules` keeps a file's refutations under `verdict_key` (generator/user.py).

`VerdictFolder` keeps one verdict per rule in a folder that several processes share (the test
suite's xdist workers: `test_rule_is_sound` and `test_all_rules_check_clean` ask the same
questions). Each entry is a JSON file named by the hash of the rule's `verdict_key`, its place
and the checker's settings, written atomically; a lock per entry (`fcntl.flock`, released by the
kernel when its holder dies) makes one process check a rule while the others wait for its
verdict, so no rule is checked twice. A verdict of the recorded programs' passes (structural,
unreachable, the optimizer's kernels) depends on the rest of rulegrad's code too: a folder serves
one run of one tree (the suite's is made per session), never a later one.
"""

from __future__ import annotations

import ast
import fcntl
import functools
import hashlib
import importlib.util
import json
import os
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from importlib.machinery import ModuleSpec
from pathlib import Path
from typing import Any


def _checker_files() -> list[Path]:
    """The files a verdict depends on besides the user's: the semantics table (the meaning of
    every op) and the checker (this package's modules: a better checker checks again)."""
    file = _module_file("rulegrad.runtime.semantics")
    semantics = [file] if file is not None else []
    return semantics + sorted(Path(__file__).parent.glob("*.py"))


def _module_file(module: str) -> Path | None:
    """The file of `module`, found without importing anything: its own when it is imported,
    else the import system's finders asked level by level, each package's folders taken from
    its imported module or from the spec found for it. (`importlib.util.find_spec` imports the
    parent packages: keying a rules file ran the `__init__` of every package a helper names,
    even in an import it never makes.)"""
    if (mod := sys.modules.get(module)) is not None:
        file = getattr(mod, "__file__", None)
        return Path(file) if isinstance(file, str) and file else None
    parts, path, spec = module.split("."), None, None
    for i in range(len(parts)):
        name = ".".join(parts[:i + 1])
        if i < len(parts) - 1 and (mod := sys.modules.get(name)) is not None:
            path = _folders(mod)
        else:
            spec = _find_spec(name, path)
            path = list(spec.submodule_search_locations or ()) if spec is not None else []
        if not path and i < len(parts) - 1:
            return None  # no module, or a module and no package: nothing under it
    return Path(spec.origin) if spec is not None and spec.has_location and spec.origin else None


def _folders(package: Any) -> list[str]:
    """An imported package's folders (`__path__`); none when it has none, or something that is
    no list of folders (torch's `torch._classes` has an object of its own there)."""
    try:
        return [p for p in getattr(package, "__path__", None) or () if isinstance(p, str)]
    except Exception:  # noqa: BLE001 - a module's attributes are its own code
        return []


def _find_spec(name: str, path: list[str] | None) -> ModuleSpec | None:
    """What the import system's finders say of `name` under the folders `path` (None: a
    top-level name, sys.path); a finder asks no parent and runs no module."""
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        try:
            spec = find(name, path) if find is not None else None
        except (ImportError, ValueError, TypeError, AttributeError):
            continue
        if spec is not None:
            return spec
    return None


def verdict_key(rules: str | Path) -> str:
    """The hash of what `rulegrad check`'s verdict on `rules` depends on: `content_key` and
    `_checker_files`."""
    h = hashlib.sha256(content_key(rules).encode())
    for path in _checker_files():
        h.update(f"checker {path.name}\0".encode() + path.read_bytes() + b"\0")
    return h.hexdigest()


def content_key(rules: str | Path) -> str:
    """The hash of the text of `rules`, of the rules files it imports and of its helper
    modules; not of their names or folders."""
    from rulegrad.dsl import load

    from .paths import in_package

    cf = load(str(rules))
    h = hashlib.sha256()
    stack, seen = [cf], set()
    while stack:  # the file and every file it imports (no recursion on the import graph)
        f = stack.pop()
        if f.file.path in seen:
            continue
        seen.add(f.file.path)
        # not its name or folder (a copy elsewhere is the same content: a fuzz program's file
        # in a fresh temporary folder still hits; an import names its file in the text), but
        # whether it is one of the package's files (the checker honours their recorded firings)
        h.update(f"rules {in_package(f.file.path)}\0{f.file.source}\0".encode())
        for helper in f.helpers:
            path = Path(helper.file) if helper.file else _module_file(helper.module)
            data = path.read_bytes() if path is not None and path.is_file() else b"?"
            h.update(f"helper {helper.module}\0".encode() + data + b"\0")
            package = "" if helper.file else helper.module.rpartition(".")[0]
            for used in _users_modules(path, package) if data != b"?" else ():
                h.update(f"uses {used.name}\0".encode() + used.read_bytes() + b"\0")
        stack.extend(f.imported)
    return h.hexdigest()


@functools.cache
def _not_users() -> tuple[Path, ...]:
    """The folders of the standard library, installed packages and rulegrad itself (the folder
    that holds this package: the installed package's, or a source tree's root)."""
    paths = {Path(p).resolve() for k, p in sysconfig.get_paths().items()
             if k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return (*sorted(paths), Path(__file__).resolve().parent.parent)


def _users_modules(helper: Path, package: str) -> list[Path]:
    """The files of the user's modules `helper` imports, and theirs in turn: a helper's answer
    changes with them (an edited `util.py` that `helpers.py` imports a constant from must be
    checked again). Not the standard library's, installed packages' or rulegrad's own modules,
    which the verdict's other parts or a new version cover."""
    outside = _not_users()
    if any(helper.resolve().is_relative_to(o) for o in outside):
        return []
    found: list[Path] = []
    stack, seen = [(helper, package)], {helper.resolve()}
    while stack:  # (no recursion on the import graph)
        path, pkg = stack.pop()
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError, OSError):
            continue
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    if not pkg:
                        continue
                    base = importlib.util.resolve_name("." * node.level + base, pkg)
                names = [base] + [f"{base}.{a.name}" for a in node.names]
            for name in filter(None, names):
                spec_file = _module_file(name)
                for file in (spec_file, path.parent / (name.replace(".", "/") + ".py")):
                    if file is None or not file.is_file():
                        continue
                    real = file.resolve()
                    if real in seen or any(real.is_relative_to(o) for o in outside):
                        continue
                    seen.add(real)
                    found.append(real)
                    stack.append((real, name.rpartition(".")[0] if file is spec_file else ""))
    return sorted(found)


def write_json(path: Path, data: Any) -> None:
    """`data` as JSON at `path`, whole or not at all: written under a name of its own in the same
    folder and renamed into place, so a reader (another process) never sees half of it."""
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json(path: Path) -> Any:
    """The JSON at `path`, or None when it is missing or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class VerdictFolder:
    """One verdict per question, kept in `folder` for every process that asks it.

    A question is a key (the caller hashes what the answer depends on); an answer is a JSON
    object. `answer(key, compute)` returns the kept answer, or computes, keeps and returns it,
    holding the key's lock meanwhile: a process asking a question another is answering waits
    for that answer instead of computing it too."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            pass  # (read-only: what it holds is read, what is checked now kept in no folder)
        self._file_keys: dict[str, str] = {}

    def file_key(self, rules: str | Path) -> str:
        """`verdict_key` of a rules file, hashed once per folder object."""
        name = str(Path(rules).resolve())
        if name not in self._file_keys:
            self._file_keys[name] = verdict_key(rules)
        return self._file_keys[name]

    @contextmanager
    def _locked(self, key: str, wait: bool) -> Iterator[bool]:
        try:
            f = open(self.folder / f"{key}.lock", "a")  # noqa: SIM115 - closed below
        except OSError:  # a folder this process may not write: no lock, its answer not kept
            yield True
            return
        with f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False  # another process holds it: it is answering this question
                return
            try:
                yield True
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def answer(self, key: str, compute: Callable[[], dict], wait: bool = True,
               usable: Callable[[dict], bool] = lambda kept: True) -> dict | None:
        """The answer kept under `key`, else `compute()`'s, kept; None when `wait` is False
        and another process is answering it now. A kept answer that is not `usable` (an entry
        of another shape: edited, or written by another version) is computed again and
        replaced."""
        with self._locked(key, wait) as held:
            if not held:
                return None
            kept = read_json(self.folder / f"{key}.json")
            if isinstance(kept, dict) and usable(kept):
                return kept
            found = compute()
            try:
                write_json(self.folder / f"{key}.json", found)
            except OSError:
                pass  # (a read-only folder: the answer is this process's only)
            return found

    def answer_all(self, keys: Iterable[str], compute: Callable[[str], dict],
                   usable: Callable[[dict], bool] = lambda kept: True) -> dict[str, dict]:
        """Every key's answer: first those no other process is answering (computed or read, in
        order), then the rest, each waited for; no process idles while a question is free."""
        out: dict[str, dict] = {}
        later = []
        for key in keys:
            found = self.answer(key, lambda k=key: compute(k), wait=False, usable=usable)
            if found is None:
                later.append(key)
            else:
                out[key] = found
        for key in later:
            out[key] = self.answer(key, lambda k=key: compute(k),  # type: ignore[assignment]
                                   usable=usable)
        return out
