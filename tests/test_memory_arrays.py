"""Memory view building blocks on plain arrays: downsampling, alloc/free pairing, device labels."""

from __future__ import annotations

import numpy as np

from torch_tb_profiler.analysis.memory.downsample import downsample_indices
from torch_tb_profiler.analysis.memory.usage import device_label, pair_allocations


def _step_curve(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    t = np.sort(rng.uniform(0, 1e6, n))
    y = np.cumsum(rng.choice([-1, 1], n) * rng.integers(1, 1 << 20, n)).astype(np.float64)
    return t, y


def test_short_curves_are_kept_whole():
    t = np.arange(10.0)
    assert downsample_indices(t, [t * 2], max_points=100).tolist() == list(range(10))


def test_downsampling_keeps_true_peak_and_every_bucket_extreme():
    rng = np.random.default_rng(0)
    t, y = _step_curve(rng, 200_000)
    # one needle spike, 1 sample wide: the peak LTTB may shave
    y[123_457] = y.max() + 5e6
    r = y * 1.5
    keep = downsample_indices(t, [y, r], max_points=3000)
    assert keep.size <= 3000
    assert 123_457 in keep  # the exact peak sample, hence its exact time and value
    assert y[keep].max() == y.max() and y[keep].min() == y.min()
    assert keep[0] == 0 and keep[-1] == t.size - 1
    # per display column (bucket), the drawn extent equals the true extent
    buckets = 3000 // 6
    b = np.minimum(((t - t[0]) / (t[-1] - t[0]) * buckets).astype(int), buckets - 1)
    for col in rng.choice(buckets, 50, replace=False):
        full = y[b == col]
        kept = y[keep][b[keep] == col]
        if full.size:
            assert kept.max() == full.max() and kept.min() == full.min()
            assert kept[0] == full[0] and kept[-1] == full[-1]


def test_step_change_wider_than_a_column_is_kept_at_its_place():
    # flat 0 for 10k points, then a single step to 7, flat again: the step is found exactly
    t = np.arange(20_000, dtype=np.float64)
    y = np.where(t < 12_345, 0.0, 7.0)
    keep = downsample_indices(t, [y], max_points=400)
    assert 12_345 in keep
    i = int(np.flatnonzero(keep == 12_345)[0])
    # drawn as a step plot, the kept points hold 0 until exactly t=12345, then 7
    assert y[keep[i - 1]] == 0.0 and y[keep[i]] == 7.0


def test_nan_series_do_not_break_downsampling():
    t = np.arange(10_000, dtype=np.float64)
    y = np.full(t.size, np.nan)
    keep = downsample_indices(t, [y], max_points=100)
    assert 0 < keep.size <= 100


def test_pairing_by_address():
    # rows: 0 alloc A(100) t=1, 1 alloc B(50) t=2, 2 free A t=3, 3 alloc A(30) t=4 (address reused),
    # 4 free C(20) t=5 (allocated before the window), 5 free A t=6, 6 alloc D(8) t=7 (never freed),
    # 7 legacy record without address t=8
    ts = np.array([1, 2, 3, 4, 5, 6, 7, 8], dtype=float)
    addr = np.array([10, 20, 10, 10, 30, 10, 40, -1])
    nbytes = np.array([100, 50, -100, 30, -20, -30, 8, 64], dtype=float)
    a, f = pair_allocations(ts, addr, nbytes)
    pairs = sorted(zip(a.tolist(), f.tolist(), strict=True))
    assert pairs == [(-1, 4), (0, 2), (1, -1), (3, 5), (6, -1)]


def test_device_labels_cover_every_type_and_unknown_numbers():
    assert device_label(0, -1) == "CPU"
    assert device_label(1, 0) == "GPU0"
    assert device_label(12, 1) == "XPU1"
    assert device_label(19, 0) == "MTIA0"
    assert device_label(15, 2) == "HPU2"
    assert device_label(20, 0) == "PrivateUse1 0"
    assert device_label(42, 3) == "Device type 42 #3"
