"""Synthetic sensor data: D devices x T timestamps x five FIELD types, built in the JVM.

Row ``id`` of ``spark.range`` maps to ``(time index = id // D, device = id % D)``, and the
range is split into ``parts`` contiguous partitions, so every Spark task holds one time bucket
of every device and writes exactly one part: no shuffle, no Python loop. Every value is a
pure function of ``id`` (``xxhash64``, not ``rand``), so the tsfile and Parquet writes, which
each recompute the frame, store identical rows.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "Scale",
    "T0_MS",
    "STEP_MS",
    "TABLE",
    "TAG_COLUMNS",
    "FIELD_COLUMNS",
    "REALISTIC_TABLE",
    "REALISTIC_TAGS",
    "REALISTIC_FIELDS",
    "build_frame",
    "realistic_arrow",
    "write_tsfile",
    "write_parquet",
]

T0_MS = 1_704_067_200_000  # 2024-01-01T00:00:00Z
STEP_MS = 1_000
TABLE = "sensors"
TAG_COLUMNS = ("region", "device")
FIELD_COLUMNS = ("f_double", "f_float", "f_long", "f_bool", "f_str")


@dataclass(frozen=True)
class Scale:
    """How big the generated table is and how hard the harness works."""

    name: str
    regions: int
    devices_per_region: int
    timestamps: int
    parts: int
    repetitions: int
    planning_parts: tuple[int, ...]
    planning_devices_per_part: int
    warmup: bool = True  # an untimed run per query (and a tiny write per engine) first
    # The realistic data set (realistic_arrow): devices x seconds, for bytes and writes.
    realistic_devices: int = 100
    realistic_seconds: int = 20_000

    @property
    def devices(self) -> int:
        return self.regions * self.devices_per_region

    @property
    def rows(self) -> int:
        return self.devices * self.timestamps

    @property
    def time_max_ms(self) -> int:
        """The last timestamp written (inclusive)."""
        return T0_MS + (self.timestamps - 1) * STEP_MS

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "devices": self.devices, "rows": self.rows}

    @classmethod
    def millions(cls, rows_millions: float) -> Scale:
        """About ``rows_millions`` million rows over 100 devices, 10 parts per million rows."""
        regions, per_region = 10, 10
        devices = regions * per_region
        timestamps = max(100, round(rows_millions * 1_000_000 / devices))
        parts = max(4, round(rows_millions * 10))
        return cls(
            name=f"{rows_millions:g}M",
            regions=regions,
            devices_per_region=per_region,
            timestamps=timestamps,
            parts=parts,
            repetitions=3,
            planning_parts=(1_000, 10_000),
            planning_devices_per_part=devices,
        )

    @classmethod
    def smoke(cls) -> Scale:
        """Seconds, not minutes: enough rows that every query returns something."""
        return cls(
            name="smoke",
            regions=4,
            devices_per_region=5,
            timestamps=2_000,
            parts=4,
            repetitions=1,
            planning_parts=(100, 1_000),
            planning_devices_per_part=20,
            warmup=False,
            realistic_devices=10,
            realistic_seconds=1_000,
        )


def build_frame(spark: SparkSession, scale: Scale) -> DataFrame:
    """The benchmark rows: ``time`` (bigint ms), TAGs ``region``/``device``, five FIELDs.

    ``f_float`` is null on ~30% of rows and ``f_str`` present on only ~10% (sparse).
    """
    from pyspark.sql import functions as F

    d = scale.devices
    width = max(2, math.ceil(math.log10(d + 1)))
    dev = F.col("id") % d
    tidx = F.floor(F.col("id") / d)
    h = F.abs(F.xxhash64(F.col("id"), F.lit(7)))  # deterministic noise in [0, 2^63)
    noise = (h % 10_000) / 10_000.0  # [0, 1)
    return spark.range(0, scale.rows, 1, numPartitions=scale.parts).select(
        (F.lit(T0_MS) + tidx * STEP_MS).alias("time"),
        F.concat(
            F.lit("r"), F.lpad(F.floor(dev / scale.devices_per_region).cast("string"), 2, "0")
        ).alias("region"),
        F.concat(F.lit("d"), F.lpad(dev.cast("string"), width, "0")).alias("device"),
        (F.lit(20.0) + F.sin(tidx / 500.0 + dev) * 10.0 + noise).alias("f_double"),
        F.when(h % 10 < 3, F.lit(None)).otherwise((noise * 100.0).cast("float")).alias("f_float"),
        (tidx * 10 + h % 7).cast("bigint").alias("f_long"),
        (h % 2 == 0).alias("f_bool"),
        F.when(
            h % 10 == 9,
            F.element_at(
                F.array(*map(F.lit, ("ok", "warn", "error", "idle"))),
                (F.floor(h / 10) % 4 + 1).cast("int"),
            ),
        ).alias("f_str"),
    )


def write_tsfile(frame: DataFrame, path: str, table: str = TABLE) -> None:
    (
        frame.write.format("tsfile")
        .option("table", table)
        .option("tagColumns", ",".join(TAG_COLUMNS))
        .mode("append")
        .save(path)
    )


def write_parquet(frame: DataFrame, path: str, compression: str = "snappy") -> None:
    """Parquet (snappy unless told), each file sorted by device then time (the order TsFile
    stores)."""
    (
        frame.sortWithinPartitions(*TAG_COLUMNS, "time")
        .write.option("compression", compression)
        .mode("overwrite")
        .parquet(path)
    )


# -- the realistic data set (issue 12): values shaped like real sensor readings ---------------

REALISTIC_TABLE = "readings"
REALISTIC_TAGS = ("region", "device")
REALISTIC_FIELDS = ("temperature", "pressure", "energy", "door_open", "mode")
_MODES = ("auto", "eco", "manual", "off")


def realistic_arrow(devices: int = 100, seconds: int = 20_000, *, seed: int = 12) -> Any:
    """Sensor readings as a pyarrow table, one row per device per second, device-major.

    Unlike :func:`build_frame`'s hash noise, the values compress the way real telemetry does:
    ``temperature`` (DOUBLE) and ``pressure`` (FLOAT) are random walks at sensor precision,
    ``energy`` (BIGINT) a monotonic counter with small steps, ``door_open`` (BOOLEAN) flips
    rarely (long runs), ``mode`` (STRING) holds one of four values for minutes at a time. A
    seeded generator makes every run store the same rows.
    """
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    dev = np.repeat(np.arange(devices), seconds)
    width = max(2, math.ceil(math.log10(devices + 1)))
    device_names = np.array([f"d{i:0{width}d}" for i in range(devices)], dtype=object)
    region_names = np.array([f"r{i // 10:02d}" for i in range(devices)], dtype=object)
    time = T0_MS + np.tile(np.arange(seconds, dtype=np.int64), devices) * STEP_MS
    walk = rng.normal(0.0, 0.05, (devices, seconds)).cumsum(axis=1)
    temperature = np.round(20.0 + rng.uniform(-5, 5, (devices, 1)) + walk, 2).ravel()
    pressure = (
        np.round(1013.0 + rng.normal(0.0, 0.02, (devices, seconds)).cumsum(axis=1), 1)
        .astype(np.float32)
        .ravel()
    )
    energy = rng.poisson(3, (devices, seconds)).cumsum(axis=1).astype(np.int64).ravel()
    # A state changes with probability p each second: runs of ~1/p seconds.
    door = (rng.random((devices, seconds)) < 0.002).cumsum(axis=1) % 2 == 1
    mode_index = (rng.random((devices, seconds)) < 0.005).cumsum(axis=1) % len(_MODES)
    return pa.table(
        {
            "time": pa.array(time, pa.int64()),
            "region": pa.array(region_names[dev], pa.string()),
            "device": pa.array(device_names[dev], pa.string()),
            "temperature": pa.array(temperature, pa.float64()),
            "pressure": pa.array(pressure, pa.float32()),
            "energy": pa.array(energy, pa.int64()),
            "door_open": pa.array(door.ravel(), pa.bool_()),
            "mode": pa.array(np.array(_MODES, dtype=object)[mode_index.ravel()], pa.string()),
        }
    )
