"""``python -m bench.clients [--smoke]``: the catalog through Spark's servers, next to in-process.

Issue 37 asks that a query through a Spark client cost about what it costs in-process. One
run, one warehouse (the benchmark table of :mod:`bench.datagen`, written by the ``tsfile``
source and registered as ``default.sensors``), the same SQL text of Q1, Q2, Q8 and Q9
(:func:`bench.queries.sql_text`) on ``<catalog>.default.sensors`` through three paths:

* **in-process**: plain ``spark.sql(...).collect()`` in a PySpark driver that holds the
  catalog's delegate (``tsfile_catalog.configure`` + ``register``): the plugin path the other
  two are judged against;
* **Spark Connect**: a Connect server (``SparkConnectServer``) started with the catalog's
  settings alone (``tsfile-catalog spark-conf``), queried by a
  ``SparkSession.builder.remote(...)`` client in this process, ``collect()``;
* **JDBC**: the Thrift JDBC/ODBC server (``HiveThriftServer2``) started the same way, queried
  by a Python DB-API client (PyHive: ``cursor.execute`` + ``fetchall``).

Every JVM runs ``local[2]`` with the same settings; the servers answer from their own catalog
process. Only one path runs at a time (the order alternates per repetition); each query runs
once untimed per path first; each path's time is the fastest of the repetitions (as
``timeit`` reports: on a shared, busy machine the other runs measure the neighbours), the
medians are kept too. Answers are compared with the in-process ones. The target: each client
within 1.3x of in-process. A statement without a table or a Spark job (``SET``) measures what
each client protocol adds to any statement; a query of literal rows, which no Spark job
answers (a local relation, as the catalog's statistics answers are), what it adds to any
query: the client's own cost, which no catalog can remove, and the shortest in-process time
a query can have and still be within the target.

Where Connect's time goes is measured too, not judged: Connect's ``collect()`` alone on the
DataFrame its ``spark.sql`` made beforehand (PySpark's Connect ``spark.sql`` is eager: one
ExecutePlan that analyses the query, then ``collect()``'s own, which analyses it again), and
the same SQL text on a Parquet copy of the rows read by path (``parquet.`<path>```: no
catalog of ours in the query) in-process, through Connect and through JDBC: what each client
adds to any source's query.

Results go to ``bench/out/clients.json`` and the generated "Spark clients" section of
``docs/benchmarks.md``. Needs the ``test`` extra (the Connect client's gRPC, PyHive).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from bench.datagen import Scale, build_frame, write_tsfile
from bench.queries import SQL_TABLE, build_queries, same_rows, sql_text
from bench.servers import serving
from bench.stamp import measured_at, stamp

__all__ = ["CLIENTS", "QUERIES", "TARGET", "bench_clients", "main", "render_section"]

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DOCS = REPO / "docs" / "benchmarks.md"
CATALOG = "bench"
QUERIES = ("Q1", "Q2", "Q8", "Q9")
CLIENTS = ("connect", "jdbc")
# Connect's collect() alone: the DataFrame its spark.sql made beforehand (untimed), so one
# ExecutePlan, not the two of spark.sql(...).collect() (the first, spark.sql's own SqlCommand,
# analyses the query as well). Measured, not judged: it says where Connect's time goes.
PREPARED = "connect_collect"
# Connect's spark.sql alone (that first ExecutePlan), no collect().
EAGER = "connect_sql"
PATHS = ("inprocess", *CLIENTS, PREPARED, EAGER)
TARGET = 1.3  # client time / in-process time, per query
FLOOR = "floor"
# The same queries on a Parquet copy read by path: no catalog of ours in the query.
PARQUET = "parquet"
PARQUET_PATHS = ("inprocess", *CLIENTS)
# No table and no Spark job (a SELECT runs one): what a client adds to any statement.
FLOOR_SQL = "SET spark.sql.session.timeZone"
# A query of no table that no Spark job answers (its literal rows are a local relation, as
# the catalog's statistics answers are): what each client adds to any query, Connect's two
# analyses included, with no catalog of ours in it.
QUERY_FLOOR = "query_floor"
QUERY_FLOOR_SQL = "SELECT * FROM VALUES (1, 'x') AS v(a, b)"
_MASTER = "local[2]"
_COMMON = ("spark.ui.enabled=false", "spark.sql.session.timeZone=UTC")
_CONNECT_SERVER = "org.apache.spark.sql.connect.service.SparkConnectServer"
_THRIFT_SERVER = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"


def _scale(smoke: bool) -> Scale:
    """A few minutes on a busy 2-core machine: 20 devices; 40k timestamps (800k rows)."""
    smallest = Scale.smoke()
    if smoke:
        return smallest
    return Scale(
        name="clients",
        regions=smallest.regions,
        devices_per_region=smallest.devices_per_region,
        timestamps=40_000,
        parts=8,
        repetitions=9,
        planning_parts=smallest.planning_parts,
        planning_devices_per_part=smallest.planning_devices_per_part,
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def _server(
    main_class: str, warehouse: str, port: int, extra: Sequence[str], folder: Path
) -> Iterator[None]:
    """A Spark server (``spark-submit --class main_class``) with the catalog's settings, up
    until it listens on 127.0.0.1:``port`` (at most 300 s); stopped by its pid on leaving."""
    import pyspark

    from tsfile_catalog import catalog_config
    from tsfile_catalog.spark_catalog.settings import as_arguments

    home = Path(pyspark.__file__).parent
    command = [
        str(home / "bin" / "spark-submit"),
        "--class",
        main_class,
        "--master",
        _MASTER,
        *as_arguments(catalog_config(warehouse, name=CATALOG)).split(),
        *(arg for setting in _COMMON for arg in ("--conf", setting)),
        *extra,
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_GATEWAY")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    env["SPARK_HOME"] = str(home)
    env["PYSPARK_PYTHON"] = sys.executable
    with serving(command, port, folder, env):
        yield


def _rows(rows: Sequence[Sequence[Any]]) -> list[list[Any]]:
    return sorted((list(r) for r in rows), key=lambda r: [str(v) for v in r])


def bench_clients(work: str, scale: Scale) -> dict[str, Any]:
    """Time Q1/Q2/Q8/Q9 on the three paths over one warehouse in ``work``."""
    from pyhive import hive
    from pyspark.sql import SparkSession
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    import tsfile_catalog
    from tsfile_catalog import Catalog

    started = time.monotonic()
    # Spark's Python data sources plan in the Python of PYSPARK_PYTHON: this one's.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    warehouse = str(Path(work) / "warehouse")
    builder = SparkSession.builder.master(_MASTER).appName("bench.clients")
    for setting in _COMMON:
        builder = builder.config(*setting.split("=", 1))
    spark = tsfile_catalog.configure(builder, warehouse=warehouse, name=CATALOG).getOrCreate()
    tsfile_catalog.register(spark)
    # The benchmark table, written by the tsfile source and registered in the warehouse.
    data = str(Path(work) / "sensors")
    frame = build_frame(spark, scale)
    write_tsfile(frame, data)
    parquet = str(Path(work) / "sensors.parquet")
    frame.write.parquet(parquet)
    Catalog(spark, warehouse, register_views=False).sql(
        f"CREATE TABLE {SQL_TABLE} USING tsfile LOCATION '{data}'"
    )
    table = f"{CATALOG}.default.{SQL_TABLE}"
    queries = [q for q in build_queries(scale) if q.id in QUERIES]
    connect_port, thrift_port = _free_port(), _free_port()
    connect_extra = [
        "--conf",
        "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf",
        f"spark.connect.grpc.binding.port={connect_port}",
    ]
    thrift_extra = [
        "--hiveconf",
        f"hive.server2.thrift.port={thrift_port}",
        "--hiveconf",
        "hive.server2.thrift.bind.host=127.0.0.1",
    ]
    folder = Path(work)
    with (
        _server(_CONNECT_SERVER, warehouse, connect_port, connect_extra, folder / "connect"),
        _server(_THRIFT_SERVER, warehouse, thrift_port, thrift_extra, folder / "thrift"),
        contextlib.closing(hive.connect(host="127.0.0.1", port=thrift_port)) as jdbc,
    ):
        remote = RemoteSparkSession.builder.remote(f"sc://127.0.0.1:{connect_port}").getOrCreate()
        remote.conf.set("spark.sql.session.timeZone", "UTC")
        cursor = jdbc.cursor()

        def fetch(statement: str) -> list[list[Any]]:
            cursor.execute(statement)
            return _rows(cursor.fetchall())

        prepared: dict[str, Any] = {}  # statement -> its Connect DataFrame, made once

        def collect_prepared(text: str) -> list[list[Any]]:
            if text not in prepared:
                prepared[text] = remote.sql(text)
            return _rows(prepared[text].collect())

        runners: dict[str, Callable[[str], list[list[Any]]]] = {
            "inprocess": lambda text: _rows(spark.sql(text).collect()),
            "connect": lambda text: _rows(remote.sql(text).collect()),
            "jdbc": fetch,
            PREPARED: collect_prepared,
            EAGER: lambda text: (remote.sql(text), [])[1],  # no rows: nothing collected
        }
        # The floors first: a statement and a query with no table, the client's own cost.
        statements = {
            FLOOR: FLOOR_SQL,
            QUERY_FLOOR: QUERY_FLOOR_SQL,
            **{q.id: sql_text(q, table) for q in queries},
        }
        by_path = f"parquet.`{parquet}`"
        statements.update({f"{q.id}/{PARQUET}": sql_text(q, by_path) for q in queries})

        def paths(key: str) -> tuple[str, ...]:
            return PARQUET_PATHS if key.endswith(f"/{PARQUET}") else PATHS

        times: dict[str, dict[str, list[float]]] = {
            k: {p: [] for p in paths(k)} for k in statements
        }
        answers: dict[str, dict[str, list[list[Any]]]] = {k: {} for k in statements}
        for key, text in statements.items():  # untimed: each path's first run (plans, workers)
            for path in paths(key):
                answers[key][path] = runners[path](text)
        for rep in range(scale.repetitions):
            for key, text in statements.items():
                for path in paths(key) if rep % 2 == 0 else paths(key)[::-1]:
                    began = time.perf_counter()
                    runners[path](text)
                    times[key][path].append(time.perf_counter() - began)
        remote.stop()
    spark.stop()
    results: dict[str, Any] = {
        "scale": scale.to_json(),
        "master": _MASTER,
        "cpu_count": os.cpu_count(),
        "load_average": list(os.getloadavg()),
        **{
            key: {
                "sql": statements[key],
                "times_s": times[key],
                "best_s": {p: min(times[key][p]) for p in PATHS},
                "median_s": {p: statistics.median(times[key][p]) for p in PATHS},
            }
            for key in (FLOOR, QUERY_FLOOR)
        },
        "queries": [],
        "parquet": [],
    }
    # A query's like: two analyses through Connect, one plan, no job.
    floor = results[QUERY_FLOOR]["best_s"]
    for query in queries:
        best = {p: min(times[query.id][p]) for p in PATHS}
        got = answers[query.id]
        results["queries"].append(
            {
                "id": query.id,
                "title": query.title,
                "sql": sql_text(query, table),
                "times_s": times[query.id],
                "best_s": best,
                "median_s": {p: statistics.median(times[query.id][p]) for p in PATHS},
                "ratios": {c: best[c] / best["inprocess"] for c in CLIENTS},
                # The client's time less its own extra cost on a query (the query floor's).
                "net_ratios": {
                    c: (best[c] - (floor[c] - floor["inprocess"])) / best["inprocess"]
                    for c in CLIENTS
                },
                "result_rows": len(got["inprocess"]),
                "same_answer": {c: same_rows(got[c], got["inprocess"]) for c in CLIENTS},
            }
        )
        key = f"{query.id}/{PARQUET}"
        best = {p: min(times[key][p]) for p in PARQUET_PATHS}
        results["parquet"].append(
            {
                "id": query.id,
                "sql": statements[key],
                "times_s": times[key],
                "best_s": best,
                "median_s": {p: statistics.median(times[key][p]) for p in PARQUET_PATHS},
                "ratios": {c: best[c] / best["inprocess"] for c in CLIENTS},
                "same_answer": {c: same_rows(answers[key][c], got["inprocess"]) for c in CLIENTS},
            }
        )
    results["elapsed_s"] = time.monotonic() - started
    results["measured_at"] = measured_at()  # the commit whose code is measured (bench/stamp.py)
    return results


def _fmt_s(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def render_section(results: dict[str, Any]) -> str:
    """The generated "Spark clients" section of docs/benchmarks.md."""
    scale = results["scale"]
    worst = {c: max(q["ratios"][c] for q in results["queries"]) for c in CLIENTS}
    lines = [
        "## Spark clients: Spark Connect and JDBC against in-process (issue 37)",
        "",
        stamp(results.get("measured_at")),
        "",
        "Generated by `python -m bench.clients` (bench/clients.py) in "
        f"{results['elapsed_s']:.0f} s: {scale['rows']:,} rows ({scale['devices']} devices x "
        f"{scale['timestamps']:,} timestamps, {scale['parts']} parts) in one warehouse; the "
        "same SQL text on `bench.default.sensors` through plain `spark.sql` in a PySpark "
        "driver holding the catalog (in-process), a Spark Connect server and the Thrift JDBC "
        "server (PyHive), each server started with `tsfile-catalog spark-conf`'s settings "
        f"alone, every JVM `{results['master']}`; one path at a time, order alternating, "
        f"one untimed run first, the fastest of {scale['repetitions']} (medians in "
        "bench/out/clients.json). "
        f"{results['cpu_count']} cores, load average "
        f"{'/'.join(f'{v:.1f}' for v in results['load_average'])} at the end.",
        "",
        "| Target | Limit | Measured (worst query) | Met |",
        "|---|---|---|---|",
    ]
    for client, label in (("connect", "Spark Connect"), ("jdbc", "JDBC (Thrift server)")):
        met = "**met**" if worst[client] <= TARGET else "**not met**"
        lines.append(f"| {label} / in-process time | <= {TARGET}x | {worst[client]:.2f}x | {met} |")
    lines += [
        "",
        "| Query | in-process | Spark Connect | JDBC | Connect / in-process | "
        "JDBC / in-process | Result rows | Same answer |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for q in results["queries"]:
        m, r = q["best_s"], q["ratios"]
        same = "yes" if all(q["same_answer"].values()) else "**NO**"
        lines.append(
            f"| {q['id']} ({q['title']}) | {_fmt_s(m['inprocess'])} | {_fmt_s(m['connect'])} | "
            f"{_fmt_s(m['jdbc'])} | **{r['connect']:.2f}x** | **{r['jdbc']:.2f}x** | "
            f"{q['result_rows']} | {same} |"
        )
    for key, label in ((FLOOR, "floor"), (QUERY_FLOOR, "floor query")):
        floor = results.get(key)
        if floor:
            f = floor["best_s"]
            lines.append(
                f"| {label}: `{floor['sql']}` | {_fmt_s(f['inprocess'])} | "
                f"{_fmt_s(f['connect'])} | {_fmt_s(f['jdbc'])} | "
                f"{f['connect'] / f['inprocess']:.2f}x | {f['jdbc'] / f['inprocess']:.2f}x | 1 | |"
            )
    if results.get(QUERY_FLOOR):
        lines += _floors(results[QUERY_FLOOR], results["queries"])
    if all(PREPARED in q["best_s"] for q in results["queries"]):
        lines += _connect_breakdown(results["queries"], results.get(QUERY_FLOOR))
    if results.get("parquet"):
        lines += _parquet_baseline(results["queries"], results["parquet"])
    return "\n".join(lines)


def _parquet_baseline(
    queries: Sequence[dict[str, Any]], parquet: Sequence[dict[str, Any]]
) -> list[str]:
    """The same queries on the Parquet copy read by path, next to the catalog table's ratios:
    what each client adds when no catalog of ours is in the query."""
    ours = {q["id"]: q["ratios"] for q in queries}
    lines = [
        "",
        "The same SQL text on a Parquet copy of the rows read by path (`parquet.`<path>``: "
        "Spark's own source, no catalog of ours in the query), on the same three paths:",
        "",
        "| Query | in-process | Spark Connect | JDBC | Connect / in-process | JDBC / in-process "
        "| catalog table's Connect / JDBC ratios | Same answer as the catalog's |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for q in parquet:
        m, r, mine = q["best_s"], q["ratios"], ours[q["id"]]
        same = "yes" if all(q["same_answer"].values()) else "**NO**"
        lines.append(
            f"| {q['id']} | {_fmt_s(m['inprocess'])} | {_fmt_s(m['connect'])} | "
            f"{_fmt_s(m['jdbc'])} | {r['connect']:.2f}x | {r['jdbc']:.2f}x | "
            f"{mine['connect']:.2f}x / {mine['jdbc']:.2f}x | {same} |"
        )
    worst = {c: max(q["ratios"][c] for q in parquet) for c in CLIENTS}
    lines += [
        "",
        f"On Spark's own Parquet source the worst query is {worst['connect']:.2f}x in-process "
        f"through Spark Connect and {worst['jdbc']:.2f}x through JDBC: what the client "
        "path costs with no catalog of ours in the query.",
    ]
    return lines


def _floors(query_floor: dict[str, Any], queries: Sequence[dict[str, Any]]) -> list[str]:
    """What each client adds to any query (the floor query's extra time over in-process's),
    the shortest in-process time the target then allows, and each client's worst query less
    that cost: the share of the client's time that the catalog's query itself makes."""
    f = query_floor["best_s"]
    extra = {c: f[c] - f["inprocess"] for c in CLIENTS}
    net = {c: max(q["net_ratios"][c] for q in queries) for c in CLIENTS}
    fastest = min(q["best_s"]["inprocess"] for q in queries)
    ratio = f["connect"] / f["inprocess"]
    if extra["connect"] > 0:
        bound = (
            f"costs {_fmt_s(extra['connect'])} more than in-process ({ratio:.2f}x), so a query "
            f"within {TARGET}x through Connect takes at least "
            f"{_fmt_s(extra['connect'] / (TARGET - 1))} in-process, whatever the catalog "
            f"costs: the fastest here takes {_fmt_s(fastest)}. "
        )
    else:
        bound = f"costs no more than in-process ({ratio:.2f}x). "
    return [
        "",
        "The floor rows have no table: a statement, and a query answered with no Spark job (a "
        "local relation, as the catalog's statistics answers are): what each client adds to "
        "any statement and any query (Connect's ExecutePlan round trips, its second "
        "analysis and Arrow batches; a Thrift operation's open, fetch and close), with no "
        f"catalog of ours in it. Through Spark Connect the floor query {bound}"
        "Less each client's extra cost on the floor query, the worst query is "
        f"{net['connect']:.2f}x in-process through Spark Connect and {net['jdbc']:.2f}x "
        "through JDBC.",
    ]


def _connect_breakdown(
    queries: Sequence[dict[str, Any]], query_floor: dict[str, Any] | None = None
) -> list[str]:
    """Where Spark Connect's time goes: its eager ``spark.sql`` alone and its ``collect()``
    alone (of a DataFrame ``spark.sql`` made beforehand), fastest runs of each; the floor
    query's too when it was run."""
    lines = [
        "",
        "Where Spark Connect's time goes. PySpark's Connect `spark.sql(text)` is eager: one "
        "ExecutePlan of a SqlCommand, which the server parses and analyses (asking the "
        "catalog for the table) before it answers with the relation; `collect()` sends that "
        "relation in a second ExecutePlan, analysed, planned and run again (the catalog is "
        "asked for the table's latest version once more, so a repeated `collect()` still "
        "sees new commits). A `SET` (the floor) is answered by the first. Timed apart:",
        "",
        "| Query | in-process | Connect `spark.sql(text)` alone | Connect `collect()` alone "
        "| `collect()` alone / in-process |",
        "|---|---|---|---|---|",
    ]
    eager, prepared = [], []
    for q in queries:
        m = q["best_s"]
        eager.append(m[EAGER])
        prepared.append(m[PREPARED] / m["inprocess"])
        lines.append(
            f"| {q['id']} | {_fmt_s(m['inprocess'])} | {_fmt_s(m[EAGER])} | "
            f"{_fmt_s(m[PREPARED])} | {prepared[-1]:.2f}x |"
        )
    worst = max(prepared)
    floor = ""
    if query_floor is not None:
        f = query_floor["best_s"]
        lines.append(
            f"| floor query | {_fmt_s(f['inprocess'])} | {_fmt_s(f[EAGER])} | "
            f"{_fmt_s(f[PREPARED])} | {f[PREPARED] / f['inprocess']:.2f}x |"
        )
        floor = (
            f" (the floor query's, with no table to load: {_fmt_s(f[EAGER])}; its "
            f"`collect()` alone: {f[PREPARED] / f['inprocess']:.2f}x in-process)"
        )
    lines += [
        "",
        f"The eager `spark.sql` costs {_span(eager)} a query{floor}, a round trip with a "
        "whole analysis that in-process `spark.sql` folds into its one; Connect's `collect()` "
        f"alone is at worst {worst:.2f}x in-process "
        f"({'within' if worst <= TARGET else 'beyond'} the {TARGET}x target). A client that "
        "runs a query more than once can keep the DataFrame and `collect()` it again.",
    ]
    return lines


def _span(values: Sequence[float]) -> str:
    low, high = min(values) * 1000, max(values) * 1000
    return f"{low:.0f} ms" if round(low) == round(high) else f"{low:.0f} to {high:.0f} ms"


def main(argv: Sequence[str] | None = None) -> int:
    from bench.report import splice_section

    parser = argparse.ArgumentParser(prog="python -m bench.clients", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="the smallest scale; no docs")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out")
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        results = bench_clients(work, _scale(args.smoke))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "clients.json").write_text(json.dumps(results, indent=2))
    section = render_section(results)
    print(section)
    if not args.smoke:
        splice_section(args.docs, "clients", section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
