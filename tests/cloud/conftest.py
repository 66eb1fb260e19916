"""Fixtures: one emulator per backend for the whole session, a fresh bucket and cache per test."""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

# Before any cloud client is imported: never probe cloud metadata servers, and keep gcsfs's default class
# from probing the bucket type over gRPC (the product avoids it for emulator endpoints anyway).
os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
os.environ.setdefault("NO_GCE_CHECK", "true")
os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")

from tests.cloud import emulators
from torch_tb_profiler.ingest import cloud_cache, storage

BACKENDS = ["s3", "az", "gs"]


@dataclass
class Backend:
    """One emulated cloud backend with a fresh bucket (container) for the current test."""

    name: str  # s3 / az / gs
    scheme: str  # URL scheme used by the tests
    emulator: emulators.Emulator
    options: dict[str, Any]  # storage options that reach the emulator with valid credentials
    bad_options: dict[str, Any]  # the same endpoint with wrong credentials
    env: dict[str, str]  # environment that lets a plain URL reach the emulator
    bucket: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def url(self, path: str = "") -> str:
        return f"{self.scheme}://{self.bucket}/{path}".rstrip("/")

    def location(self, path: str = "logs") -> storage.Location:
        return storage.resolve(self.url(path), self.options)

    def upload(self, files: dict[str, bytes], prefix: str = "logs") -> None:
        """Write files (relative path -> bytes) under bucket/prefix."""
        loc = self.location(prefix)
        loc.fs.pipe({f"{loc.root}/{rel}": data for rel, data in files.items()})


def _start(starter: Callable[[], emulators.Emulator]) -> Iterator[emulators.Emulator]:
    try:
        emu = starter()
    except emulators.Unavailable as exc:
        pytest.skip(str(exc))
    try:
        yield emu
    finally:
        emu.stop()


def _start_moto_with_auth() -> emulators.Emulator:
    """moto with request signing checked: an IAM user with an allow-all policy owns the only valid key."""
    emulators._require("s3fs", "pip install 'torch-tb-profiler[s3]'")
    emulators._require("moto", "pip install 'moto[s3]' flask flask-cors")
    import boto3

    port = emulators.free_port()
    argv = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    # The first three requests (below) are let through unauthenticated; all later ones are checked.
    emu = emulators.launch("moto", argv, port, "moto-api/", env={"INITIAL_NO_AUTH_ACTION_COUNT": "3"})
    iam = boto3.client(
        "iam",
        endpoint_url=emu.endpoint,
        aws_access_key_id="bootstrap",
        aws_secret_access_key="bootstrap",
        region_name="us-east-1",
    )
    iam.create_user(UserName="tester")
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
    iam.put_user_policy(UserName="tester", PolicyName="all", PolicyDocument=json.dumps(policy))
    key = iam.create_access_key(UserName="tester")["AccessKey"]
    emu.env = {
        "AWS_ACCESS_KEY_ID": key["AccessKeyId"],
        "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"],
        "AWS_ENDPOINT_URL_S3": emu.endpoint,
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    return emu


@pytest.fixture(scope="session")
def moto_server() -> Iterator[emulators.Emulator]:
    yield from _start(_start_moto_with_auth)


@pytest.fixture(scope="session")
def azurite_server() -> Iterator[emulators.Emulator]:
    yield from _start(emulators.start_azurite)


@pytest.fixture(scope="session")
def gcs_server() -> Iterator[emulators.Emulator]:
    yield from _start(emulators.start_gcs)


def make_backend(name: str, request: pytest.FixtureRequest) -> Backend:
    if name == "s3":
        emu = request.getfixturevalue("moto_server")
        key, secret = emu.env["AWS_ACCESS_KEY_ID"], emu.env["AWS_SECRET_ACCESS_KEY"]
        good = {"key": key, "secret": secret, "endpoint_url": emu.endpoint}
        bad = {"key": key, "secret": "not-the-secret", "endpoint_url": emu.endpoint}
        backend = Backend("s3", "s3", emu, good, bad, dict(emu.env))
    elif name == "az":
        emu = request.getfixturevalue("azurite_server")
        good = {"connection_string": emulators.azurite_connection_string(emu.port)}
        wrong_key = "d3Jvbmcta2V5LXdyb25nLWtleS13cm9uZy1rZXktd3Jvbmcta2V5LXdyb25nLWtleQ=="
        bad = {"connection_string": emulators.azurite_connection_string(emu.port, key=wrong_key)}
        backend = Backend("az", "az", emu, good, bad, dict(emu.env))
    elif name == "gs":
        emu = request.getfixturevalue("gcs_server")
        good = {"endpoint_url": emu.endpoint}
        backend = Backend("gs", "gs", emu, good, {}, dict(emu.env))
    else:
        raise ValueError(name)
    # Bucket names: 3-63 lowercase letters, digits and dashes on all three clouds.
    backend.bucket = f"tbp-{uuid.uuid4().hex[:12]}"
    storage.resolve(backend.url(), backend.options).fs.mkdir(backend.bucket)
    return backend


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Backend:
    return make_backend(request.param, request)


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch) -> str:
    """A private download cache per test, and fresh hit/download counters."""
    path = tmp_path / "cache"
    monkeypatch.setenv(cloud_cache.CACHE_DIR_ENV, str(path))
    monkeypatch.delenv(cloud_cache.CACHE_MAX_ENV, raising=False)
    monkeypatch.delenv("TORCH_PROFILER_STORAGE_OPTIONS", raising=False)
    cloud_cache.stats.__init__()
    return str(path)
