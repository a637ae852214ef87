"""``python -m bench.change_feed [--rows 10000000] [--parts 50] [--out bench/out]``: what the
change data feed costs (issue 39).

A ``key.duplicates = last`` table of ``--rows`` rows (ten devices, one reading a second each,
``--parts`` appends) gets a correction of 1% of its rows spread over all of its time (every
hundredth second of every device, the shape of bench.key's 1% MERGE): the rows re-sent with
new values, one append replacing their keys, the commit a MERGE ... WHEN MATCHED UPDATE makes
on such a table (nothing is recorded for the change feed). Timed: that commit,
then reading its changes (``Table.changes(v, v)``), which reads the parts that may share a key
with the new part as they were before it; and, for scale, a full read of the table. The
changes are checked: exactly one pre- and one post-image per corrected row. Spark-free, so it
measures the table layer's own cost. Writes ``<out>/change_feed.json`` and
``docs/benchmarks-change-feed.md`` (numbers generated, never typed).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["run", "render_markdown", "main"]

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "bench" / "out"
DEFAULT_DOCS = REPO / "docs" / "benchmarks-change-feed.md"
DEVICES = 10
CORRECTED_EVERY = 100  # one second in a hundred: 1% of the rows


def _log(message: str) -> None:
    print(f"[bench.change_feed {dt.datetime.now():%H:%M:%S}] {message}", flush=True)


def _part(index: int, rows_per_part: int) -> pa.Table:
    per_device = rows_per_part // DEVICES
    start = index * per_device * 1000
    times = pa.array(range(start, start + per_device * 1000, 1000), pa.int64())
    columns: dict[str, list[pa.Array]] = {"time": [], "device": [], "value": []}
    for d in range(DEVICES):
        columns["time"].append(times)
        columns["device"].append(pa.array([f"d{d:02d}"] * per_device))
        columns["value"].append(pc.cast(pc.divide(times, 1000), pa.float64()))
    return pa.table({k: pa.concat_arrays(v) for k, v in columns.items()})


def _timed(fn: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def run(*, rows: int, parts: int, out_dir: Path, docs_path: Path | None) -> dict[str, Any]:
    from tsfile_catalog import open_table, write_table

    work = Path(tempfile.mkdtemp(prefix="bench-cdf-"))
    try:
        url = str(work / "t")
        per_part = rows // parts
        _log(f"writing {per_part * parts} rows in {parts} appends")
        write_table(url, _part(0, per_part), table="readings", tag_columns=["device"])
        for i in range(1, parts):
            write_table(url, _part(i, per_part))
        table = open_table(url)
        rows_now = table.scan().to_arrow()
        total = rows_now.num_rows
        seconds = rows_now.column("time").to_numpy() // 1000
        picked = pa.array(seconds % CORRECTED_EVERY == 0)
        corrected = rows_now.filter(picked)
        corrected = corrected.set_column(
            corrected.schema.get_field_index("value"),
            "value",
            pa.repeat(pa.scalar(-1.0), corrected.num_rows),
        )
        expected = corrected.num_rows
        _log(f"correcting {expected} rows ({expected / total:.2%})")
        _, commit_s = _timed(lambda: write_table(url, corrected))
        table = open_table(url)
        version = table.version
        changes, changes_s = _timed(lambda: table.changes(version, version))
        kinds = changes.column("_change_type").value_counts().to_pylist()
        counts = {k["values"]: k["counts"] for k in kinds}
        if counts != {"update_preimage": expected, "update_postimage": expected}:
            raise AssertionError(f"the changes of the correction are {counts}")
        _, full_s = _timed(lambda: open_table(url).scan().to_arrow())
        parts_after = len(table.parts())
        results: dict[str, Any] = {
            "generated": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "machine": {
                "python": platform.python_version(),
                "cpus": os.cpu_count(),
                "platform": platform.platform(),
            },
            "rows": total,
            "parts_before": parts,
            "parts_after": parts_after,
            "corrected_rows": expected,
            "commit_s": commit_s,
            "changes_s": changes_s,
            "change_rows": changes.num_rows,
            "full_read_s": full_s,
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "change_feed.json").write_text(json.dumps(results, indent=2) + "\n")
    if docs_path is not None:
        docs_path.write_text(render_markdown(results))
    return results


def render_markdown(results: dict[str, Any]) -> str:
    r = results
    return f"""# Benchmark: the change data feed of a 1% correction

Generated by `python -m bench.change_feed --rows {r["rows"]} --parts {r["parts_before"]}` on
{r["generated"]} (Python {r["machine"]["python"]}, {r["machine"]["cpus"]} CPUs, \
{r["machine"]["platform"]}); every number below comes from `bench/out/change_feed.json`.

A `key.duplicates = last` table of {r["rows"]:,} rows ({DEVICES} devices, {r["parts_before"]} \
appends) gets {r["corrected_rows"]:,} rows (1%, spread over all of its time) corrected in one
commit (the rows re-sent with new values: an append replacing their keys, the commit a
MERGE … WHEN MATCHED UPDATE makes on such a table);
then its changes are read with `Table.changes(v, v)` (docs/sql.md, "Change data feed").

| What | Time |
|---|---|
| The correction's commit (nothing is recorded for the change feed) | {r["commit_s"]:.2f} s |
| Reading its changes ({r["change_rows"]:,} rows: a pre- and a post-image per corrected row) \
| {r["changes_s"]:.2f} s |
| For scale: a full read of the table after it (merged by key) | {r["full_read_s"]:.2f} s |

The changes are computed, not recorded: the commit costs what it cost before. Reading them
reads the parts that may share a key with the new one as they were before the commit (after
it, the new part's own rows are those keys' rows) and compares only the keys the new part
holds; a correction spread over all of the table's time overlaps every part, so the read is
of the order of one read of the table. A correction confined to a time range or a few devices
reads only the parts it overlaps.
"""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.change_feed", description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--parts", type=int, default=50)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS)
    args = parser.parse_args(argv)
    results = run(rows=args.rows, parts=args.parts, out_dir=args.out, docs_path=args.docs)
    _log(
        f"commit {results['commit_s']:.2f} s, changes {results['changes_s']:.2f} s, "
        f"full read {results['full_read_s']:.2f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
