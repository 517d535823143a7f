"""The built-in example data shipped in data/."""

from __future__ import annotations

import pytest

from core.datasets import BATCH_RUN_SETS, DATA_DIR, batch_run_files, builtin_log_files, builtin_speed_tables
from core.logs import read_log_file
from core.plan.speed import fit_speed_model
from core.plan.speed_table import read_speed_table
from tests.conftest import SHARED


def test_builtin_speed_tables_are_the_six_pollux_traces_and_fit_as_allreduce():
    tables = builtin_speed_tables()
    assert [name for name, _ in tables] == [f"{job}/scalability.csv" for job in
                                            ("bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3")]
    name, path = tables[1]
    model = fit_speed_model(read_speed_table(path, source=name), mode="allreduce", source=name)
    # docs/plan.md: cifar10, 329 points, MAPE 12.53 %
    assert model.n_points == 329 and round(model.mape_pct, 2) == 12.53


# ---------------------------------------------------------------- issue 11: MLPerf copy, batch sets
MLPERF_COPY = DATA_DIR / "mlperf_v3.0_resnet50"
MLPERF_SHARED = SHARED / "mlperf_v3.0_resnet50"


@pytest.mark.skipif(not MLPERF_SHARED.is_dir(), reason="shared MLPerf logs not present")
@pytest.mark.parametrize("path", sorted(MLPERF_SHARED.glob("*/*/result_*.txt")), ids=lambda p: p.parent.name + p.name)
def test_the_mlperf_copy_keeps_every_mllog_line_byte_for_byte_and_reads_the_same(path):
    copy = MLPERF_COPY / path.relative_to(MLPERF_SHARED)
    original = [line for line in path.read_bytes().split(b"\n") if b":::MLLOG" in line]
    assert copy.read_bytes().split(b"\n")[:-1] == original      # nothing else, nothing changed, same order
    a, b = read_log_file(path), read_log_file(copy)
    assert a.source == b.source and a.meta == b.meta and a.flags == b.flags
    assert a.frame.equals(b.frame)


def test_builtin_mlperf_set_names_runs_by_system_folder():
    names = [name for name, _ in builtin_log_files("mlperf")]
    assert len(names) == 26 and len(set(names)) == 26
    assert "dgxh100_n64_ngc23.04_mxnet/result_1.txt" in names


def test_the_mnist1d_batch_runs_are_one_model_at_seven_batches_with_the_linear_rule():
    logs = [read_log_file(p) for _, p in batch_run_files("mnist1d_batch")]
    batches = sorted(log.meta.global_batch for log in logs)
    assert batches == [16, 32, 64, 128, 256, 512, 1024]
    assert {log.meta.model for log in logs} == {"resnet14"}
    assert {log.meta.status for log in logs} == {"success"}
    assert {log.meta.samples_per_epoch for log in logs} == {4000}
    for log in logs:   # every run reached 0.95 on the validation set, its last evaluation
        assert log.frame["acc"].iloc[-1] >= 0.95


@pytest.mark.parametrize("key", list(BATCH_RUN_SETS))
def test_every_batch_run_set_has_runs_at_five_or_more_batches(key):
    batches = {read_log_file(p).meta.global_batch for _, p in batch_run_files(key)}
    assert len(batches) >= 5 and None not in batches
