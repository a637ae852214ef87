"""Part paths: relative for the table's own parts, absolute URLs for external ones."""

from __future__ import annotations

import pytest

from tests.factories import part_file
from tsfile_catalog.exceptions import CorruptManifestError
from tsfile_catalog.metadata.parts import PartFile


@pytest.mark.parametrize(
    ("path", "external_flag", "message"),
    [
        ("old/x.parquet", True, "must be an absolute URL"),
        ("/data/x.tsfile", False, "must be relative"),
        ("s3://b/x.tsfile", False, "must be relative"),
    ],
)
def test_part_paths_are_absolute_exactly_for_external_parts(
    path: str, external_flag: bool, message: str
) -> None:
    obj = part_file("a.tsfile").to_json({})
    obj["path"], obj["external"] = path, external_flag
    with pytest.raises(CorruptManifestError, match=message):
        PartFile.from_json(obj, {})
