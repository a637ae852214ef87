"""``python -m bench.mixed [--scale N] [--smoke] [--out bench/out] [--docs PATH]``: a table
whose parts are half TsFile, half external Parquet, queried two ways.

The benchmark rows (``bench.datagen``) are split by time: the first half is written as the
tsfile table, the second half as Parquet by Spark and added in place with ``add_files``
(``ALTER TABLE … ADD PART``). Q2 (full scan) and Q3 (one device, 1% of the time range) then run

* ``python``: through the tsfile data source (the reader ``Catalog.sql`` uses), which reads
  the external Parquet parts with our Python reader (``pyarrow.dataset`` with the pushed
  time/TAG filter), unioned inside the scan;
* ``spark_union``: CarbonData's way: the TsFile parts through the tsfile source at the
  version before the ADD, unioned with Spark's own Parquet reader over the added files
  (filter and projection pushed natively).

Answers are compared; the medians go to ``mixed.json`` and the generated report
(``docs/external-parts-bench.md`` by default), which ``docs/external-parts.md`` cites.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.datagen import STEP_MS, T0_MS, Scale, build_frame, write_parquet, write_tsfile
from bench.queries import Query, build_queries, frame, same_answer

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["run_mixed", "main"]

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DOCS = REPO / "docs" / "external-parts-bench.md"
WAYS = ("python", "spark_union")


def _union_frame(
    spark: SparkSession, table: str, before_add: int, files: Sequence[str], query: Query
) -> DataFrame:
    """TsFile parts through the tsfile source, external Parquet through Spark's reader."""
    from pyspark.sql import functions as F

    columns = list(query.columns)
    tsfile = spark.read.format("tsfile").option("versionAsOf", str(before_add))
    tsfile = tsfile.option("columns", ",".join(columns))
    if query.where:
        tsfile = tsfile.option("where", query.where)
    parquet = spark.read.parquet(*files)
    if query.where:
        parquet = parquet.where(query.where)
    both = tsfile.load(table).select(*columns).unionByName(parquet.select(*columns))
    return both.agg(*[F.expr(a) for a in query.aggregates])


def _time_query(df_of: Any, repetitions: int) -> tuple[list[float], list[Any]]:
    times: list[float] = []
    answer: list[Any] = []
    for _ in range(repetitions):
        started = time.perf_counter()
        rows = df_of().collect()
        times.append(time.perf_counter() - started)
        answer = list(rows[0])
    return times, answer


def run_mixed(
    spark: SparkSession, *, scale: Scale, out_dir: Path, docs_path: Path | None
) -> dict[str, Any]:
    """Build the half-Parquet table under ``out_dir``, time Q2/Q3 both ways, write the
    results (and the report when ``docs_path`` is given)."""
    from tsfile_catalog.table import add_files, open_table

    data = out_dir / "mixed"
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    table, parquet_dir = str(data / "table"), str(data / "parquet")
    half = T0_MS + (scale.timestamps // 2) * STEP_MS
    rows = build_frame(spark, scale)
    write_tsfile(rows.where(f"time < {half}"), table)
    write_parquet(rows.where(f"time >= {half}"), parquet_dir)
    before_add = open_table(table).version
    started = time.perf_counter()
    add_files(table, parquet_dir, format="parquet")
    add_s = time.perf_counter() - started
    parts = open_table(table).parts()
    files = sorted(p.path for p in parts if p.external)
    results: dict[str, Any] = {
        "scale": scale.to_json(),
        "generated": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "parts": {"tsfile": len(parts) - len(files), "parquet": len(files)},
        "add_part_s": add_s,
        "queries": [],
    }
    for query in (q for q in build_queries(scale) if q.id in ("Q2", "Q3")):
        makers = {
            "python": lambda q=query: frame(spark, "tsfile", table, q),
            "spark_union": lambda q=query: _union_frame(spark, table, before_add, files, q),
        }
        if scale.warmup:
            for make in makers.values():
                make().collect()
        times: dict[str, list[float]] = {w: [] for w in WAYS}
        answers: dict[str, list[Any]] = {}
        for rep in range(scale.repetitions):
            order = WAYS if rep % 2 == 0 else tuple(reversed(WAYS))
            for way in order:
                took, answer = _time_query(makers[way], 1)
                times[way].extend(took)
                answers[way] = answer
        results["queries"].append(
            {
                "id": query.id,
                "title": query.title,
                "times": times,
                "median_s": {w: statistics.median(times[w]) for w in WAYS},
                "answers": answers,
                "same_answer": same_answer(answers["python"], answers["spark_union"]),
            }
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "mixed.json").write_text(json.dumps(results, indent=2, default=str))
    if docs_path is not None:
        docs_path.parent.mkdir(parents=True, exist_ok=True)
        docs_path.write_text(render_markdown(results))
    return results


def render_markdown(results: dict[str, Any]) -> str:
    scale = results["scale"]
    lines = [
        "# Mixed-format benchmark: half TsFile, half external Parquet",
        "",
        f"Generated by `python -m bench.mixed` on {results['generated']}; do not edit by hand.",
        "",
        f"{scale['rows']:,} rows ({scale['devices']} devices), split by time: "
        f"{results['parts']['tsfile']} TsFile parts and {results['parts']['parquet']} Parquet "
        f"files added with ADD PART (in {results['add_part_s']:.2f} s, statistics included). "
        f"Median of {scale['repetitions']} runs each, alternating order.",
        "",
        "| query | python reader (s) | Spark Parquet reader, unioned (s) | faster | same answer |",
        "|---|---|---|---|---|",
    ]
    for q in results["queries"]:
        med = q["median_s"]
        faster = min(WAYS, key=lambda w: med[w])
        lines.append(
            f"| {q['id']}: {q['title']} | {med['python']:.2f} | {med['spark_union']:.2f} | "
            f"{faster} ({max(med.values()) / max(min(med.values()), 1e-9):.1f}x) | "
            f"{'yes' if q['same_answer'] else 'NO'} |"
        )
    lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.mixed", description=__doc__)
    parser.add_argument("--scale", type=float, default=2.0, help="million rows (default 2)")
    parser.add_argument("--smoke", action="store_true", help="seconds, not minutes")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out")
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS)
    args = parser.parse_args(argv)
    from tsfile_catalog import local_session

    scale = Scale.smoke() if args.smoke else Scale.millions(args.scale)
    spark = local_session("tsfile-catalog-bench-mixed")
    try:
        results = run_mixed(
            spark, scale=scale, out_dir=args.out, docs_path=None if args.smoke else args.docs
        )
    finally:
        spark.stop()
    print(render_markdown(results))
    return 0 if all(q["same_answer"] for q in results["queries"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
