"""Writes samples/lightning_cpu: a small real PyTorch Lightning run profiled by its PyTorchProfiler.

Run with a venv holding torch 2.13.0 (CPU) and lightning (see samples/README.md)::

    python samples/make_lightning_sample.py

It fits a two-layer MLP for one short epoch, then validates and tests it, with
``Trainer(profiler=PyTorchProfiler(filename="perf", export_to_chrome=True))`` and Lightning's default
``lightning_logs/version_N`` folder under samples/lightning_cpu (emptied first). Lightning writes one
trace per stage (fit, validate, test); the traces are gzipped afterwards to keep the folder small.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import lightning.pytorch as pl
import torch
from lightning.pytorch.loggers import CSVLogger
from lightning.pytorch.profilers import PyTorchProfiler
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

OUT = Path(__file__).resolve().parent / "lightning_cpu"


class TinyClassifier(pl.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.head = nn.Linear(64, 4)
        self.loss = nn.CrossEntropyLoss()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(x))

    def _step(self, batch: tuple[torch.Tensor, torch.Tensor], name: str) -> torch.Tensor:
        x, y = batch
        loss = self.loss(self(x), y)
        self.log(name, loss)
        return loss

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        return self._step(batch, "train_loss")

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        return self._step(batch, "val_loss")

    def test_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        return self._step(batch, "test_loss")

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.05, momentum=0.9)


def loader(n: int, seed: int) -> DataLoader:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 32, generator=g)
    y = torch.randint(0, 4, (n,), generator=g)
    return DataLoader(TensorDataset(x, y), batch_size=16, shuffle=False)


def main() -> None:
    torch.manual_seed(0)
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    model = TinyClassifier()
    trainer = pl.Trainer(
        accelerator="cpu",
        devices=1,
        max_epochs=1,
        limit_train_batches=8,
        limit_val_batches=6,
        limit_test_batches=6,
        num_sanity_val_steps=0,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        logger=CSVLogger(save_dir=str(OUT), name="lightning_logs"),
        profiler=PyTorchProfiler(filename="perf", export_to_chrome=True),
    )
    trainer.fit(model, loader(128, 1), loader(96, 2))
    trainer.validate(model, loader(96, 2), verbose=False)
    trainer.test(model, loader(96, 3), verbose=False)
    for trace in sorted(OUT.rglob("*.pt.trace.json")):
        # traceName holds the absolute export path: keep it relative to the repository
        body = trace.read_bytes().replace(str(OUT.parent.parent).encode() + b"/", b"")
        with gzip.open(f"{trace}.gz", "wb", compresslevel=9) as dst:
            dst.write(body)
        trace.unlink()
    for path in sorted(OUT.rglob("*")):
        print(path.relative_to(OUT), path.stat().st_size if path.is_file() else "")


if __name__ == "__main__":
    main()
