"""storage.walk_files / local_copy against real emulators: moto (S3), Azurite (Azure Blob), GCS emulator."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cloud.conftest import Backend, make_backend
from tests.cloud.emulators import free_port
from tests.cloud.tree import logdir_tree, trace_bytes
from torch_tb_profiler.ingest import cloud_cache, storage

pytestmark = pytest.mark.cloud
REPO = Path(__file__).resolve().parents[2]


def listing(loc: storage.Location) -> dict[str, int]:
    return {loc.relpath(f.path): f.size for f in storage.walk_files(loc)}


def by_rel(loc: storage.Location) -> dict[str, storage.FileInfo]:
    return {loc.relpath(f.path): f for f in storage.walk_files(loc)}


def test_walk_lists_exactly_the_uploaded_files(backend: Backend) -> None:
    tree = logdir_tree()
    backend.upload(tree)
    backend.upload({"elsewhere.pt.trace.json": b"{}"}, prefix="logs2")  # a sibling sharing the key prefix
    loc = backend.location("logs")
    assert not loc.is_local
    assert listing(loc) == {rel: len(data) for rel, data in tree.items()}
    files = storage.walk_files(loc)
    assert all(f.mtime > 1.7e9 and f.etag for f in files)
    # The bucket root as logdir sees both prefixes.
    root = storage.resolve(backend.url(), backend.options)
    assert set(listing(root)) == {f"logs/{rel}" for rel in tree} | {"logs2/elsewhere.pt.trace.json"}


def test_local_copy_returns_the_stored_bytes_once(backend: Backend) -> None:
    tree = logdir_tree()
    backend.upload(tree)
    loc = backend.location()
    files = by_rel(loc)
    paths = {rel: storage.local_copy(loc, info) for rel, info in files.items()}
    assert cloud_cache.stats.downloads == len(tree)
    for rel, path in paths.items():
        assert Path(path).read_bytes() == tree[rel]
        assert path.endswith(rel.rsplit("/", 1)[-1])  # the name (and .gz) is kept
    gz_path = paths["run_a/worker1.1700000000001.pt.trace.json.gz"]
    assert Path(gz_path).read_bytes()[:2] == b"\x1f\x8b"  # as stored, not gunzipped
    assert json.loads(gzip.decompress(Path(gz_path).read_bytes()))["traceName"] == "worker1.1"

    # A rescan (fresh listing) and a second local_copy are served by the cache.
    before = {rel: os.stat(p) for rel, p in paths.items()}
    again = {rel: storage.local_copy(loc, info) for rel, info in by_rel(loc).items()}
    assert again == paths
    assert cloud_cache.stats.downloads == len(tree)
    assert cloud_cache.stats.hits == len(tree)
    for rel, p in again.items():
        st = os.stat(p)
        assert (st.st_ino, st.st_mtime_ns) == (before[rel].st_ino, before[rel].st_mtime_ns)


def test_new_and_changed_files_are_seen_by_the_next_listing(backend: Backend) -> None:
    tree = logdir_tree()
    backend.upload(tree)
    loc = backend.location()
    first = by_rel(loc)
    changed = "run_a/worker0.1700000000001.pt.trace.json"
    old_path = storage.local_copy(loc, first[changed])
    time.sleep(1.1)  # S3 and Azure keep mtimes in whole seconds
    new_bytes = trace_bytes("worker0", 1, steps=3)
    added = "run_c/worker0.pt.trace.json"
    backend.upload({changed: new_bytes, added: trace_bytes("worker0", 0)})

    second = by_rel(loc)  # same Location: its listing cache must not hide the changes
    assert set(second) == set(first) | {added}
    assert second[changed].size == len(new_bytes) != first[changed].size
    assert second[changed].etag != first[changed].etag
    assert second[changed].mtime > first[changed].mtime
    unchanged = "run_a/worker1.1700000000001.pt.trace.json.gz"
    assert second[unchanged] == first[unchanged]

    new_path = storage.local_copy(loc, second[changed])
    assert Path(new_path).read_bytes() == new_bytes
    assert new_path != old_path and not os.path.exists(old_path)  # the old version is dropped
    assert cloud_cache.stats.downloads == 2


def test_same_size_rewrite_is_detected(backend: Backend) -> None:
    backend.upload({"r/w.pt.trace.json": b'{"traceEvents": [1]}'})
    loc = backend.location()
    first = by_rel(loc)["r/w.pt.trace.json"]
    storage.local_copy(loc, first)
    time.sleep(1.1)
    backend.upload({"r/w.pt.trace.json": b'{"traceEvents": [2]}'})
    second = by_rel(loc)["r/w.pt.trace.json"]
    assert second.size == first.size and second.etag != first.etag
    assert Path(storage.local_copy(loc, second)).read_bytes() == b'{"traceEvents": [2]}'


def test_missing_bucket_is_a_clear_storage_error(backend: Backend) -> None:
    loc = storage.resolve(f"{backend.scheme}://no-such-bucket-{backend.bucket}/logs", backend.options)
    with pytest.raises(storage.StorageError) as err:
        storage.walk_files(loc)
    what = "container" if backend.name == "az" else "bucket"
    assert f"no-such-bucket-{backend.bucket}/logs" in str(err.value)
    assert f"the {what} or path does not exist" in str(err.value)


def test_missing_prefix_is_an_empty_logdir(backend: Backend) -> None:
    assert storage.walk_files(backend.location("not/there")) == []


def _service_account_rejected_by(token_uri: str, path: Path) -> str:
    """A well-formed service-account key whose token endpoint refuses it (as Google does a revoked key)."""
    pytest.importorskip("cryptography")  # comes with google-auth's and adlfs's dependencies
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    doc = {
        "type": "service_account",
        "project_id": "test",
        "private_key_id": "1",
        "private_key": pem,
        "client_email": "revoked@test.iam.gserviceaccount.com",
        "client_id": "1",
        "token_uri": token_uri,
    }
    path.write_text(json.dumps(doc))
    return str(path)


def test_bad_credentials_are_a_clear_storage_error(backend: Backend, tmp_path: Path) -> None:
    backend.upload(logdir_tree())
    options = backend.bad_options
    if backend.name == "gs":
        # The GCS emulators accept any token, so the credential is refused where Google refuses it: at the
        # token endpoint (here the emulator's, which answers 404). gcsfs retries this for about 35 s.
        token = _service_account_rejected_by(f"{backend.emulator.endpoint}/token", tmp_path / "sa.json")
        options = {**backend.options, "token": token}
    loc = storage.resolve(backend.url("logs"), options)
    with pytest.raises(storage.StorageError) as err:
        storage.walk_files(loc)
    message = str(err.value)
    assert message.startswith(f"cannot list {backend.url('logs')}: access denied or invalid credentials")
    hint = {"s3": "AWS_ACCESS_KEY_ID", "az": "AZURE_STORAGE_CONNECTION_STRING", "gs": "token"}[backend.name]
    assert hint in message


def test_download_errors_are_storage_errors(backend: Backend) -> None:
    backend.upload({"r/w.pt.trace.json": b"{}"})
    loc = backend.location()
    info = storage.walk_files(loc)[0]
    backend.location().fs.rm(info.path)
    with pytest.raises(
        storage.StorageError, match=r"cannot download .*r/w\.pt\.trace\.json: the .* does not exist"
    ):
        storage.local_copy(loc, info)
    assert not any(Path(os.environ[cloud_cache.CACHE_DIR_ENV]).rglob("*w.pt.trace.json"))


def test_unreachable_endpoint_is_a_network_error() -> None:
    port = free_port()  # nothing listens there
    options = {"key": "k", "secret": "s", "endpoint_url": f"http://127.0.0.1:{port}"}
    options["config_kwargs"] = {"retries": {"max_attempts": 1}}
    loc = storage.resolve("s3://bucket1/logs", options)
    with pytest.raises(storage.StorageError, match=r"cannot list s3://bucket1/logs: network error"):
        storage.walk_files(loc)


# --- plain URLs configured by the environment only (as `tensorboard --logdir URL` gives them) ---------------


def _plain_url_listing(backend: Backend, url: str, env: dict[str, str], monkeypatch) -> dict[str, int]:
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "S3_ENDPOINT", "AZURE_STORAGE_CONNECTION_STRING"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("STORAGE_EMULATOR_HOST", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    loc = storage.resolve(url)
    return {loc.relpath(f.path): f.size for f in storage.walk_files(loc)}


def test_plain_url_with_environment_credentials(backend: Backend, monkeypatch) -> None:
    tree = logdir_tree()
    backend.upload(tree)
    expected = {rel: len(data) for rel, data in tree.items()}
    assert _plain_url_listing(backend, backend.url("logs"), backend.env, monkeypatch) == expected


@pytest.mark.parametrize("value", ["full", "host:port"])
def test_s3_endpoint_variable_of_the_original_plugin(request, monkeypatch, value: str) -> None:
    backend = make_backend("s3", request)
    backend.upload({"r/w.pt.trace.json": b"{}"})
    env = {k: v for k, v in backend.env.items() if not k.startswith("AWS_ENDPOINT_URL")}
    endpoint = backend.emulator.endpoint
    if value == "host:port":
        env["S3_USE_HTTPS"] = "0"
        endpoint = endpoint.removeprefix("http://")
    env["S3_ENDPOINT"] = endpoint
    assert _plain_url_listing(backend, backend.url("logs"), env, monkeypatch) == {"r/w.pt.trace.json": 2}


@pytest.mark.parametrize("form", ["abfs", "abfs-account", "https"])
def test_azure_url_forms(request, monkeypatch, form: str) -> None:
    backend = make_backend("az", request)
    backend.upload({"r/w.pt.trace.json": b"{}"})
    account = "devstoreaccount1"
    url = {
        "abfs": f"abfs://{backend.bucket}/logs",
        "abfs-account": f"abfs://{backend.bucket}@{account}.dfs.core.windows.net/logs",
        "https": f"https://{account}.blob.core.windows.net/{backend.bucket}/logs",
    }[form]
    # The connection string (Azurite's endpoint) wins over the account name taken from the URL.
    assert _plain_url_listing(backend, url, backend.env, monkeypatch) == {"r/w.pt.trace.json": 2}


def test_storage_options_from_the_environment(request, monkeypatch) -> None:
    s3 = make_backend("s3", request)
    s3.upload({"r/w.pt.trace.json": b"{}"})
    keyed = {"s3": s3.options, "gs": {"endpoint_url": "http://127.0.0.1:9"}}
    monkeypatch.setenv("TORCH_PROFILER_STORAGE_OPTIONS", json.dumps(keyed))
    loc = storage.resolve(s3.url("logs"))
    assert listing(loc) == {"r/w.pt.trace.json": 2}
    # The same JSON passed as a string (the TensorBoard flag) and an explicit dict win over the variable.
    monkeypatch.setenv("TORCH_PROFILER_STORAGE_OPTIONS", json.dumps(s3.bad_options))
    assert listing(storage.resolve(s3.url("logs"), json.dumps(keyed))) == {"r/w.pt.trace.json": 2}
    with pytest.raises(storage.StorageError, match="invalid credentials"):
        storage.walk_files(storage.resolve(s3.url("logs")))


def test_cache_is_reused_by_a_new_process(request, cache_dir: str) -> None:
    """A restart finds the files downloaded before (the cache key is stable across processes)."""
    backend = make_backend("s3", request)
    tree = logdir_tree()
    backend.upload(tree)
    code = (
        "import json, sys; from torch_tb_profiler.ingest import storage, cloud_cache;"
        "loc = storage.resolve(sys.argv[1], json.loads(sys.argv[2]));"
        "paths = sorted(storage.local_copy(loc, f) for f in storage.walk_files(loc));"
        "print(json.dumps([cloud_cache.stats.downloads, cloud_cache.stats.hits, paths]))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    argv = [sys.executable, "-c", code, backend.url("logs"), json.dumps(backend.options)]
    runs = [json.loads(subprocess.run(argv, env=env, capture_output=True, check=True, text=True).stdout)]
    runs.append(json.loads(subprocess.run(argv, env=env, capture_output=True, check=True, text=True).stdout))
    assert runs[0][:2] == [len(tree), 0]
    assert runs[1][:2] == [0, len(tree)]
    assert runs[0][2] == runs[1][2]
    assert all(p.startswith(cache_dir) for p in runs[0][2])


def test_file_info_matches_the_listing(backend: Backend) -> None:
    tree = logdir_tree()
    backend.upload(tree)
    loc = backend.location()
    for info in storage.walk_files(loc):
        assert storage.file_info(loc, info.path) == info
    with pytest.raises(storage.StorageError, match="does not exist"):
        storage.file_info(loc, f"{loc.root}/run_a/missing.pt.trace.json")
