"""bench/stamp.py: every generated benchmark section names the commit it measured, and says
when later commits changed the code its numbers describe."""

from __future__ import annotations

import subprocess
from pathlib import Path

from bench.report import _sections, splice_section
from bench.stamp import measured_at, refresh_stamps, stamp

ROOT = Path(__file__).resolve().parents[2]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def _commit(repo: Path, path: str, text: str) -> str:
    file = repo / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text)
    _git(repo, "add", path)
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", path)
    return _git(repo, "rev-parse", "HEAD")


def test_a_section_says_when_the_code_moved_on(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    first = _commit(repo, "tsfile_catalog/a.py", "x = 1\n")
    measured = measured_at(repo)
    assert measured == {"commit": first, "dirty": False}
    doc = "## Numbers\n\n" + stamp(measured, repo) + "\n\n| a | 1 |\n"
    assert f"commit `{first[:10]}`: no later commit changes the code" in doc

    _commit(repo, "docs/x.md", "prose\n")  # not code: the numbers stay current
    assert "no later commit changes the code" in refresh_stamps(doc, repo)
    _commit(repo, "tsfile_catalog/a.py", "x = 2\n")
    _commit(repo, "bench/b.py", "y = 1\n")
    stale = refresh_stamps(doc, repo)
    assert f"commit `{first[:10]}`: **older than the code**, 2 later commits change" in stale
    assert stale.count("*Measured at") == 1  # the line is replaced, not added
    assert stale.endswith("| a | 1 |\n")

    (repo / "tsfile_catalog/a.py").write_text("x = 3\n")  # measured on uncommitted code
    dirty = measured_at(repo)
    assert dirty is not None and dirty["dirty"]
    assert "plus uncommitted changes" in stamp(dirty, repo)


def test_unknown_and_foreign_commits_are_not_called_current(tmp_path: Path) -> None:
    assert "an unknown commit" in stamp(None)
    assert "may be older than the code" in stamp({"commit": "0" * 40, "dirty": False})


def test_splicing_one_section_refreshes_every_stamp(tmp_path: Path) -> None:
    docs = tmp_path / "benchmarks.md"
    old = "<!-- measured-at: " + "1" * 40 + " -->\n*Measured at commit `x`: fresh.*\n"
    docs.write_text(
        f"# B\n\n<!-- generated:other begin -->\n{old}\n| a |\n<!-- generated:other end -->\n"
    )
    splice_section(docs, "new", "## New\n\n" + stamp(measured_at()) + "\n\nbody")
    text = docs.read_text()
    assert "*Measured at commit `x`: fresh.*" not in text  # the old section's line refreshed
    assert text.count("*Measured at") == 2


def test_every_generated_section_of_the_benchmarks_page_is_stamped() -> None:
    text = (ROOT / "docs" / "benchmarks.md").read_text()
    main = text.split("<!-- generated:", 1)[0]
    assert "<!-- measured-at: " in main, "the bench.run report has no stamp"
    for name, body in _sections(text).items():
        assert "<!-- measured-at: " in body, f"section {name!r} has no stamp"
        assert "*Measured at " in body, name
