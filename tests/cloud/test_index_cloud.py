"""The persisted index on S3 (moto): `torch-tb-profiler index` on a LocalCluster reads traces from a bucket
and writes the index to a prefix of it; the plugin's loader then serves them from there, equal to a local
parse; a corrupt index object is ignored with a warning and rewritten."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from tests.cloud.conftest import Backend, make_backend
from tests.fixtures.paths import SAMPLES
from tests.test_index import assert_profiles_equal
from torch_tb_profiler.cli.main import main as cli_main
from torch_tb_profiler.ingest.loading import RunStore
from torch_tb_profiler.ingest.parse import load_profile
from torch_tb_profiler.ingest.persist import SUFFIX, open_store

pytestmark = pytest.mark.cloud
pytest.importorskip("distributed")


@pytest.fixture
def s3(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Backend:
    backend = make_backend("s3", request)
    for key, value in backend.env.items():  # the LocalCluster's worker processes inherit it
        monkeypatch.setenv(key, value)
    return backend


def _store(backend: Backend) -> RunStore:
    store = RunStore(
        backend.url("logs"), processes=0, settle_seconds=0, index=open_store(backend.url("index"))
    )
    store.scan_once()
    assert store.wait_idle(60)
    return store


def _flags(store: RunStore) -> list[bool]:
    return [f["from_index"] for r in store.runs() for f in r["files"]]


def test_index_built_on_dask_from_s3_to_s3_serves_the_plugin(s3: Backend) -> None:
    sample = SAMPLES / "ddp_gloo_2ranks"
    s3.upload({f"ddp/{p.name}": p.read_bytes() for p in sample.iterdir()})
    out = io.StringIO()
    with contextlib.redirect_stderr(out):
        status = cli_main(["index", s3.url("logs"), "--index-dir", s3.url("index"), "--local-workers", "1"])
    assert status == 0, out.getvalue()
    assert "indexed 2, already current 0, failed 0" in out.getvalue()
    fs = s3.location("index").fs
    objects = [p for p in fs.find(f"{s3.bucket}/index") if p.endswith(SUFFIX)]
    assert len(objects) == 2
    assert not [p for p in fs.find(f"{s3.bucket}/index") if not p.endswith(SUFFIX)]  # nothing half-written

    store = _store(s3)
    try:
        assert _flags(store) == [True, True]
        for profile in store.profiles_of_run("ddp"):
            local = load_profile(
                str(sample / Path(profile.source).name), profile.run, profile.worker, profile.span
            )
            local.source = profile.source
            assert_profiles_equal(profile, local)
    finally:
        store.close()

    fs.pipe_file(objects[0], b"TTBPIDX\x01garbage")  # corrupt one index object
    store = _store(s3)
    try:
        assert sorted(_flags(store)) == [False, True]
        warnings = [w["message"] for r in store.runs() for w in r["warnings"]]
        assert any("could not be read" in w for w in warnings), warnings
    finally:
        store.close()
    healed = _store(s3)
    try:
        assert _flags(healed) == [True, True]
    finally:
        healed.close()
