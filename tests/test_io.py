"""FileIO.move_all: the commit's parallel, all-or-nothing publication of staged parts."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.faults import FaultKind, FaultPlan, InjectedFault
from tsfile_catalog.exceptions import OptionError, StorageError
from tsfile_catalog.io import FileIO


def _staged(root: Path, n: int) -> list[tuple[str, str]]:
    (root / "_staging").mkdir()
    moves = []
    for i in range(n):
        source = root / "_staging" / f"part-{i}.tsfile"
        source.write_bytes(f"part {i}".encode())
        moves.append((str(source), str(root / "data" / f"part-{i}.tsfile")))
    return moves


class _SlowIO(FileIO):
    """Records how many moves run at once; fails the move of ``fail`` if given."""

    def __init__(self, url: str, fail: str | None = None) -> None:
        super().__init__(url)
        self.fail = fail
        self.running = 0
        self.most = 0
        self.lock = threading.Lock()

    def move(self, src: str, dst: str) -> None:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            time.sleep(0.05)
            if src == self.fail:
                raise OSError(f"injected failure moving {src}")
            super().move(src, dst)
        finally:
            with self.lock:
                self.running -= 1


def test_moves_run_in_parallel_and_all_land(tmp_path: Path) -> None:
    moves = _staged(tmp_path, 24)
    io = _SlowIO(str(tmp_path))
    io.move_all(moves, max_workers=8)
    assert 1 < io.most <= 8  # bounded, and really concurrent
    for i, (source, target) in enumerate(moves):
        assert not Path(source).exists()
        assert Path(target).read_bytes() == f"part {i}".encode()


def test_a_failed_move_publishes_nothing(tmp_path: Path) -> None:
    moves = _staged(tmp_path, 12)
    io = _SlowIO(str(tmp_path), fail=moves[5][0])
    with pytest.raises(OSError, match="injected failure"):
        io.move_all(moves, max_workers=4)
    assert io.running == 0  # nothing still in flight after the error
    assert not list((tmp_path / "data").glob("*.tsfile"))


def test_moves_on_object_storage(s3_table: tuple[str, dict[str, Any]]) -> None:
    url, options = s3_table
    io = FileIO(url, options)
    moves = []
    for i in range(6):
        io.write_bytes(f"{url}/_staging/p{i}.tsfile", b"x" * i)
        moves.append((f"{url}/_staging/p{i}.tsfile", f"{url}/p{i}.tsfile"))
    io.move_all(moves)
    assert {f"p{i}.tsfile" for i in range(6)} <= set(io.list_names(url))
    assert [io.size(dst) for _, dst in moves] == list(range(6))
    assert not any(io.exists(src) for src, _ in moves)


def test_storage_failures_name_the_operation_and_the_file(tmp_path: Path) -> None:
    """An unexpected OSError from the store becomes a StorageError (ours, still an OSError)
    naming what was done to which file, the store's error as its cause; a missing file stays
    FileNotFoundError, which callers branch on."""
    rates: dict[FaultKind, float] = {"read": 1.0, "list": 1.0, "delete": 1.0}
    plan = FaultPlan(0, rates, root=str(tmp_path), lost_response=0.0)
    io = FileIO("failing://t", plan.storage_options)
    io.write_bytes("failing://t/a.json", b"{}")
    io.write_bytes("failing://t/b.json", b"{}")
    with pytest.raises(FileNotFoundError):
        io.read_bytes("failing://t/missing.json")
    with plan.armed():
        failures = {
            "read": lambda: io.read_bytes("failing://t/a.json"),
            "list": lambda: list(io.walk_files("failing://t")),
            "delete": lambda: io.delete_files(["failing://t/a.json", "failing://t/b.json"]),
        }
        for operation, call in failures.items():
            with pytest.raises(StorageError) as failed:
                call()
            assert str(failed.value).startswith(f"storage {operation} of failing://t"), operation
            assert isinstance(failed.value.__cause__, InjectedFault)
    assert str(failed.value).startswith("storage delete of failing://t/a.json (and 1 more)")
    assert io.read_bytes("failing://t/a.json") == b"{}"


@pytest.mark.parametrize(
    "url",
    [
        "s3://user:S3CR3T@bucket/t",
        "https://user:S3CR3T@host/t",
        "https://acct.blob.core.windows.net/c/t?sv=2024-01-01&sig=S3CR3T",
        "https://b.s3.amazonaws.com/t?X-Amz-Credential=AKIA&X-Amz-Signature=S3CR3T",
    ],
)
def test_urls_with_credentials_are_refused_before_any_connection(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one storage boundary refuses a URL holding a password or a signature, at
    construction and per call, before a file system is built; the message shows it
    redacted."""

    def connect(*args: object, **kwargs: object) -> None:
        raise AssertionError("a file system was built for a URL with credentials")

    io = FileIO("memory://t")
    assert io.fs is not None
    monkeypatch.setattr("fsspec.get_filesystem_class", connect)
    with pytest.raises(OptionError, match="carries credentials") as refused:
        assert FileIO(url).fs is None
    assert "S3CR3T" not in str(refused.value) and "***" in str(refused.value)
    for call in (io.exists, io.read_bytes, io.normalize, lambda u: io.delete_files([u])):
        with pytest.raises(OptionError, match="carries credentials") as refused:
            call(url)
        assert "S3CR3T" not in str(refused.value)


def test_storage_errors_redact_credentials_the_store_quotes(tmp_path: Path) -> None:
    """A store's own error can quote an endpoint with a password (a credential setting);
    the StorageError shows it redacted."""

    class Quoting(FileIO):
        @property
        def fs(self) -> Any:
            raise ConnectionError("cannot reach https://admin:S3CR3T@minio:9000/?sig=S3CR3T")

    with pytest.raises(StorageError) as failed:
        Quoting("memory://t").read_bytes("memory://t/a")
    assert "S3CR3T" not in str(failed.value) and "https://***@minio:9000/?sig=***" in str(
        failed.value
    )


def test_an_unknown_url_scheme_is_one_line_naming_the_url() -> None:
    io = FileIO("s4://bucket/t")
    with pytest.raises(OptionError) as refused:
        io.exists("s4://bucket/t/_tsfile_manifest")
    message = str(refused.value)
    assert "'s4://bucket/t'" in message and "'s4://' URLs" in message and "\n" not in message
    assert "spelling" in message


def test_missing_s3_credentials_are_one_line_naming_the_file_and_the_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    io = FileIO(
        "s3://bucket/t",
        {"endpoint_url": "http://127.0.0.1:9", "skip_instance_cache": True},
    )
    with pytest.raises(StorageError) as failed:
        io.list_names("s3://bucket/t/_tsfile_manifest")
    message = str(failed.value)
    assert message.startswith("storage list of s3://bucket/t/_tsfile_manifest failed: no ")
    assert "AWS_ACCESS_KEY_ID" in message and "fs.anon=true" in message and "\n" not in message
    assert type(failed.value.__cause__).__name__ == "NoCredentialsError"


def test_a_store_that_cannot_be_reached_is_one_line_naming_the_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """botocore's connection errors are no OSError: they surfaced raw (and through the
    plugin's delegate, as a logged Python traceback)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    io = FileIO(
        "s3://bucket/wh",
        {
            "endpoint_url": "http://127.0.0.1:9",  # the discard port: nothing listens
            "skip_instance_cache": True,
            "config_kwargs": {"retries": {"max_attempts": 1}, "connect_timeout": 1},
        },
    )
    with pytest.raises(StorageError) as failed:
        io.list_names("s3://bucket/wh/_catalog/tables")
    message = str(failed.value)
    assert message.startswith(
        "storage list of s3://bucket/wh/_catalog/tables failed: the store cannot be reached "
        "(EndpointConnectionError: "
    )
    assert message.endswith("check the endpoint (fs.endpoint_url)") and "\n" not in message


def test_a_folder_is_made_again_when_a_concurrent_writer_removes_its_empty_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writers share the staging root and each removes it once empty: when that falls between
    another writer's check of the root and its mkdir below it (as in a race of two UPDATEs,
    ``FileNotFoundError`` naming the writer's job folder), the folder is made again."""
    root = tmp_path / "_staging"
    root.mkdir()
    job = root / "job"
    real_mkdir = os.mkdir
    raced: list[str] = []

    def mkdir(path: Any, mode: int = 0o777, **kwargs: Any) -> None:
        if str(path) == str(job) and not raced:
            raced.append(str(path))
            os.rmdir(root)  # the other writer, done, removes the empty root
        real_mkdir(path, mode, **kwargs)

    monkeypatch.setattr(os, "mkdir", mkdir)
    source = tmp_path / "part.tsfile"
    source.write_bytes(b"rows")
    FileIO(str(tmp_path)).put_file(str(source), str(job / "part.tsfile"))
    assert raced == [str(job)]
    assert (job / "part.tsfile").read_bytes() == b"rows"
