"""A ``replaceWhere``'s straddling parts, rewritten before the write in Spark tasks.

A ``replaceWhere`` overwrite removes the rows its predicate matches: parts wholly inside
are dropped in metadata, parts straddling it are rewritten without those rows
(:func:`~tsfile_catalog.table.rewrite.remove_matching_rows`). That happens in the write's
commit, which Spark runs in a Python worker process that cannot start Spark jobs, so there
the straddling parts are rewritten one after another. A caller holding the session
(Catalog.sql's ``INSERT ... REPLACE WHERE``; the catalog plugin's overwrite by condition, as
its write starts) rewrites them first, as Spark tasks of a
:class:`~tsfile_catalog.table.rewrite.RewriteJob` (:func:`prestage_replace`), records what
they staged in the job's staging folder (:data:`~tsfile_catalog.metadata.ownership.PRESTAGED_NAME`,
:meth:`PrestagedReplace.save`) and names the job in the internal write option
:data:`REPLACE_STAGED`. The commit takes each straddling part's staged rewrite from there
and rewrites itself only the parts the table gained since (a concurrent append)
(:func:`prestaged_rewrites`); without a record it rewrites them all, as without the option.

The staged rewrites stand only for the predicate the commit binds: the same text, time
unit, ``timestampAs``, time zone and written schema, over a table whose schema is unchanged
(:meth:`PrestagedReplace.applies`); otherwise the commit rewrites every straddling part
itself. A part is immutable and its path unique, so a rewrite staged for a path is that
part's rewrite at any later version. The caller removes the job's folder after the write,
whatever it did; the commit moves only what it takes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.io import FileIO, join_url
from tsfile_catalog.metadata.compaction import plan_removal
from tsfile_catalog.metadata.expressions import TimestampAs, TimeUnit
from tsfile_catalog.metadata.ownership import (
    PRESTAGED_NAME,
    STAGING_DIR,
    is_part_name,
    task_dir_name,
)
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.metadata.schema import TableSchema
from tsfile_catalog.options import WriteOptions
from tsfile_catalog.table.rewrite import (
    PartChange,
    PartRewrites,
    PartStager,
    RewriteJob,
    StagedFile,
    Without,
)
from tsfile_catalog.table.rewrite_tasks import (
    TaskRunner,
    part_rewrites,
    staged_from_json,
    staged_to_json,
)
from tsfile_catalog.write.plan import WritePlan, replace_predicate

__all__ = [
    "REPLACE_STAGED",
    "PrestagedReplace",
    "prestage_replace",
    "load_prestaged",
    "prestaged_rewrites",
]

# The write option naming the job whose staging folder holds a PrestagedReplace (internal:
# Catalog.sql and the catalog plugin set it).
REPLACE_STAGED = "replaceStaged"

FORMAT_VERSION = 1

# Per part path: how many of its rows matched, and its staged rewrite (none: nothing left).
Rewrite = tuple[int, tuple[StagedFile, ...]]


@dataclass(frozen=True)
class PrestagedReplace:
    """The straddling parts' rewrites a ``replaceWhere`` staged before its write, and what
    their predicate was bound from."""

    job: str
    predicate: str
    unit: TimeUnit
    timestamp_as: TimestampAs
    time_zone: str
    written: TableSchema  # the write's schema, which the predicate was bound to
    table_schema: TableSchema  # the table's schema the parts were read in
    rewrites: Mapping[str, Rewrite]

    def applies(
        self, plan: WritePlan, options: WriteOptions, time_zone: str | None, table: TableSchema
    ) -> bool:
        """Whether the commit binds the same predicate over the same table schema."""
        return (
            self.predicate == options.replace_where
            and self.unit == plan.unit
            and self.timestamp_as == plan.timestamp_as
            and self.time_zone == time_zone
            and self.written == plan.schema
            # Physical names too: the rewritten parts hold the columns under them.
            and self.table_schema.same_mapping(table)
        )

    def save(self, io: FileIO, location: str) -> None:
        """Record this in its job's staging folder, where :func:`load_prestaged` finds it."""
        io.write_bytes(_record(location, self.job), self.to_json().encode())

    def to_json(self) -> str:
        types = {c.name: c.type for c in self.table_schema.fields}
        return json.dumps(
            {
                "format_version": FORMAT_VERSION,
                "job": self.job,
                "predicate": self.predicate,
                "unit": self.unit,
                "timestamp_as": self.timestamp_as,
                "time_zone": self.time_zone,
                "written": self.written.to_json(),
                "table_schema": self.table_schema.to_json(),
                "rewrites": {
                    path: [count, [staged_to_json(s, types) for s in staged]]
                    for path, (count, staged) in self.rewrites.items()
                },
            }
        )

    @classmethod
    def from_json(cls, text: str) -> PrestagedReplace:
        """Raises:
        OptionError: naming :data:`REPLACE_STAGED`, when ``text`` is not what
            :meth:`to_json` writes (its record was tampered with)."""
        try:
            obj: dict[str, Any] = json.loads(text)
            if obj.get("format_version") != FORMAT_VERSION:
                raise ValueError(f"format_version {obj.get('format_version')!r}")
            table_schema = TableSchema.from_json(obj["table_schema"])
            types = {c.name: c.type for c in table_schema.fields}
            return cls(
                job=str(obj["job"]),
                predicate=str(obj["predicate"]),
                unit=obj["unit"],
                timestamp_as=obj["timestamp_as"],
                time_zone=str(obj["time_zone"]),
                written=TableSchema.from_json(obj["written"]),
                table_schema=table_schema,
                rewrites={
                    str(path): (int(count), tuple(staged_from_json(s, types) for s in staged))
                    for path, (count, staged) in obj["rewrites"].items()
                },
            )
        except (ValueError, KeyError, TypeError) as e:
            raise OptionError(
                f"option '{REPLACE_STAGED}' names a job whose {PRESTAGED_NAME} is not readable: {e}"
            ) from e


def _record(location: str, job: str) -> str:
    return join_url(location, STAGING_DIR, job, task_dir_name(0, 0), PRESTAGED_NAME)


def load_prestaged(io: FileIO, location: str, job: str) -> PrestagedReplace | None:
    """The pre-staged rewrites job ``job`` recorded at ``location`` (None: none, as when
    nothing straddled the predicate or the pre-staging was off).

    Raises:
        OptionError: naming :data:`REPLACE_STAGED`, when the record is not readable.
    """
    url = _record(location, job)
    if not io.exists(url):
        return None
    prestaged = PrestagedReplace.from_json(io.read_bytes(url).decode())
    # The commit moves what the record names into the table: only the job's own staged parts.
    folder = join_url(location, STAGING_DIR, job) + "/"
    for _, staged in prestaged.rewrites.values():
        for item in staged:
            name = item.staged_url.rsplit("/", 1)[-1]
            if not (
                item.staged_url.startswith(folder) and is_part_name(name) and item.part.path == name
            ):
                raise OptionError(
                    f"option '{REPLACE_STAGED}' names a job whose {PRESTAGED_NAME} lists "
                    f"{item.staged_url!r} as {item.part.path!r}: not a part this job staged"
                )
    return prestaged


def prestage_replace(
    job: RewriteJob, plan: WritePlan, options: WriteOptions, runner: TaskRunner
) -> PrestagedReplace | None:
    """Rewrite, as ``runner``'s tasks in ``job``, the parts of ``job.table`` that straddle
    the write's ``replaceWhere`` (bound as the commit binds it), and record them in the
    job's staging folder, where the commit of a write whose :data:`REPLACE_STAGED` names
    ``job`` finds them. None (nothing recorded) when the write names no time zone (the
    commit would take its executors'), or nothing straddles.

    Raises:
        OptionError: the predicate cannot be bound exactly (naming the option), as the
            write itself would raise.
    """
    zone = options.time_zone
    if options.replace_where is None or zone is None:
        return None
    table = job.table
    predicate = replace_predicate(plan, options, zone, exact=True)
    # External parts too: their rows left go into new parts of the table's own.
    straddling = list(plan_removal(table.parts(), predicate, table.schema).rewrite)
    if not straddling:
        return None
    answers = part_rewrites(job, runner)(straddling, Without(predicate))
    prestaged = PrestagedReplace(
        job=job.job,
        predicate=options.replace_where,
        unit=plan.unit,
        timestamp_as=plan.timestamp_as,
        time_zone=zone,
        written=plan.schema,
        table_schema=table.schema,
        rewrites={p.path: answer for p, answer in zip(straddling, answers, strict=True)},
    )
    prestaged.save(table.io, table.location)
    return prestaged


def prestaged_rewrites(prestaged: PrestagedReplace, job: RewriteJob) -> PartRewrites:
    """The commit's part rewrites: each part's pre-staged rewrite, and the others (parts
    added since the pre-staging) rewritten here, in a task folder of ``job``'s own."""

    def rewrite(parts: Sequence[PartFile], change: PartChange) -> list[Rewrite]:
        missing = [p for p in parts if p.path not in prestaged.rewrites]
        done: dict[str, Rewrite] = {}
        if missing:
            task = job.reserve_tasks(1)
            with PartStager(job.table, job.settings, job=job.job, partition=task) as stager:
                for part in missing:
                    done[part.path] = change(stager, part)
        return [done[p.path] if p.path in done else prestaged.rewrites[p.path] for p in parts]

    return rewrite
