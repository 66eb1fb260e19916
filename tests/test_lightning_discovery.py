"""Discovery on PyTorch Lightning's layout: lightning_logs/version_N holding one trace per stage."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.fixtures.paths import SAMPLES
from torch_tb_profiler.ingest.discovery import group_files, parse_name
from torch_tb_profiler.ingest.storage import resolve, walk_files
from torch_tb_profiler.model.lightning_names import lightning_worker


@pytest.mark.parametrize(
    ("worker", "expected"),
    [
        ("fit-perf-[Strategy]SingleDeviceStrategy.training_step", "perf.fit.training_step"),
        ("fit-perf-[Strategy]SingleDeviceStrategy.validation_step", "perf.fit.validation_step"),
        ("validate-perf-[Strategy]SingleDeviceStrategy.validation_step", "perf.validate.validation_step"),
        ("test-[Strategy]SingleDeviceStrategy.test_step", "test.test_step"),  # no filename
        ("fit-1-[Strategy]DDPStrategy.training_step", "fit.training_step.rank1"),  # no filename, rank 1
        ("fit-perf-1-[Strategy]DDPStrategy.training_step", "perf.fit.training_step.rank1"),
        ("predict-my-run-0-[Strategy]DDPStrategy.predict_step", "my-run.predict.predict_step.rank0"),
        ("worker0", "worker0"),
        ("fit-perf", "fit-perf"),
        ("fit-[Strategy]X.on_train_start", "fit-[Strategy]X.on_train_start"),  # not a step hook
    ],
)
def test_lightning_worker_names(worker: str, expected: str) -> None:
    assert lightning_worker(worker) == expected


def test_parse_name_renames_lightning_files() -> None:
    name = "fit-perf-[Strategy]SingleDeviceStrategy.training_step.1796081280690249986.pt.trace.json.gz"
    assert parse_name(name) == ("perf.fit.training_step", 1796081280690249986)


def _touch(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"{}")
    old = time.time() - 60
    os.utime(path, (old, old))


def test_lightning_layout(tmp_path: Path) -> None:
    version = tmp_path / "lightning_logs" / "version_0"
    for stage, hook, ns in (
        ("fit", "training_step", 3),
        ("fit", "validation_step", 4),
        ("fit", "training_step", 10),  # a second export of the same stage: its second span
        ("validate", "validation_step", 5),
        ("test", "test_step", 6),
    ):
        _touch(version / f"{stage}-perf-[Strategy]SingleDeviceStrategy.{hook}.{ns}.pt.trace.json")
    _touch(version / "fit-perf.txt")
    _touch(
        tmp_path
        / "lightning_logs"
        / "version_1"
        / "test-perf-0-[Strategy]DDPStrategy.test_step.7.pt.trace.json"
    )
    loc = resolve(str(tmp_path))
    got = sorted((f.run, f.worker, f.span) for f in group_files(loc, walk_files(loc)))
    assert got == [
        ("lightning_logs/version_0", "perf.fit.training_step", "1"),
        ("lightning_logs/version_0", "perf.fit.training_step", "2"),
        ("lightning_logs/version_0", "perf.fit.validation_step", "1"),
        ("lightning_logs/version_0", "perf.test.test_step", "1"),
        ("lightning_logs/version_0", "perf.validate.validation_step", "1"),
        ("lightning_logs/version_1", "perf.test.test_step.rank0", "1"),
    ]


def test_the_lightning_sample() -> None:
    loc = resolve(str(SAMPLES / "lightning_cpu"))
    workers = sorted({(f.run, f.worker) for f in group_files(loc, walk_files(loc))})
    assert workers == [
        ("lightning_logs/version_0", "perf.fit.training_step"),
        ("lightning_logs/version_0", "perf.fit.validation_step"),
        ("lightning_logs/version_0", "perf.test.test_step"),
        ("lightning_logs/version_0", "perf.validate.validation_step"),
    ]


def test_two_lightning_filenames_in_one_folder_stay_apart(tmp_path: Path) -> None:
    """Two PyTorchProfilers (filename="a" and filename="b", and one without a filename) writing into
    one version folder: each keeps its own workers, and each worker its own spans."""
    version = tmp_path / "lightning_logs" / "version_0"
    for name in (
        "fit-a-[Strategy]SingleDeviceStrategy.training_step.1",
        "fit-a-[Strategy]SingleDeviceStrategy.training_step.5",
        "fit-b-[Strategy]SingleDeviceStrategy.training_step.2",
        "fit-[Strategy]SingleDeviceStrategy.training_step.3",
        "test-b-[Strategy]SingleDeviceStrategy.test_step.4",
    ):
        _touch(version / f"{name}.pt.trace.json")
    loc = resolve(str(tmp_path))
    got = sorted(
        (f.worker, f.span, f.info.path.rsplit(".", 4)[-4]) for f in group_files(loc, walk_files(loc))
    )
    assert got == [
        ("a.fit.training_step", "1", "1"),
        ("a.fit.training_step", "2", "5"),
        ("b.fit.training_step", "1", "2"),
        ("b.test.test_step", "1", "4"),
        ("fit.training_step", "1", "3"),
    ]
