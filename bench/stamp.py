"""``python -m bench.stamp [DOC ...]``: which commit each generated benchmark section measured,
and whether the code has changed since.

Every benchmark records the commit it ran on (:func:`measured_at`: ``git rev-parse HEAD``, and
whether the package or the benchmarks had uncommitted changes) in its results. The section it
renders carries that commit in a marker, ``<!-- measured-at: <sha>[+dirty] -->``, followed by
one visible line that says, as of the last time the document was written, whether later
commits changed the code the numbers describe (:data:`CODE_PATHS`): a section measured at an
older state of the code says so, and by how many commits. Every write of a generated section
(``splice_section``, ``write_report``) refreshes the line of every section in the document;
this command refreshes them without measuring anything.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "CODE_PATHS",
    "commits_since",
    "measured_at",
    "refresh_stamps",
    "stamp",
    "main",
]

REPO = Path(__file__).resolve().parent.parent
# What the numbers describe: a commit that changes none of these (docs, tests) leaves them true.
CODE_PATHS = ("tsfile_catalog", "pyspark_tsfile", "bench")
_MARKER = re.compile(r"^<!-- measured-at: ([0-9a-f]{7,40})(\+dirty)? -->$")
_UNKNOWN = "<!-- measured-at: unknown -->"
_LINE_START = "*Measured at "


def _git(repo: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def measured_at(repo: Path = REPO) -> dict[str, Any] | None:
    """The commit the working tree is at, and whether :data:`CODE_PATHS` differ from it
    (numbers measured on uncommitted code describe no commit exactly); None outside git."""
    commit = _git(repo, "rev-parse", "HEAD")
    if not commit:
        return None
    status = _git(repo, "status", "--porcelain", "--untracked-files=no", "--", *CODE_PATHS)
    return {"commit": commit, "dirty": bool(status)}


def commits_since(commit: str, repo: Path = REPO) -> int | None:
    """How many commits after ``commit`` (up to HEAD) change :data:`CODE_PATHS`; None when
    ``commit`` is not in this history."""
    count = _git(repo, "rev-list", "--count", f"{commit}..HEAD", "--", *CODE_PATHS)
    return int(count) if count is not None and count.isdigit() else None


def _line(commit: str | None, dirty: bool, repo: Path) -> str:
    if commit is None:
        return (
            f"{_LINE_START}an unknown commit (recorded before results carried one): these "
            "numbers may be older than the code; rerun the benchmark to know.*"
        )
    short = commit[:10]
    head = _git(repo, "rev-parse", "--short=10", "HEAD") or "?"
    suffix = " plus uncommitted changes" if dirty else ""
    since = commits_since(commit, repo)
    if since is None:
        return (
            f"{_LINE_START}commit `{short}`{suffix}, which this history does not hold "
            f"(checked at `{head}`): they may be older than the code.*"
        )
    if since == 0:
        return (
            f"{_LINE_START}commit `{short}`{suffix}: no later commit changes the code "
            f"({', '.join(p + '/' for p in CODE_PATHS)}; checked at `{head}`).*"
        )
    plural = "s" if since > 1 else ""
    return (
        f"{_LINE_START}commit `{short}`{suffix}: **older than the code**, {since} later "
        f"commit{plural} change {', '.join(p + '/' for p in CODE_PATHS)} (checked at "
        f"`{head}`); rerun the benchmark to refresh them.*"
    )


def stamp(measured: dict[str, Any] | None, repo: Path = REPO) -> str:
    """The two lines a generated section starts with: the marker holding the commit
    ``measured`` (from :func:`measured_at`, stored with the results) and the visible line."""
    if not measured:
        return f"{_UNKNOWN}\n{_line(None, False, repo)}"
    commit, dirty = str(measured["commit"]), bool(measured.get("dirty"))
    marker = f"<!-- measured-at: {commit}{'+dirty' if dirty else ''} -->"
    return f"{marker}\n{_line(commit, dirty, repo)}"


def refresh_stamps(text: str, repo: Path = REPO) -> str:
    """``text`` with the visible line after every stamp marker rewritten for the code as it
    is now (a marker without its line gets one)."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        match = _MARKER.match(line)
        if match is None and line != _UNKNOWN:
            continue
        commit = None if match is None else match.group(1)
        dirty = bool(match and match.group(2))
        out.append(_line(commit, dirty, repo))
        if i < len(lines) and lines[i].startswith(_LINE_START):
            i += 1  # the previous visible line, replaced
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.stamp", description=__doc__)
    parser.add_argument(
        "docs",
        nargs="*",
        type=Path,
        default=[REPO / "docs" / "benchmarks.md", REPO / "docs" / "architecture.md"],
    )
    args = parser.parse_args(argv)
    for doc in args.docs:
        text = doc.read_text()
        refreshed = refresh_stamps(text)
        if refreshed != text:
            doc.write_text(refreshed)
            print(f"refreshed {doc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
