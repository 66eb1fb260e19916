"""Regenerate the sample logdir shipped in ``samples/``.

Run with a venv that has torch 2.13.0 (CPU build) and numpy, from the repo root::

    "$TORCH_VENV"/bin/python samples/make_samples.py   # TORCH_VENV: a venv with torch, outside the repo

Every run folder is emptied and rewritten. Seeds are fixed, so shapes, op sequences and step
counts repeat; timestamps, durations, pids and file names (which carry a millisecond clock)
naturally differ between regenerations.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.profiler import (
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    tensorboard_trace_handler,
)
from torch.utils.data import DataLoader, TensorDataset

SAMPLES = Path(__file__).resolve().parent
SEED = 1234


class SmallResNet(nn.Module):
    """Conv stem, one residual block, pooled Linear head: enough layers for a module tree."""

    def __init__(self, channels: int = 8, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(channels),
            nn.ReLU(),
        )
        self.block = ResidualBlock(channels)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(channels, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.block(self.stem(x))
        return self.head(torch.flatten(self.pool(x), 1))


class ResidualBlock(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(y)) + x)


def make_loader(samples: int, batch: int) -> DataLoader:
    gen = torch.Generator().manual_seed(SEED)
    images = torch.randn(samples, 3, 16, 16, generator=gen)
    labels = torch.randint(0, 10, (samples,), generator=gen)
    return DataLoader(TensorDataset(images, labels), batch_size=batch, shuffle=True, generator=gen)


def fresh_dir(name: str) -> Path:
    path = SAMPLES / name
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def make_profiler(out: Path, worker: str, repeat: int) -> profile:
    return profile(
        activities=[ProfilerActivity.CPU],
        record_shapes=True,
        profile_memory=True,
        with_stack=True,
        with_modules=True,
        schedule=schedule(wait=1, warmup=1, active=3, repeat=repeat),
        on_trace_ready=tensorboard_trace_handler(str(out), worker_name=worker, use_gzip=True),
    )


def train_step(model: nn.Module, opt: torch.optim.Optimizer, batch: tuple[torch.Tensor, ...]) -> None:
    images, labels = batch
    with record_function("forward"):
        loss = nn.functional.cross_entropy(model(images), labels)
    with record_function("backward"):
        opt.zero_grad(set_to_none=True)
        loss.backward()
    with record_function("optimizer_step"):
        opt.step()


def run_single() -> None:
    """Run 1: one worker, schedule repeat=2 -> two span files of 3 ProfilerStep each."""
    out = fresh_dir("resnet_like_cpu")
    torch.manual_seed(SEED)
    model = SmallResNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loader = make_loader(samples=80, batch=8)
    with make_profiler(out, "worker0", repeat=2) as prof:
        for step, batch in enumerate(loader):
            if step >= 10:  # (wait 1 + warmup 1 + active 3) x 2
                break
            with record_function("data_to_model"):
                batch = tuple(t.contiguous() for t in batch)
            train_step(model, opt, batch)
            prof.step()


def ddp_worker(rank: int, world: int, port: int, out: str) -> None:
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        torch.manual_seed(SEED)  # same initial weights on both ranks
        # a tiny bucket cap splits the 1506 gradients into several allreduce buckets
        model = DistributedDataParallel(SmallResNet(), bucket_cap_mb=0.002)
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        loader = make_loader(samples=48, batch=8)
        with make_profiler(Path(out), f"rank{rank}", repeat=1) as prof:
            for step, batch in enumerate(loader):
                if step >= 5:  # wait 1 + warmup 1 + active 3
                    break
                train_step(model, opt, batch)
                with record_function("explicit_collectives"):
                    metric = torch.tensor([float(rank + step)])
                    dist.all_reduce(metric)
                    flag = torch.tensor([step if rank == 0 else -1])
                    dist.broadcast(flag, src=0)
                prof.step()
        dist.barrier()
    finally:
        dist.destroy_process_group()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_ddp() -> None:
    """Run 2: 2-rank DDP on gloo, one span per rank (workers rank0, rank1)."""
    out = fresh_dir("ddp_gloo_2ranks")
    mp.spawn(ddp_worker, args=(2, free_port(), str(out)), nprocs=2, join=True)


def run_plain() -> None:
    """Run 3: no schedule (no ProfilerStep), uncompressed .pt.trace.json via export_chrome_trace."""
    out = fresh_dir("plain_no_steps")
    torch.manual_seed(SEED)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    x = torch.randn(4, 16)
    prof = profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True)
    with prof, torch.no_grad(), record_function("inference"):
        for _ in range(3):
            model(x)
    prof.export_chrome_trace(str(out / "worker0.pt.trace.json"))


def main() -> None:
    print(f"torch {torch.__version__}", file=sys.stderr)
    run_single()
    run_ddp()
    run_plain()
    for path in sorted(SAMPLES.rglob("*.json*")):
        print(f"{path.relative_to(SAMPLES)}  {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
