"""OPTIMIZE's rewrite of one group of parts: its rows read, merged and staged as new parts.

A group is what :func:`~tsfile_catalog.metadata.compaction.plan_compaction` decides; this is
the rewrite one task (:class:`~tsfile_catalog.table.rewrite_tasks.CompactionTask`) makes of it,
here or on a Spark executor, through the shared read path and a
:class:`~tsfile_catalog.table.rewrite.PartStager`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pyarrow as pa

from tsfile_catalog.formats.tsfile.sort import sort_and_dedupe, split_duplicates
from tsfile_catalog.metadata.expressions import INT64_MAX, INT64_MIN
from tsfile_catalog.metadata.parts import PartFile
from tsfile_catalog.table.rewrite import PartStager, read_part_rows

__all__ = ["compact_parts"]


def compact_parts(
    job: PartStager, parts: Sequence[PartFile], *, resolve_keys: bool, target_size: int
) -> bool:
    """Stage the rows of ``parts`` (in commit order) as new parts that replace them.

    With ``resolve_keys`` (a ``key.duplicates = last`` table; ``parts`` closed over key
    overlap, :class:`~tsfile_catalog.metadata.compaction.CompactionPlan`) one row per
    (device, time) stays, the one of the largest ``key_sequence``, written window of time by
    window of time (:func:`_time_windows`), each window one part of about ``target_size``
    bytes: the parts share no key and only one window's rows are held at once.
    Otherwise every row survives, as an append-only table keeps them: one new part, or, when
    the parts hold a (device, time) more than once, one per repeat, the first row of every key
    in the first (:func:`~tsfile_catalog.formats.tsfile.split_duplicates`). Each new part
    takes the largest sequence of ``parts``.

    Returns:
        Whether anything was staged: False when the repeats would need as many parts as
        ``parts`` already are (rewriting them would gain nothing, and OPTIMIZE would find
        the same work again each run).
    """
    schema = job.source.schema
    if resolve_keys:
        # By ascending sequence, so the stable "last" of each key is the latest.
        ordered = [p for _, p in sorted(enumerate(parts), key=lambda x: (x[1].key_sequence, x[0]))]
        for lo, hi in _time_windows(parts, target_size):
            pieces = [
                read_part_rows(job.source, p, time_min=lo, time_max=hi)
                for p in ordered
                if _meets(p, lo, hi)
            ]
            resolved = sort_and_dedupe(pa.concat_tables(pieces), schema, "last")
            if resolved.num_rows:
                job.write(resolved, sources=parts)
        return True
    rows = pa.concat_tables([read_part_rows(job.source, p) for p in parts])
    layers = split_duplicates(rows, schema)
    if len(layers) >= len(parts):
        return False
    for layer in layers:
        job.write(layer, sources=parts)
    return True


def _meets(part: PartFile, lo: int, hi: int) -> bool:
    if part.min_time is None or part.max_time is None:
        return True
    return part.min_time <= hi and lo <= part.max_time


def _time_windows(parts: Sequence[PartFile], target_size: int) -> list[tuple[int, int]]:
    """Consecutive time windows (inclusive, together every time) each holding about
    ``target_size`` bytes of ``parts``, taking each part's bytes as spread evenly over its time
    range: rows sharing a key share a time, so each window is resolved and written on its
    own, and a rewrite of many overlapping parts holds one window in memory, not all of them.
    """
    spans = [
        (p.min_time, p.max_time, p.size_bytes)
        for p in parts
        if p.min_time is not None and p.max_time is not None
    ]
    total = sum(size for _, _, size in spans)
    count = math.ceil(total / target_size) if spans else 1
    if count <= 1:
        return [(INT64_MIN, INT64_MAX)]
    # The bytes-per-time density changes only where a range starts or ends.
    changes: dict[int, float] = {}
    for lo, hi, size in spans:
        density = size / (hi - lo + 1)
        changes[lo] = changes.get(lo, 0.0) + density
        changes[hi + 1] = changes.get(hi + 1, 0.0) - density
    cuts: list[int] = []
    step = total / count
    wanted = step
    mass = density = 0.0
    points = sorted(changes)
    for start, end in zip(points, points[1:], strict=False):
        density += changes[start]
        while density > 0 and mass + density * (end - start) >= wanted and wanted < total:
            cut = start + math.ceil((wanted - mass) / density) - 1
            if not cuts or cut > cuts[-1]:  # one time holding many windows' bytes: one cut
                cuts.append(cut)
            wanted += step
        mass += density * (end - start)
    # Cuts rise strictly: each window is the times after one cut up to the next.
    starts = [INT64_MIN, *(c + 1 for c in cuts)]
    return list(zip(starts, [*cuts, INT64_MAX], strict=True))
