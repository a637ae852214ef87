"""The timeline picture: the bars it draws (from the pure data behind it) and the PNG / SVG
files, opened again to check they hold a picture."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
from typer.testing import CliRunner, Result

from tests.cli.helpers import MINUTE, T0
from tsfile_catalog import inspect
from tsfile_catalog.cli.main import app
from tsfile_catalog.table import open_table


def run(runner: CliRunner, *args: str) -> Result:
    return runner.invoke(app, list(args))


def test_png_has_one_bar_per_part_and_device(
    runner: CliRunner, table_dir: Path, tmp_path: Path
) -> None:
    picture = tmp_path / "timeline.png"
    result = run(runner, "timeline", str(table_dir), str(picture), "--json")
    assert result.exit_code == 0, result.output
    bars = json.loads(result.stdout)
    assert [(b["group"], b["part"], b["rows"]) for b in bars] == [
        ("bj.d1", "a.tsfile", 10),
        ("bj.d1", "c.tsfile", 10),
        ("bj.d2", "a.tsfile", 10),
        ("sh.d1", "b.tsfile", 10),
    ]
    assert bars[1]["start_raw"] == T0 + 5 * MINUTE and bars[1]["end_raw"] == T0 + 14 * MINUTE
    assert (bars[1]["start"], bars[1]["end"]) == (
        "2023-11-14T22:18:20.000+00:00",
        "2023-11-14T22:27:20.000+00:00",
    )
    image = mpimg.imread(picture)
    height, width = image.shape[:2]
    assert width >= 600 and height >= 150
    # Not a blank canvas: bars in several colours.
    assert len(np.unique(image.reshape(-1, image.shape[2]), axis=0)) > 10


def test_text_summary_counts_bars_rows_and_overlaps(
    runner: CliRunner, table_dir: Path, tmp_path: Path
) -> None:
    result = run(runner, "timeline", str(table_dir), str(tmp_path / "t.png"))
    assert result.exit_code == 0, result.output
    # c.tsfile's bj.d1 overlaps a.tsfile's bj.d1: two device ranges meet.
    assert result.stdout.strip() == (
        f"wrote {tmp_path / 't.png'}: 3 parts, 4 bars in 3 rows, 2 overlapping device ranges"
    )


def test_svg_grouped_by_a_tag_and_restricted_by_where(
    runner: CliRunner, table_dir: Path, tmp_path: Path
) -> None:
    picture = tmp_path / "timeline.svg"
    result = run(runner, "timeline", str(table_dir), str(picture), "--group-by", "city", "--json")
    assert result.exit_code == 0, result.output
    assert [(b["group"], b["part"], b["rows"]) for b in json.loads(result.stdout)] == [
        ("bj", "a.tsfile", 20),
        ("bj", "c.tsfile", 10),
        ("sh", "b.tsfile", 10),
    ]
    text = picture.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text and "a.tsfile" in text

    where = f"device = 'd1' AND time >= {T0 + 8 * MINUTE}"
    narrowed = run(runner, "timeline", str(table_dir), str(picture), "--where", where, "--json")
    bars = json.loads(narrowed.stdout)
    assert [(b["group"], b["part"], b["start_raw"], b["end_raw"]) for b in bars] == [
        ("bj.d1", "a.tsfile", T0 + 8 * MINUTE, T0 + 9 * MINUTE),
        ("bj.d1", "c.tsfile", T0 + 8 * MINUTE, T0 + 14 * MINUTE),
        ("sh.d1", "b.tsfile", T0 + 8 * MINUTE, T0 + 9 * MINUTE),
    ]


def test_unknown_group_is_a_user_error(runner: CliRunner, table_dir: Path, tmp_path: Path) -> None:
    result = run(runner, "timeline", str(table_dir), str(tmp_path / "t.png"), "--group-by", "temp")
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "error: cannot group a timeline by 'temp': use 'device' or a TAG column of weather "
        "(city, device)"
    )
    assert not (tmp_path / "t.png").exists()


def test_timeline_data_matches_the_drawn_summary(table_dir: Path) -> None:
    data = inspect.timeline(open_table(str(table_dir), version=0))
    assert data.parts == ("a.tsfile", "b.tsfile") and data.overlaps == 0
    assert data.groups == ("bj.d1", "bj.d2", "sh.d1") and len(data.bars) == 3
