"""docs/architecture.md's module map lists every module of the package, and only modules
that exist: a module added without a line there, or a line left behind by a move, fails.

The map is the first fenced block: a tree where a folder is a line whose first word ends in
``/`` and a module a line whose first words end in ``.py`` (several may share a line);
indentation nests them, and the rest of a line (and any deeper line that starts with
another word) describes them.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "tsfile_catalog"
_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)


def listed_modules(text: str) -> set[str]:
    """The module paths (``metadata/manifest/model.py``) the map's tree names."""
    match = _FENCE.search(text)
    assert match is not None, "docs/architecture.md has no module map"
    stack: list[tuple[int, str]] = []
    out: set[str] = set()
    for line in match.group(1).splitlines():
        words = line.split()
        names = []
        for word in words:
            if not word.endswith((".py", "/")):
                break
            names.append(word)
        if not names:
            continue  # a description's continuation
        indent = len(line) - len(line.lstrip(" "))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        prefix = "".join(name for _, name in stack)
        if names[0].endswith("/"):
            stack.append((indent, names[0]))
            continue
        out.update(prefix + name for name in names)
    return {path for path in out if path.startswith(f"{PACKAGE}/")}


def package_modules() -> set[str]:
    return {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / PACKAGE).rglob("*.py")
        if path.name != "__init__.py"
    }


def test_the_map_parses_folders_and_shared_lines() -> None:
    text = "```\ntsfile_catalog/\n  a/   x\n    b.py c.py  what\n       more words\n  d.py\n```\n"
    assert listed_modules(text) == {
        "tsfile_catalog/a/b.py",
        "tsfile_catalog/a/c.py",
        "tsfile_catalog/d.py",
    }


def test_architecture_lists_every_module_and_no_other() -> None:
    listed = listed_modules((ROOT / "docs" / "architecture.md").read_text())
    modules = package_modules()
    assert sorted(modules - listed) == [], "modules docs/architecture.md does not list"
    assert sorted(listed - modules) == [], "docs/architecture.md lists modules that do not exist"
