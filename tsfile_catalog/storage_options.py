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
from urllib.parse import parse_qsl, urlsplit

from tsfile_catalog.exceptions import OptionError

__all__ = [
    "CREDENTIALS_AT_RUN_TIME",
    "REDACTED",
    "SPARK_REDACTION_PATTERN",
    "STORAGE_PREFIX",
    "check_url",
    "is_credential_option",
    "redact_credentials",
    "redact_parameters",
    "redact_text",
    "spark_redaction_regex",
    "storage_options_from",
    "url_credentials",
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

# Short names that are credentials only as a whole word of a name (``fs.pw``, ``fs.sas``, a
# SAS URL's ``sig``): as substrings they would match unrelated names.
_CREDENTIAL_NAME_WORDS = frozenset({"pw", "pass", "sas", "sig", "creds"})
# A name ending in "signature" holds one (``X-Amz-Signature``); ``signature_version`` does not.
_SIGNATURE = "signature"

# A URL carrying a user name (and password) before its host: ``https://user:pass@host``.
_URL_USERINFO = re.compile(r"(?P<scheme>://)[^/@\s'\"]+@")

# One ``name=value`` pair of a query string, in a URL or in text that quotes one.
_QUERY_PAIR = re.compile(r"(?P<lead>[?&])(?P<name>[^=&#\s'\"]+)=(?P<value>[^&#\s'\"]*)")

CREDENTIALS_AT_RUN_TIME = (
    "in the environment (e.g. AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, or fsspec's "
    "FSSPEC_<PROTOCOL>_<NAME> variables and config files), or with Catalog(spark, warehouse, "
    "storage_options={...}) in this process (see docs/sql.md, 'Credentials')"
)
"""Where credentials come from instead of stored options or SQL text (for error messages)."""

REDACTED = "*** (redacted)"
"""What DESCRIBE shows instead of a credential's value."""


def _credential_name(name: str) -> bool:
    """Whether a setting or query parameter named ``name`` suggests a credential."""
    if _CREDENTIAL_WORDS.search(name):
        return True
    words = re.split(r"[^a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower())
    return not _CREDENTIAL_NAME_WORDS.isdisjoint(words) or words[-1] == _SIGNATURE


def url_credentials(url: str) -> str | None:
    """What in ``url`` is a credential, in words, or None when it holds none: a user name
    and password (``s3://user:pw@bucket``, ``https://user@host``) or a signed query string
    (``?sig=``, ``X-Amz-Signature=``, ``X-Amz-Security-Token=``)."""
    if _URL_USERINFO.search(url):
        return "a user name and password before the host"
    if "://" not in url:
        return None  # a local path: its "?" is a glob character, never a query
    try:
        query = urlsplit(url).query
    except ValueError:  # an invalid IPv6 host, say: no query this rule can read
        query = url.partition("?")[2]
    # Only name=value pairs: a "?" glob in an object-store pattern has no "=" after it.
    signed = [
        name
        for name, _ in parse_qsl(query, keep_blank_values=True)
        if _credential_name(name) and f"{name}=" in query
    ]
    if signed:
        return f"a signed query string ({', '.join(signed)})"
    return None


def redact_text(text: str) -> str:
    """``text`` (a URL, or a message quoting URLs) with every user name and password in a URL
    and every credential-like query value replaced by ``***``: what may be shown or logged."""
    text = _URL_USERINFO.sub(r"\g<scheme>***@", text)
    return _QUERY_PAIR.sub(
        lambda m: f"{m['lead']}{m['name']}=***" if _credential_name(m["name"]) else m[0], text
    )


def check_url(url: str) -> None:
    """Refuse a URL that carries credentials, before anything connects with it or stores,
    logs or shows it (a table location is kept in the catalog, the history and DESCRIBE).
    The one rule for every entry point: :class:`~tsfile_catalog.io.FileIO` applies it to each
    URL it is given, and the SQL parser to URLs in SQL text.

    Raises:
        OptionError: ``url`` holds a credential (see :func:`url_credentials`); the message
            shows it redacted.
    """
    found = url_credentials(url)
    if found is not None:
        raise OptionError(
            f"the URL {redact_text(url)!r} carries credentials ({found}), and a URL is stored, "
            "logged and shown: remove them from the URL and supply them at run time: "
            f"{CREDENTIALS_AT_RUN_TIME}"
        )


def _names_credential(value: Any) -> bool:
    """Whether a decoded JSON value holds an object key that suggests a credential."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, Mapping):
            if any(_credential_name(str(k)) for k in item):
                return True
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


def is_credential_option(name: str, value: str | None = None) -> bool:
    """Whether ``fs.<name>`` (given with or without the prefix) holds or may hold a credential:
    its name suggests one (``fs.key``, ``fs.secret``, ``fs.session_token``, ``fs.pw``,
    ``fs.sas``, ...), its value is a URL with a user name (``https://user:pass@host``) or a
    signed query string (``?sig=...``), or a JSON object with a
    credential-like key at any depth (``fs.client_kwargs '{"aws_secret_access_key": ...}'``).
    """
    if name.lower().startswith(STORAGE_PREFIX):
        name = name[len(STORAGE_PREFIX) :]
    if _credential_name(name):
        return True
    if value is None:
        return False
    if url_credentials(value) is not None:
        return True
    try:
        decoded = json.loads(value)
    except (ValueError, TypeError, RecursionError):
        return False
    return _names_credential(decoded)


# Spark's default ``spark.redaction.regex``: the setting names Spark itself hides.
_SPARK_SECRET_NAMES = re.compile(r"secret|password|token|access[.]?key", re.IGNORECASE)


def redact_credentials(opts: Mapping[str, str]) -> dict[str, str]:
    """``opts`` (a table's stored options or properties) as they may be shown: the value of a
    credential-like ``fs.*`` option, and of a setting whose name Spark's own
    ``spark.redaction.regex`` hides (``password``, ``token``, ...), becomes :data:`REDACTED`;
    a user name and password or a signed query in any other value is masked
    (``https://***@host``, :func:`redact_text`). What is stored is unchanged."""
    out = {}
    for key, value in opts.items():
        if _SPARK_SECRET_NAMES.search(key) or (
            key.lower().startswith(STORAGE_PREFIX) and is_credential_option(key, value)
        ):
            out[key] = REDACTED
        else:
            out[key] = redact_text(value)
    return out


def redact_parameters(parameters: Mapping[str, str]) -> dict[str, str]:
    """A commit's parameters as DESCRIBE HISTORY shows them: SET TBLPROPERTIES records the
    properties it set as a JSON object, shown through :func:`redact_credentials`; any other
    value through :func:`redact_text`."""
    out = {}
    for key, value in parameters.items():
        try:
            decoded = json.loads(value)
        except (ValueError, RecursionError):
            decoded = None
        if isinstance(decoded, dict):
            given = {str(k): str(v) for k, v in decoded.items()}
            shown = redact_credentials(given)
            out[key] = value if shown == given else json.dumps(shown, sort_keys=True)
        else:
            out[key] = redact_text(value)
    return out


_NAME_WORDS = r"key|secret|token|pass|pw|cred|auth|cookie|connection.?string|sas|sig"

SPARK_REDACTION_PATTERN = (
    # A setting named fs.<...credential word...>: the catalog's own spark.sql.catalog.<name>.fs.*
    # settings, a source's fs.* options, Hadoop's spark.hadoop.fs.s3a.access.key.
    rf"(?i:(?:^|\.)fs\.\S*?(?:{_NAME_WORDS})"
    # A JSON value with a credential-like key (fs.client_kwargs '{"aws_access_key_id": ...}').
    rf"""|"[^"]*(?:{_NAME_WORDS})[^"]*"\s*:"""
    # A URL with a user name and password before its host.
    r"""|://[^/@\s'"]+:[^/@\s'"]*@)"""
)
"""What Spark should also redact wherever it shows settings (``SET``, the UI, plans), as a
Java regex Spark matches against each setting's name and value: it hides the credentials the
catalog's own settings may carry, which Spark's default ``spark.redaction.regex``
(``secret|password|token|access[.]?key``) misses (``fs.key``, an ``aws_access_key_id`` in
JSON). Broad on purpose, as :func:`is_credential_option` is: over-redacting a display costs
less than a shown key."""


def spark_redaction_regex(current: str | None) -> str:
    """``current`` (a Spark redaction regex) extended with :data:`SPARK_REDACTION_PATTERN`,
    unchanged when it already holds it."""
    if not current:
        return SPARK_REDACTION_PATTERN
    if SPARK_REDACTION_PATTERN in current:
        return current
    return f"{current}|{SPARK_REDACTION_PATTERN}"
