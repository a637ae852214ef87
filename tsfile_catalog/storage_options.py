"""Storage settings in options: the ``fs.*`` prefix, decoding to fsspec storage options, and
which of them hold credentials (never stored with a table, never displayed).

Shared by the Spark data source, the SQL catalog and its registry, and the Spark-free result
builders in :mod:`tsfile_catalog.inspect`; nothing here imports pyspark.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "CREDENTIALS_AT_RUN_TIME",
    "REDACTED",
    "STORAGE_PREFIX",
    "is_credential_option",
    "redact_credentials",
    "storage_options_from",
]

STORAGE_PREFIX = "fs."
"""The prefix of options that are fsspec storage settings (``fs.endpoint_url``): the one
spelling the data source, the SQL catalog and its registry share."""


def storage_options_from(opts: Mapping[str, str]) -> dict[str, Any]:
    """``fs.<name>`` options as fsspec storage options (JSON values decoded)."""
    out: dict[str, Any] = {}
    for key, value in opts.items():
        if key.startswith(STORAGE_PREFIX):
            try:
                out[key[len(STORAGE_PREFIX) :]] = json.loads(value)
            except (json.JSONDecodeError, TypeError):
                out[key[len(STORAGE_PREFIX) :]] = value
    return out


# Words in an option name (or in a key of its JSON value) that suggest a credential: fsspec's
# own names (key, secret, token, password, ...) and the SDKs' (aws_secret_access_key,
# account_key, sas_token, client_secret, connection_string, pkey, passphrase, ...). Broad on
# purpose: a setting refused by mistake can still be passed at run time; a stored secret
# cannot be unpublished.
_CREDENTIAL_WORDS = re.compile(
    r"key|secret|token|passw|passphrase|pwd|credential|auth|cookie|connection.?string",
    re.IGNORECASE,
)

# A URL carrying a user name and password (https://user:pass@host).
_URL_USERINFO = re.compile(r"://[^/@\s]+@")

CREDENTIALS_AT_RUN_TIME = (
    "in the environment (e.g. AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, or fsspec's "
    "FSSPEC_<PROTOCOL>_<NAME> variables and config files), or with Catalog(spark, warehouse, "
    "storage_options={...}) in this process (see docs/sql.md, 'Credentials')"
)
"""Where credentials come from instead of stored options or SQL text (for error messages)."""

REDACTED = "*** (redacted)"
"""What DESCRIBE shows instead of a credential's value."""


def _names_credential(value: Any) -> bool:
    """Whether a decoded JSON value holds an object key that suggests a credential."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, Mapping):
            if any(_CREDENTIAL_WORDS.search(str(k)) for k in item):
                return True
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


def is_credential_option(name: str, value: str | None = None) -> bool:
    """Whether ``fs.<name>`` (given with or without the prefix) holds or may hold a credential:
    its name suggests one (``fs.key``, ``fs.secret``, ``fs.session_token``, ...), its value is
    a URL with a user name (``https://user:pass@host``), or a JSON object with a
    credential-like key at any depth (``fs.client_kwargs '{"aws_secret_access_key": ...}'``).
    """
    if name.lower().startswith(STORAGE_PREFIX):
        name = name[len(STORAGE_PREFIX) :]
    if _CREDENTIAL_WORDS.search(name):
        return True
    if value is None:
        return False
    if _URL_USERINFO.search(value):
        return True
    try:
        decoded = json.loads(value)
    except (ValueError, TypeError, RecursionError):
        return False
    return _names_credential(decoded)


def redact_credentials(opts: Mapping[str, str]) -> dict[str, str]:
    """``opts`` with the value of every credential-like ``fs.*`` option replaced by
    :data:`REDACTED`, for display."""
    return {
        key: REDACTED
        if key.lower().startswith(STORAGE_PREFIX) and is_credential_option(key, value)
        else value
        for key, value in opts.items()
    }
