"""docs/cli.md stays true to the program: every command its examples run exists, with every
option they give it (the docs test runs Python and SQL blocks; these are shell lines)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import typer

from tsfile_catalog.cli.main import app

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
_BASH = re.compile(r"^```bash\n(.*?)^```", re.M | re.S)


def example_commands() -> list[list[str]]:
    """Each ``tsfile-catalog ...`` example as words (continuation lines joined, comments and
    the ``[``, ``]``, ``|`` of optional parts dropped)."""
    commands: list[list[str]] = []
    for block in _BASH.findall(DOC.read_text()):
        for line in block.splitlines():
            words = [w.strip("[]") for w in shlex.split(line, comments=True)]
            words = [w for w in words if w and w != "|"]
            if words[:1] == ["tsfile-catalog"]:
                commands.append(words[1:])
            elif words and line.startswith(" ") and commands:
                commands[-1].extend(words)
    return commands


def options_of(command: object) -> set[str]:
    params = getattr(command, "params", [])
    return {o for p in params for o in (*p.opts, *p.secondary_opts)} | {"--help"}


def test_every_documented_command_and_option_exists() -> None:
    group = typer.main.get_command(app)
    commands = getattr(group, "commands", {})
    names = set()
    # The root's options that take a value: the word after one is its value, not a command.
    valued = {
        o for p in getattr(group, "params", []) if not getattr(p, "is_flag", False) for o in p.opts
    }
    for words in example_commands():
        at = 0
        while at < len(words) and words[at].startswith("-"):
            at += 2 if words[at] in valued else 1
        root, rest = [w for w in words[:at] if w.startswith("-")], words[at:]
        assert set(root) <= options_of(group), f"docs/cli.md: {' '.join(words)}"
        if not rest:
            continue
        name = rest[0]
        assert name in commands, f"docs/cli.md runs an unknown command: {' '.join(words)}"
        names.add(name)
        unknown = {w for w in rest if w.startswith("-")} - options_of(commands[name])
        assert not unknown, f"docs/cli.md gives {name} unknown options {sorted(unknown)}"
    # Every command has an example and a heading of its own, and --json as the text says.
    assert names == set(commands)
    assert all("--json" in options_of(c) for c in commands.values())
    headings = set(re.findall(r"^### (\S+)$", DOC.read_text(), re.M))
    assert names <= headings
