"""URL forms, storage options, missing extras and the download cache (no emulator needed)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import fsspec
import pytest

from torch_tb_profiler.ingest import cloud_cache, cloud_fs, storage
from torch_tb_profiler.ingest.cloud_errors import classify

REPO = Path(__file__).resolve().parents[2]


# --- URL forms -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "protocol", "root"),
    [
        ("s3://bucket1/some/prefix", "s3", "bucket1/some/prefix"),
        ("s3://bucket1/some/prefix/", "s3", "bucket1/some/prefix"),
        ("gs://bucket1/prefix", "gs", "bucket1/prefix"),
        ("gcs://bucket1/prefix", "gs", "bucket1/prefix"),
        ("az://container1/prefix", "az", "container1/prefix"),
        ("abfs://container1/prefix", "az", "container1/prefix"),
        ("abfs://container1@myaccount.dfs.core.windows.net/prefix", "az", "container1/prefix"),
        ("https://myaccount.blob.core.windows.net/container1/prefix", "az", "container1/prefix"),
    ],
)
def test_url_forms_resolve_to_the_right_backend(url: str, protocol: str, root: str, monkeypatch) -> None:
    if protocol == "az":  # an account key keeps adlfs from building a default Azure credential
        monkeypatch.setenv("AZURE_STORAGE_ACCOUNT_KEY", "a2V5")
        monkeypatch.setenv("AZURE_STORAGE_ACCOUNT_NAME", "envaccount")
        monkeypatch.delenv("AZURE_STORAGE_CONNECTION_STRING", raising=False)
    if protocol == "gs":
        monkeypatch.setenv("STORAGE_EMULATOR_HOST", "http://127.0.0.1:9")
    pytest.importorskip({"s3": "s3fs", "gs": "gcsfs", "az": "adlfs"}[protocol])
    loc = storage.resolve(url)  # no network request is made here
    assert loc.root == root
    assert not loc.is_local
    assert protocol in {cloud_fs.family(p) for p in storage._protocols(loc.fs)}
    assert loc.relpath(f"{root}/run/w.pt.trace.json") == "run/w.pt.trace.json"
    if protocol == "az":  # the account in the URL wins over AZURE_STORAGE_ACCOUNT_NAME
        account = "myaccount" if "myaccount" in url else "envaccount"
        assert loc.fs.account_name == account
        assert loc.namespace == f"https://{account}.blob.core.windows.net/"


def test_local_paths_stay_local(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "w.pt.trace.json").write_bytes(b"{}")
    for url in (str(tmp_path), f"file://{tmp_path}"):
        loc = storage.resolve(url)
        assert loc.is_local
        (info,) = storage.walk_files(loc)
        assert storage.local_copy(loc, info) == str(tmp_path / "r" / "w.pt.trace.json")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("https://example.com/logs", "http(s) URLs are accepted only for Azure Blob Storage"),
        ("https://myaccount.blob.core.windows.net/", "names no container"),
    ],
)
def test_unsupported_urls_are_clear_errors(url: str, message: str) -> None:
    with pytest.raises(storage.StorageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        storage.resolve(url)


def test_azure_without_any_account_is_a_clear_error(monkeypatch) -> None:
    pytest.importorskip("adlfs")
    for name in ("AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_ACCOUNT_NAME"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(
        storage.StorageError, match="no Azure account given; set AZURE_STORAGE_CONNECTION_STRING"
    ):
        storage.resolve("az://container1/logs")


# --- storage options -----------------------------------------------------------------------------------


def test_storage_options_flat_or_keyed_by_protocol() -> None:
    flat = {"anon": True}
    assert cloud_fs.select_options(flat, "s3") == flat
    keyed = {"s3": {"anon": True}, "gcs": {"token": "anon"}, "az": {"account_name": "a"}}
    assert cloud_fs.select_options(keyed, "s3") == {"anon": True}
    assert cloud_fs.select_options(keyed, "gs") == {"token": "anon"}  # same family, other spelling
    assert cloud_fs.select_options(keyed, "abfs") == {"account_name": "a"}
    assert cloud_fs.select_options({"s3": {"anon": True}}, "gs") == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [("{not json", "is not valid JSON"), ("[1, 2]", "must be a JSON object, got list")],
)
def test_bad_storage_options_are_clear_errors(monkeypatch, text: str, message: str) -> None:
    monkeypatch.setenv(cloud_fs.OPTIONS_ENV, text)
    with pytest.raises(storage.StorageError, match=f"TORCH_PROFILER_STORAGE_OPTIONS {message}"):
        storage.resolve("s3://bucket1/logs")
    with pytest.raises(storage.StorageError, match=message):
        storage.resolve("s3://bucket1/logs", text)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"S3_ENDPOINT": "http://minio:9000"}, "http://minio:9000"),
        ({"S3_ENDPOINT": "minio:9000"}, "https://minio:9000"),
        ({"S3_ENDPOINT": "minio:9000", "S3_USE_HTTPS": "0"}, "http://minio:9000"),
        ({"S3_ENDPOINT": "http://minio:9000", "AWS_ENDPOINT_URL_S3": "http://x:1"}, None),  # botocore's wins
        ({"S3_ENDPOINT": "http://minio:9000", "AWS_ENDPOINT_URL": "http://x:1"}, None),
        ({}, None),
    ],
)
def test_s3_endpoint_mapping(env: dict[str, str], expected: str | None) -> None:
    assert cloud_fs.backend_options("s3", {}, env).get("endpoint_url") == expected
    # An explicit option is never overridden.
    explicit = {"endpoint_url": "http://given:1"}
    assert cloud_fs.backend_options("s3", explicit, env)["endpoint_url"] == "http://given:1"


def test_gcs_emulator_implies_an_anonymous_token() -> None:
    bounded = {"timeout": 20.0}  # every remote call has a bound (issue 28: cloud_fs.remote_timeouts)
    assert cloud_fs.backend_options("gs", {}, {"STORAGE_EMULATOR_HOST": "http://h:1"}) == {
        "token": "anon",
        **bounded,
    }
    assert cloud_fs.backend_options("gs", {"token": "t.json"}, {"STORAGE_EMULATOR_HOST": "h:1"}) == {
        "token": "t.json",
        **bounded,
    }
    assert cloud_fs.backend_options("gs", {}, {}) == bounded  # real GCS: application-default credentials


def test_every_backend_gets_timeouts_unless_the_options_set_them() -> None:
    env = {cloud_fs.CONNECT_TIMEOUT_ENV: "2", cloud_fs.READ_TIMEOUT_ENV: "7", cloud_fs.RETRIES_ENV: "3"}
    s3 = cloud_fs.backend_options("s3", {}, env)["config_kwargs"]
    assert s3["connect_timeout"] == 2 and s3["read_timeout"] == 7 and s3["retries"]["max_attempts"] == 3
    mine = {"config_kwargs": {"read_timeout": 300}}
    assert cloud_fs.backend_options("s3", mine, env)["config_kwargs"]["read_timeout"] == 300
    az = cloud_fs.backend_options("az", {}, env)
    assert (az["connection_timeout"], az["read_timeout"]) == (2, 7)
    with pytest.raises(cloud_fs.StorageError, match="positive"):
        cloud_fs.backend_options("s3", {}, {cloud_fs.READ_TIMEOUT_ENV: "inf"})


# --- a missing extra -------------------------------------------------------------------------------------

_BLOCK_IMPORT = """
import sys
sys.modules[sys.argv[1]] = None  # as if the package were not installed: importing it fails
from torch_tb_profiler.ingest import storage
try:
    storage.resolve(sys.argv[2])
except storage.MissingExtraError as e:
    print("MissingExtraError:", e)
"""


@pytest.mark.parametrize(
    ("module", "url", "extra"),
    [("s3fs", "s3://b/p", "s3"), ("gcsfs", "gs://b/p", "gs"), ("adlfs", "az://c/p", "blob")],
)
def test_a_missing_extra_names_the_pip_extra(module: str, url: str, extra: str) -> None:
    """In a fresh interpreter where the backend package cannot be imported."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", _BLOCK_IMPORT, module, url],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == (
        f"MissingExtraError: {url.split(':')[0]}:// logdirs need the {module} package: "
        f"pip install 'torch-tb-profiler[{extra}]'"
    )


# --- error classification ------------------------------------------------------------------------------


def test_error_classification() -> None:
    assert classify(PermissionError("denied")) == "credentials"
    assert classify(FileNotFoundError("bucket")) == "missing"
    assert classify(ConnectionRefusedError(111, "refused")) == "network"
    assert classify(ValueError("odd")) == "other"
    try:
        try:
            raise ConnectionResetError("reset")
        except ConnectionResetError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        assert classify(outer) == "network"  # found along the cause chain


# --- the download cache (with fsspec's in-memory filesystem as the remote) ---------------------------


@pytest.fixture
def memory_logdir():
    fs = fsspec.filesystem("memory")
    root = f"/cache-test-{time.time_ns()}"
    yield fs, root
    fs.rm(root, recursive=True)


def put(fs, path: str, data: bytes) -> None:
    with fs.open(path, "wb") as f:
        f.write(data)


def test_cache_size_limit_evicts_least_recently_used(memory_logdir, monkeypatch, cache_dir: str) -> None:
    fs, root = memory_logdir
    for name in "abcd":
        put(fs, f"{root}/run/{name}.pt.trace.json", name.encode() * 1000)
    monkeypatch.setenv(cloud_cache.CACHE_MAX_ENV, "2500")
    monkeypatch.setattr(cloud_cache, "EVICTION_GRACE_S", 0.0)
    loc = storage.resolve(f"memory://{root}")
    assert not loc.is_local
    infos = {Path(i.path).name[0]: i for i in storage.walk_files(loc)}
    paths = {}
    for name in "abc":  # a, b, c: 3000 bytes > 2500: a (least recently used) goes
        paths[name] = storage.local_copy(loc, infos[name])
        time.sleep(0.01)
    assert [os.path.exists(paths[n]) for n in "abc"] == [False, True, True]
    assert cloud_cache.stats.evicted == 1
    storage.local_copy(loc, infos["b"])  # b is now more recent than c
    time.sleep(0.01)
    paths["d"] = storage.local_copy(loc, infos["d"])
    assert [os.path.exists(paths[n]) for n in "bcd"] == [True, False, True]
    total = sum(p.stat().st_size for p in Path(cache_dir).rglob("*") if p.is_file())
    assert total == 2000
    assert cloud_cache.stats.downloads == 4 and cloud_cache.stats.hits == 1


def test_files_used_recently_are_not_evicted(memory_logdir, monkeypatch, cache_dir: str) -> None:
    """Within the grace period the limit is exceeded rather than deleting a file a parser may still need."""
    fs, root = memory_logdir
    for name in "abc":
        put(fs, f"{root}/run/{name}.pt.trace.json", name.encode() * 1000)
    monkeypatch.setenv(cloud_cache.CACHE_MAX_ENV, "1500")
    loc = storage.resolve(f"memory://{root}")
    infos = {Path(i.path).name[0]: i for i in storage.walk_files(loc)}
    paths = {n: storage.local_copy(loc, infos[n]) for n in "ab"}
    old = time.time() - cloud_cache.EVICTION_GRACE_S - 10
    os.utime(paths["a"], (old, old))  # a was last used before the grace period
    paths["c"] = storage.local_copy(loc, infos["c"])
    assert [os.path.exists(paths[n]) for n in "abc"] == [False, True, True]  # 2000 bytes > 1500: b kept


def test_a_file_larger_than_the_limit_is_still_served(memory_logdir, monkeypatch) -> None:
    fs, root = memory_logdir
    put(fs, f"{root}/big.pt.trace.json", b"x" * 5000)
    monkeypatch.setenv(cloud_cache.CACHE_MAX_ENV, "1K")
    loc = storage.resolve(f"memory://{root}")
    (info,) = storage.walk_files(loc)
    assert Path(storage.local_copy(loc, info)).read_bytes() == b"x" * 5000


@pytest.mark.parametrize(
    ("text", "value"),
    [("", cloud_cache.DEFAULT_MAX_BYTES), ("12345", 12345), ("500M", 500 * 1024**2), ("2GiB", 2 * 1024**3)],
)
def test_cache_limit_parsing(monkeypatch, text: str, value: int) -> None:
    monkeypatch.setenv(cloud_cache.CACHE_MAX_ENV, text)
    assert cloud_cache.max_bytes() == value


def test_bad_cache_limit_is_a_clear_error(monkeypatch) -> None:
    monkeypatch.setenv(cloud_cache.CACHE_MAX_ENV, "lots")
    with pytest.raises(storage.StorageError, match="TORCH_PROFILER_CACHE_MAX_BYTES='lots' is not a size"):
        cloud_cache.max_bytes()


def test_default_cache_dir(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv(cloud_cache.CACHE_DIR_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    if sys.platform.startswith("linux"):
        assert cloud_cache.cache_dir() == tmp_path / "torch-tb-profiler" / "remote"


def test_cache_key_separates_services_and_versions(tmp_path: Path) -> None:
    args = ("s3://b/r/w.pt.trace.json.gz", 10, "etag1", 1.0)
    a = cloud_cache.entry_path(tmp_path, "http://127.0.0.1:1", *args)
    assert a.name.endswith("-w.pt.trace.json.gz")
    assert a == cloud_cache.entry_path(tmp_path, "http://127.0.0.1:1", *args)
    assert a != cloud_cache.entry_path(tmp_path, "aws", *args)  # same bucket name, other service
    newer = cloud_cache.entry_path(tmp_path, "http://127.0.0.1:1", args[0], 10, "etag2", 1.0)
    assert newer.parent == a.parent and newer != a  # same object, another version
