"""examples/train_mnist1d.py: a few real training steps, logs that read back, the run in the library."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.library import Library
from core.logs import read_log_file

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_example_trains_logs_and_adds_the_run_to_the_library(tmp_path):
    db = tmp_path / "lib.duckdb"
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "train_mnist1d.py"), "--depth", "8", "--epochs", "3",
                           "--max-batches", "4", "--num-samples", "400", "--out", str(tmp_path / "runs"),
                           "--library", str(db), "--tag", "example"],
                          capture_output=True, text=True, timeout=900, cwd=tmp_path,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    train = next((tmp_path / "runs").glob("resnet8_*-64.csv"))
    val = next((tmp_path / "runs").glob("resnet8_*_val-64.csv"))
    log = read_log_file(train)
    assert (log.meta.model, log.meta.depth, log.meta.global_batch, log.meta.split) == ("resnet8", 8, 64, "train")
    assert log.n_points == 12 and log.steps_per_epoch == 4
    assert log.frame["epoch"].tolist() == [1] * 4 + [2] * 4 + [3] * 4
    assert log.roles.lr == "lr" and (log.frame["lr"] == 0.0005).all() and log.frame["time_s"].is_monotonic_increasing
    val_log = read_log_file(val)
    assert val_log.meta.split == "val" and val_log.frame["global_step"].tolist() == [4, 8, 12]   # steps so far
    table = Library(db).runs("tag=example")
    assert table["source"].tolist() == [train.name, val.name]
    assert table["dataset"].tolist() == ["mnist1d", "mnist1d"] and table["n_params"].tolist() == [28506, 28506]
    assert Library(db).get(int(table["run_id"][0])).fingerprint() == log.fingerprint()
