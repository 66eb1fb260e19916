"""Cloud logdir URLs -> fsspec filesystems (S3 via s3fs, Azure Blob via adlfs, GCS via gcsfs).

What this module adds on top of `fsspec.core.url_to_fs`:
- `https://ACCOUNT.blob.core.windows.net/CONTAINER/PATH` (the original plugin's Azure form) is rewritten to
  `abfs://CONTAINER/PATH` with `account_name=ACCOUNT` (fsspec would route it to its HTTP filesystem).
- `S3_ENDPOINT` (the original plugin's and TensorBoard's variable, ignored by botocore) becomes `endpoint_url`.
- `STORAGE_EMULATOR_HOST` (or an `endpoint_url` option) for GCS uses the plain `GCSFileSystem` with an
  anonymous token: gcsfs's default class probes the bucket type over gRPC, which emulators do not speak.
- storage options as JSON from `TORCH_PROFILER_STORAGE_OPTIONS`.
- a missing backend names the pip extra to install.
"""

from __future__ import annotations

import importlib
import json
import os
import re
from typing import Any
from urllib.parse import urlsplit

import fsspec

from .cloud_errors import MissingExtraError, StorageError, family, translate

OPTIONS_ENV = "TORCH_PROFILER_STORAGE_OPTIONS"

# protocol family -> (module, pip extra)
_BACKENDS = {"s3": ("s3fs", "s3"), "az": ("adlfs", "blob"), "gs": ("gcsfs", "gs")}

_AZURE_HTTPS = re.compile(r"^(?P<account>[a-z0-9]+)\.(?:blob|dfs)\.core\.windows\.net$", re.IGNORECASE)


def split_scheme(url: str) -> tuple[str, str]:
    """('s3', 'bucket/key') for 's3://bucket/key'; ('', url) for a local path (Windows drives included)."""
    match = re.match(r"^([A-Za-z][A-Za-z0-9+.-]+)://(.*)$", url)
    if not match:
        return "", url
    return match.group(1).lower(), match.group(2)


def rewrite_url(url: str) -> tuple[str, dict[str, Any]]:
    """Rewrite URL forms fsspec does not route to the right backend; return (url, implied options)."""
    scheme, _rest = split_scheme(url)
    if scheme not in ("http", "https"):
        return url, {}
    parts = urlsplit(url)
    match = _AZURE_HTTPS.match(parts.hostname or "")
    if not match:
        raise StorageError(
            f"unsupported logdir {url!r}: http(s) URLs are accepted only for Azure Blob Storage "
            "(https://ACCOUNT.blob.core.windows.net/CONTAINER/PATH); use s3://, gs://, az:// or abfs:// "
            "for the other clouds"
        )
    path = parts.path.strip("/")
    if not path:
        raise StorageError(f"logdir {url!r} names no container (expected .../CONTAINER/PATH)")
    return f"abfs://{path}", {"account_name": match.group("account")}


def options_from_env(protocol: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Storage options from TORCH_PROFILER_STORAGE_OPTIONS (JSON object).

    Either one object applied to whatever backend the logdir uses, or an object keyed by protocol
    (`{"s3": {...}, "gs": {...}}`) so that one variable can serve several logdirs.
    """
    env = os.environ if env is None else env
    text = env.get(OPTIONS_ENV, "").strip()
    if not text:
        return {}
    return parse_options(text, protocol, source=OPTIONS_ENV)


def parse_options(text: str, protocol: str, source: str = "storage options") -> dict[str, Any]:
    """Parse a JSON storage-options string (see options_from_env) for a protocol."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StorageError(f"{source} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise StorageError(f"{source} must be a JSON object, got {type(value).__name__}")
    return select_options(value, protocol)


def select_options(options: dict[str, Any], protocol: str) -> dict[str, Any]:
    """Pick the per-protocol section of a keyed options object, or return a flat one unchanged."""
    known = {"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "file", "memory"}
    if options and all(k in known and isinstance(v, dict) for k, v in options.items()):
        fam = family(protocol)
        for key in (protocol, fam):
            if key in options:
                return dict(options[key])
        # Any spelling of the same family ("gcs" for a gs:// logdir).
        for key, value in options.items():
            if family(key) == fam:
                return dict(value)
        return {}
    return dict(options)


def _s3_endpoint_from_env(env: dict[str, str]) -> str | None:
    """The original plugin's S3_ENDPOINT, unless botocore's own AWS_ENDPOINT_URL(_S3) is set."""
    if env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL"):
        return None  # botocore reads these itself
    endpoint = env.get("S3_ENDPOINT", "").strip()
    if not endpoint:
        return None
    if "://" not in endpoint:  # TensorFlow's S3 used host:port plus S3_USE_HTTPS
        https = env.get("S3_USE_HTTPS", "1").strip().lower() not in ("0", "false", "no")
        endpoint = ("https://" if https else "http://") + endpoint
    return endpoint


CONNECT_TIMEOUT_ENV, READ_TIMEOUT_ENV = (
    "TORCH_PROFILER_REMOTE_CONNECT_TIMEOUT",
    "TORCH_PROFILER_REMOTE_READ_TIMEOUT",
)
RETRIES_ENV = "TORCH_PROFILER_REMOTE_RETRIES"
DEFAULT_CONNECT_S, DEFAULT_READ_S, DEFAULT_RETRIES = 5.0, 15.0, 2


def remote_timeouts(env: dict[str, str] | None = None) -> tuple[float, float, int]:
    """(connect, read) seconds and attempts bounding every remote call (docs/cloud.md, "Timeouts")."""
    env = os.environ if env is None else env

    def number(name: str, default: float) -> float:
        text = env.get(name, "").strip()
        try:
            value = float(text) if text else default
        except ValueError:
            raise StorageError(f"{name}={text!r} is not a number") from None
        if not 0 < value < float("inf"):
            raise StorageError(f"{name}={text!r} must be a positive number")
        return value

    return (
        number(CONNECT_TIMEOUT_ENV, DEFAULT_CONNECT_S),
        number(READ_TIMEOUT_ENV, DEFAULT_READ_S),
        int(number(RETRIES_ENV, DEFAULT_RETRIES)),
    )


def _bounded(fam: str, out: dict[str, Any], env: dict[str, str]) -> None:
    """Connect and read timeouts and a bounded number of attempts on every call, unless the user's
    storage options set them: a stopped endpoint (which accepts connections but never answers) costs
    at most attempts x (connect + read) per call, never forever."""
    connect, read, attempts = remote_timeouts(env)
    if fam == "s3":
        config = dict(out.get("config_kwargs") or {})
        config.setdefault("connect_timeout", connect)
        config.setdefault("read_timeout", read)
        config.setdefault("retries", {"max_attempts": attempts, "mode": "standard"})
        out["config_kwargs"] = config
    elif fam == "gs":
        out.setdefault("timeout", connect + read)  # per request (aiohttp's total)
    elif fam == "az":
        out.setdefault("connection_timeout", connect)
        out.setdefault("read_timeout", read)


def backend_options(protocol: str, options: dict[str, Any], env: dict[str, str] | None = None) -> dict:
    """Complete user options with what the environment implies for this backend."""
    env = os.environ if env is None else env
    out = dict(options)
    fam = family(protocol)
    _bounded(fam, out, env)
    if fam == "s3":
        has_endpoint = "endpoint_url" in out or "endpoint_url" in out.get("client_kwargs", {})
        endpoint = None if has_endpoint else _s3_endpoint_from_env(env)
        if endpoint:
            out["endpoint_url"] = endpoint
    elif fam == "gs":
        emulator = out.get("endpoint_url") or env.get("STORAGE_EMULATOR_HOST", "")
        if emulator and emulator != "default":
            out.setdefault("token", "anon")  # emulators take any token; skip the credential search
    return out


def check_backend(protocol: str) -> None:
    """Raise MissingExtraError when the fsspec backend for protocol cannot be imported."""
    fam = family(protocol)
    if fam not in _BACKENDS:
        return
    module, extra = _BACKENDS[fam]
    try:
        importlib.import_module(module)  # url_to_fs imports it right after anyway
    except ImportError as exc:
        raise MissingExtraError(
            f"{protocol}:// logdirs need the {module} package: pip install 'torch-tb-profiler[{extra}]'"
            + ("" if exc.name == module else f" ({exc})")
        ) from exc


def make_filesystem(url: str, options: dict[str, Any]) -> tuple[fsspec.AbstractFileSystem, str]:
    """(filesystem, root path) for a cloud URL already rewritten by rewrite_url."""
    protocol, _rest = split_scheme(url)
    check_backend(protocol)
    kwargs = dict(options)
    # A fresh instance each time: fsspec's instance cache would keep credentials from an earlier env.
    kwargs.setdefault("skip_instance_cache", True)
    try:
        if family(protocol) == "gs" and (
            kwargs.get("endpoint_url") or os.environ.get("STORAGE_EMULATOR_HOST", "") not in ("", "default")
        ):
            from gcsfs.core import GCSFileSystem  # the class without the gRPC bucket-type probe

            cls = GCSFileSystem
            kwargs.update(cls._get_kwargs_from_urls(url))
            return cls(**kwargs), cls._strip_protocol(url)
        fs, root = fsspec.core.url_to_fs(url, **kwargs)
        if family(protocol) == "s3":  # s3fs's own retry loop (5 by default) around botocore's attempts
            fs.retries = min(int(getattr(fs, "retries", 5)), remote_timeouts()[2])
        return fs, root
    except ImportError as exc:
        raise MissingExtraError(f"{protocol}:// logdirs need a package that is not installed: {exc}") from exc
    except StorageError:
        raise
    except Exception as exc:  # constructor errors: bad option names, no Azure account given, ...
        if family(protocol) == "az" and "connection_string or account_name" in str(exc):
            raise StorageError(
                f"cannot open {url}: no Azure account given; set AZURE_STORAGE_CONNECTION_STRING, or "
                "AZURE_STORAGE_ACCOUNT_NAME (with AZURE_STORAGE_ACCOUNT_KEY, AZURE_STORAGE_SAS_TOKEN or a "
                "default Azure credential), or use abfs://CONTAINER@ACCOUNT.dfs.core.windows.net/PATH"
            ) from exc
        raise translate(exc, "open", url, protocol) from exc


def namespace(fs: fsspec.AbstractFileSystem) -> str:
    """Which service (endpoint or account) a filesystem talks to; part of the download-cache key."""
    fam = family(_first_protocol(fs))
    if fam == "s3":
        endpoint = getattr(fs, "endpoint_url", None) or (getattr(fs, "client_kwargs", None) or {}).get(
            "endpoint_url"
        )
        env = os.environ
        return str(endpoint or env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL") or "aws")
    if fam == "gs":
        return str(getattr(fs, "_location", "") or "gcs")
    if fam == "az":
        client = getattr(fs, "service_client", None)
        if client is not None and getattr(client, "url", None):
            return str(client.url).split("?")[0]  # never keep a SAS token in the key
        return str(getattr(fs, "account_name", "") or "azure")
    return ""


def _first_protocol(fs: fsspec.AbstractFileSystem) -> str:
    proto = fs.protocol
    return proto if isinstance(proto, str) else proto[0]
