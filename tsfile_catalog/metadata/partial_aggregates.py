"""What a scan pre-aggregates before handing rows to Spark: the ``partialAggregate`` spec.

Pure (no Spark, pyarrow or storage). A :class:`PartialSpec` names the group keys (TAG columns
and at most one :class:`TimeBucket` over ``time``) and the partial states each output row
carries (:class:`PartialState`). The scan computes one row per group and chunk of data; Spark
merges those rows (sum of counts, min of mins, ...), so any number of partial rows per group is
correct. The spec travels to Spark's Python workers as the JSON of :meth:`PartialSpec.to_json`.

Time buckets mean exactly what Spark's expressions mean:

* ``date_trunc`` (``unit`` one of :data:`TRUNC_UNITS`) truncates an instant in the session time
  zone ``time_zone`` (Spark's ``DateTimeUtils.truncTimestamp``);
* ``window`` is a tumbling ``window(time, '<width>')`` (its start);
* ``floor`` is ``floor(time / width) * width`` over the raw long ``time`` (double division, as
  Spark evaluates it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

from tsfile_catalog.exceptions import OptionError
from tsfile_catalog.metadata.schema import TIME_COLUMN, Category, DataType, TableSchema

__all__ = [
    "BucketKind",
    "StateFunction",
    "TRUNC_UNITS",
    "TimeBucket",
    "PartialState",
    "PartialSpec",
    "parse_partial_spec",
]

BucketKind = Literal["date_trunc", "window", "floor"]
StateFunction = Literal[
    "count_all", "count", "sum", "sum_double", "sum_true", "min", "max", "first", "last"
]

# Spark's date_trunc levels by their canonical name (aliases map here in the SQL layer).
TRUNC_UNITS = (
    "MICROSECOND",
    "MILLISECOND",
    "SECOND",
    "MINUTE",
    "HOUR",
    "DAY",
    "WEEK",
    "MONTH",
    "QUARTER",
    "YEAR",
)

_NUMERIC = frozenset({DataType.INT32, DataType.INT64, DataType.FLOAT, DataType.DOUBLE})
# min/max compare as Spark does only where Arrow's order is Spark's (no BLOB).
_ORDERED = _NUMERIC | {
    DataType.BOOLEAN,
    DataType.STRING,
    DataType.TEXT,
    DataType.DATE,
    DataType.TIMESTAMP,
}
# ``first``/``last`` take the value of the earliest/latest row by time whatever it is, NULL
# included (Spark's min_by/max_by): the scan sorts each chunk by time to know it.
_TIME_ORDERED = ("first", "last")


@dataclass(frozen=True, slots=True)
class TimeBucket:
    """One time bucket group key, written to the partial row as ``name``.

    Attributes:
        kind: the Spark expression it evaluates (see the module docstring).
        unit: ``date_trunc``'s level (one of :data:`TRUNC_UNITS`); None otherwise.
        width: ``window``'s width in microseconds, or ``floor``'s divisor in raw time units.
        time_zone: ``date_trunc``'s session time zone (a Spark zone ID).
        name: the partial column holding the bucket.
    """

    kind: BucketKind
    name: str
    unit: str | None = None
    width: int | None = None
    time_zone: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in get_args(BucketKind):
            raise OptionError(f"option 'partialAggregate': unknown time bucket {self.kind!r}")
        if self.kind == "date_trunc" and (self.unit not in TRUNC_UNITS or not self.time_zone):
            raise OptionError(
                f"option 'partialAggregate': date_trunc needs a unit of {', '.join(TRUNC_UNITS)} "
                f"and a time zone, got unit {self.unit!r}, zone {self.time_zone!r}"
            )
        if self.kind != "date_trunc" and (self.width is None or self.width <= 0):
            raise OptionError(
                f"option 'partialAggregate': {self.kind} needs a positive width, got {self.width!r}"
            )

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "unit": self.unit,
            "width": self.width,
            "time_zone": self.time_zone,
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> TimeBucket:
        width = obj.get("width")
        return cls(
            kind=cast(BucketKind, obj["kind"]),
            name=str(obj["name"]),
            unit=obj.get("unit"),
            width=None if width is None else int(width),
            time_zone=obj.get("time_zone"),
        )


@dataclass(frozen=True, slots=True)
class PartialState:
    """One partial state column: ``function`` over ``column`` (None for ``count_all``).

    ``count_all``/``count`` are BIGINT; ``sum`` has Spark's sum type (BIGINT for integers,
    DOUBLE for floats); ``sum_double`` sums the values cast to DOUBLE (what Spark's ``avg``
    adds up); ``sum_true`` counts a BOOLEAN's true values, NULL without a value (Spark's
    ``sum(CAST(b AS <integral>))``, BIGINT); ``min``/``max``/``first``/``last`` keep the
    column's type, ``first``/``last`` being the value at the earliest/latest time of the group
    (NULL if that value is NULL).
    """

    function: StateFunction
    column: str | None
    name: str

    def to_json(self) -> dict[str, Any]:
        return {"function": self.function, "column": self.column, "name": self.name}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> PartialState:
        column = obj.get("column")
        return cls(
            function=cast(StateFunction, obj["function"]),
            column=None if column is None else str(column),
            name=str(obj["name"]),
        )


@dataclass(frozen=True, slots=True)
class PartialSpec:
    """Group keys and partial states of a pre-aggregating scan.

    Output columns, in order: ``keys`` (TAG values), the bucket (if any), the states.
    """

    keys: tuple[str, ...]
    bucket: TimeBucket | None
    states: tuple[PartialState, ...]

    @property
    def output_names(self) -> tuple[str, ...]:
        bucket = (self.bucket.name,) if self.bucket is not None else ()
        return (*self.keys, *bucket, *(s.name for s in self.states))

    @property
    def time_ordered(self) -> bool:
        """Whether a state needs rows in time order (``first``/``last``)."""
        return any(s.function in _TIME_ORDERED for s in self.states)

    def input_columns(self, schema: TableSchema) -> list[str]:
        """The table columns the scan must read, in table order (``time`` first)."""
        wanted = {TIME_COLUMN, *self.keys, *(s.column for s in self.states if s.column)}
        return [name for name in schema.names if name in wanted]

    def to_json(self) -> str:
        return json.dumps(
            {
                "keys": list(self.keys),
                "bucket": None if self.bucket is None else self.bucket.to_json(),
                "states": [s.to_json() for s in self.states],
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> PartialSpec:
        try:
            obj = json.loads(text)
            bucket = obj.get("bucket")
            return cls(
                keys=tuple(str(k) for k in obj["keys"]),
                bucket=None if bucket is None else TimeBucket.from_json(bucket),
                states=tuple(PartialState.from_json(s) for s in obj["states"]),
            )
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise OptionError(
                f"option 'partialAggregate' = {text!r} is not a valid spec: {e}"
            ) from e


def parse_partial_spec(text: str, schema: TableSchema) -> PartialSpec:
    """The spec in ``text`` (JSON), checked against ``schema``.

    Raises:
        OptionError: malformed JSON, a key that is no TAG column, a state over an unknown
            column or a type its function cannot aggregate exactly, duplicate output names, or
            a ``floor`` bucket over anything but raw time.
    """
    spec = PartialSpec.from_json(text)
    where = f"option 'partialAggregate' = {text!r}"
    for key in spec.keys:
        col = schema.column(key)
        if col is None or col.category is not Category.TAG:
            raise OptionError(f"{where}: group key {key!r} is not a TAG column")
    for state in spec.states:
        _check_state(state, schema, where)
    names = spec.output_names
    if len(set(names)) != len(names):
        raise OptionError(f"{where}: output names repeat: {', '.join(names)}")
    return spec


def _check_state(state: PartialState, schema: TableSchema, where: str) -> None:
    if state.function not in get_args(StateFunction):
        raise OptionError(f"{where}: unknown partial function {state.function!r}")
    if state.function == "count_all":
        if state.column is not None:
            raise OptionError(f"{where}: count_all takes no column")
        return
    if state.column is None:
        raise OptionError(f"{where}: {state.function} needs a column")
    if state.column == TIME_COLUMN:
        type_ = DataType.TIMESTAMP
    else:
        col = schema.column(state.column)
        if col is None:
            raise OptionError(f"{where}: unknown column {state.column!r}")
        type_ = col.type
    if state.function in ("sum", "sum_double") and type_ not in _NUMERIC:
        raise OptionError(f"{where}: cannot sum column {state.column!r} of type {type_.value}")
    if state.function == "sum_true" and type_ is not DataType.BOOLEAN:
        raise OptionError(
            f"{where}: sum_true counts the true values of a BOOLEAN, not of column "
            f"{state.column!r} of type {type_.value}"
        )
    if state.function in ("min", "max") and type_ not in _ORDERED:
        raise OptionError(
            f"{where}: {state.function} of column {state.column!r} of type {type_.value} is not "
            "pre-aggregated"
        )
