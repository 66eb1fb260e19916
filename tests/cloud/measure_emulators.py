"""Measure emulator start-up and storage timings (not a test).

    python -m tests.cloud.measure_emulators [repeats]

Per backend: median start-up of the emulator, then for the synthetic logdir tree (5 files) and for 50
files of 100 KB: walk_files, local_copy of every file (downloads), and local_copy again (cache hits).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
os.environ.setdefault("NO_GCE_CHECK", "true")

from tests.cloud import emulators
from tests.cloud.tree import logdir_tree
from torch_tb_profiler.ingest import cloud_cache, storage


def options(name: str, emu: emulators.Emulator) -> dict:
    if name == "s3":
        return {"key": "testing", "secret": "testing", "endpoint_url": emu.endpoint}
    if name == "az":
        return {"connection_string": emulators.azurite_connection_string(emu.port)}
    return {"endpoint_url": emu.endpoint}


def timed(fn) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main(repeats: int) -> None:
    starters = {"s3": emulators.start_moto, "az": emulators.start_azurite, "gs": emulators.start_gcs}
    for name, start in starters.items():
        try:
            starts = []
            for _ in range(repeats):
                emu = start()
                starts.append(emu.start_seconds)
                emu.stop()
            emu = start()
        except emulators.Unavailable as exc:
            print(f"{name}: skipped ({exc})")
            continue
        try:
            opts = options(name, emu)
            line = [f"{name} ({emu.name}): start median {statistics.median(starts):.2f} s (n={repeats})"]
            big = {f"run{i % 5}/w{i}.pt.trace.json": os.urandom(100_000) for i in range(50)}
            for label, tree in (("tree 5 files", logdir_tree()), ("50 x 100 KB", big)):
                url = f"{'az' if name == 'az' else name}://bench-{name}-{len(tree)}/logs"
                loc = storage.resolve(url, opts)
                loc.fs.mkdir(loc.root.split("/")[0])
                loc.fs.pipe({f"{loc.root}/{rel}": data for rel, data in tree.items()})
                with tempfile.TemporaryDirectory() as cache:
                    os.environ[cloud_cache.CACHE_DIR_ENV] = cache
                    t_walk, files = timed(lambda loc=loc: storage.walk_files(loc))
                    t_get, _ = timed(lambda loc=loc, files=files: [storage.local_copy(loc, f) for f in files])
                    t_hit, _ = timed(lambda loc=loc, files=files: [storage.local_copy(loc, f) for f in files])
                line.append(f"{label}: walk {t_walk:.3f} s, download all {t_get:.3f} s, cached {t_hit:.4f} s")
            print("; ".join(line))
        finally:
            emu.stop()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
