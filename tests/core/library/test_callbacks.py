"""Training callbacks: a plain PyTorch loop and a real PyTorch Lightning Trainer write logs the planner reads,
and add the finished run to the library (a run that fails is not added)."""

from __future__ import annotations

import pytest

from core.library import Library, TrainingLog, add_logs_to_library, device_name, log_path
from core.logs import read_log_file

pytestmark = [pytest.mark.filterwarnings("ignore:`isinstance.treespec, LeafSpec.` is deprecated"),
              pytest.mark.filterwarnings("ignore:You defined a `validation_step` but have no `val_dataloader`")]


def _tiny_data(torch):
    torch.manual_seed(0)
    x = torch.randn(96, 6)
    y = (x[:, 0] + x[:, 1] > 0).long()
    return x, y


def test_a_plain_pytorch_loop_writes_the_log_as_it_trains(tmp_path):
    import torch
    x, y = _tiny_data(torch)
    model = torch.nn.Linear(6, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    path = log_path(tmp_path, "linear6", device_name("cpu"), 32)
    with TrainingLog(path, global_batch=32, flush_every=2) as log:
        for epoch in (1, 2, 3):
            for step, start in enumerate(range(0, 96, 32), start=1):
                logits = model(x[start:start + 32])
                loss = torch.nn.functional.cross_entropy(logits, y[start:start + 32])
                opt.zero_grad()
                loss.backward()
                opt.step()
                acc = float((logits.argmax(1) == y[start:start + 32]).float().mean())
                log.step(epoch=epoch, step=step, loss=loss.item(), acc=acc, lr=opt.param_groups[0]["lr"])
                if epoch == 1 and step == 2:     # flushed every 2 rows: readable while training goes on
                    assert read_log_file(path).n_points == 2
    run = read_log_file(path)
    assert (run.meta.model, run.meta.global_batch, run.steps_per_epoch, run.n_points) == ("linear6", 32, 3, 9)
    assert run.frame["global_step"].tolist() == list(range(1, 10)) and (run.frame["lr"] == 0.5).all()
    lib = Library(tmp_path / "lib.duckdb")
    report = add_logs_to_library(lib, [path], tags=["loop"])
    assert report.n_added == 1 and lib.get(report.results[0].run_id).fingerprint() == run.fingerprint()


def _lightning_module(pl, torch):
    class Tiny(pl.LightningModule):
        def __init__(self, fail_at: int | None = None):
            super().__init__()
            self.net = torch.nn.Linear(6, 2)
            self.fail_at = fail_at

        def training_step(self, batch, batch_idx):
            if self.fail_at is not None and self.global_step >= self.fail_at:
                raise RuntimeError("diverged")
            xb, yb = batch
            logits = self.net(xb)
            self.log("train_acc", (logits.argmax(1) == yb).float().mean(), on_step=True)
            return torch.nn.functional.cross_entropy(logits, yb)

        def validation_step(self, batch, batch_idx):
            xb, yb = batch
            logits = self.net(xb)
            self.log("val_loss", torch.nn.functional.cross_entropy(logits, yb))
            self.log("val_acc", (logits.argmax(1) == yb).float().mean())

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.25)

    return Tiny


def _trainer(pl, callback):
    return pl.Trainer(max_epochs=3, callbacks=[callback], logger=False, enable_checkpointing=False,
                      enable_progress_bar=False, enable_model_summary=False, accelerator="cpu", num_sanity_val_steps=0)


def test_a_lightning_trainer_writes_both_logs_and_adds_them_to_the_library(tmp_path):
    import lightning.pytorch as pl  # requirements-test.txt pins lightning: never skipped
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    from core.library import lightning_callback

    x, y = _tiny_data(torch)
    lib = Library(tmp_path / "lib.duckdb")
    callback = lightning_callback(tmp_path / "logs", model="linear6", library=lib, tags=["lightning"])
    _trainer(pl, callback).fit(_lightning_module(pl, torch)(), DataLoader(TensorDataset(x, y), batch_size=32),
                               DataLoader(TensorDataset(x[:32], y[:32]), batch_size=32))
    device = device_name("cpu")
    train = read_log_file(log_path(tmp_path / "logs", "linear6", device, 32))
    val = read_log_file(log_path(tmp_path / "logs", "linear6", device, 32, split="val"))
    assert (train.meta.global_batch, train.steps_per_epoch, train.n_points) == (32, 3, 9)   # 96 samples / 32
    assert train.frame["acc"].notna().all() and (train.frame["lr"] == 0.25).all()
    assert val.meta.split == "val" and val.frame["global_step"].tolist() == [3, 6, 9] and val.frame["acc"].notna().all()
    assert callback.report.n_added == 2
    assert sorted(lib.runs("tag=lightning")["source"]) == sorted([train.source, val.source])


def test_a_lightning_run_that_fails_keeps_its_log_but_is_not_added(tmp_path):
    import lightning.pytorch as pl
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    from core.library import lightning_callback

    x, y = _tiny_data(torch)
    lib = Library(tmp_path / "lib.duckdb")
    callback = lightning_callback(tmp_path / "logs", model="linear6", library=lib)
    with pytest.raises(RuntimeError, match="diverged"):
        _trainer(pl, callback).fit(_lightning_module(pl, torch)(fail_at=4), DataLoader(TensorDataset(x, y),
                                                                                       batch_size=32))
    partial = read_log_file(log_path(tmp_path / "logs", "linear6", device_name("cpu"), 32))
    assert partial.n_points == 4 and not lib.exists()
