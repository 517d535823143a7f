"""The built-in example data shipped in data/."""

from __future__ import annotations

import hashlib

import pandas as pd
import pytest

from core.datasets import (
    BATCH_RUN_SETS,
    BUILTIN_LOG_SETS,
    DATA_DIR,
    batch_run_files,
    builtin_log_files,
    builtin_speed_tables,
)
from core.errors import InputError
from core.logs import read_log_file
from core.speed import fit_speed_model
from core.speed.table import read_speed_table
from data.extract_mllog import extract
from tests.conftest import ROOT, TEST_DATA


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
#: one original result file, unmodified (console output and all), kept to check the extraction on
ORIGINAL = TEST_DATA / "mlperf_original" / "NVIDIA" / "dgxh100_n8_ngc23.04_mxnet" / "result_0.txt"
SUMS = pd.read_csv(TEST_DATA / "reference_sha256.csv")
MLPERF_SUMS = SUMS[SUMS.reference_path.str.startswith("mlperf_v3.0_resnet50/")]


def test_extracting_an_original_mlperf_file_gives_the_builtin_copy_and_reads_the_same(tmp_path):
    src = tmp_path / "src" / "NVIDIA" / "dgxh100_n8_ngc23.04_mxnet"
    src.mkdir(parents=True)
    (src / "result_0.txt").write_bytes(ORIGINAL.read_bytes())
    assert extract(tmp_path / "src", tmp_path / "out") == 1
    out = tmp_path / "out" / "NVIDIA" / "dgxh100_n8_ngc23.04_mxnet" / "result_0.txt"
    copy = MLPERF_COPY / "NVIDIA" / "dgxh100_n8_ngc23.04_mxnet" / "result_0.txt"
    assert out.read_bytes() == copy.read_bytes()
    lines = ORIGINAL.read_bytes().split(b"\n")
    kept = copy.read_bytes().split(b"\n")[:-1]
    assert kept == [line for line in lines if b":::MLLOG" in line] and len(kept) < len(lines)
    a, b = read_log_file(ORIGINAL), read_log_file(copy)
    assert a.source == b.source and a.meta == b.meta and a.flags == b.flags
    assert a.frame.equals(b.frame)


@pytest.mark.parametrize("rec", list(MLPERF_SUMS.itertuples()), ids=lambda r: r.reference_path.split("/", 1)[1])
def test_every_mlperf_copy_is_the_extract_of_its_original(rec):
    # sha256_in_repository: the MLLOG lines of the original (sha256_original), taken when the copy was made
    copy = ROOT / rec.repository_path
    assert hashlib.sha256(copy.read_bytes()).hexdigest() == rec.sha256_in_repository
    assert all(b":::MLLOG" in line for line in copy.read_bytes().split(b"\n")[:-1])


def test_the_kept_original_is_the_one_recorded():
    rec = MLPERF_SUMS[MLPERF_SUMS.reference_path.str.endswith("dgxh100_n8_ngc23.04_mxnet/result_0.txt")].iloc[0]
    assert hashlib.sha256(ORIGINAL.read_bytes()).hexdigest() == rec.sha256_original
    assert len(MLPERF_SUMS) == 26


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


def test_a_built_in_log_is_known_by_its_bytes_under_any_path(tmp_path):
    from core.datasets import builtin_dataset_of

    original = DATA_DIR / "logs" / "resnet20_Intel Xeon Processor.csv"
    copy = tmp_path / "any name.csv"
    copy.write_bytes(original.read_bytes())
    assert builtin_dataset_of(original) == builtin_dataset_of(copy) == "mnist1d"
    assert builtin_dataset_of(DATA_DIR / "pollux_traces" / "cifar10" / "validation-128.csv") == "other"
    changed = tmp_path / "resnet20_Intel Xeon Processor.csv"     # the built-in name, one byte more
    changed.write_bytes(original.read_bytes() + b"\n")
    assert builtin_dataset_of(changed) is None
    assert builtin_dataset_of(tmp_path / "missing.csv") is None and builtin_dataset_of(tmp_path) is None


@pytest.mark.parametrize("lookup, registry, what", [
    (batch_run_files, BATCH_RUN_SETS, "batch run set"),
    (builtin_log_files, BUILTIN_LOG_SETS, "built-in log set"),
])
def test_an_unknown_set_is_an_input_error_naming_the_registry(lookup, registry, what):
    """Issue 34: the two look-ups raised KeyError; now the product's InputError (a ValueError) lists the keys."""
    with pytest.raises(InputError) as error:
        lookup("no_such_set")
    assert str(error.value) == f"{what}: expected one of {', '.join(registry)}; got 'no_such_set'."
    assert isinstance(error.value, ValueError) and not isinstance(error.value, KeyError)
