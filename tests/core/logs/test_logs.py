"""Reading logs: formats, column roles, global steps, and every kind of bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from core.errors import LogFormatError
from core.logs.reader import detect_format, detect_roles, epoch_of_step, infer_steps_per_epoch, read_log, read_log_file
from tests.conftest import DATA


def course_csv(epochs: int = 3, spe: int = 4, last: int | None = None, header: str = "epoch, step, loss, acc") -> bytes:
    """A course-format log: loss 1/k, acc rising by 0.01 per row; the last epoch may be partial."""
    lines = [header]
    k = 0
    for e in range(1, epochs + 1):
        n = spe if (e < epochs or last is None) else last
        for s in range(1, n + 1):
            k += 1
            lines.append(f"{e}, {s}, {1.0 / k:.6f}, {min(0.99, 0.5 + 0.01 * k):.4f}")
    return ("\n".join(lines) + "\n").encode()


# ----------------------------------------------------------------------------- formats
def test_course_format_global_step_is_epoch_minus_one_times_spe_plus_step():
    log = read_log(course_csv(epochs=3, spe=4), "resnet20_Tesla V100-PCIE-32GB.csv")
    # (epoch-1)*4 + step: epoch 2 step 1 -> 5, epoch 3 step 4 -> 12
    assert log.frame["global_step"].tolist() == list(range(1, 13))
    assert log.frame["epoch"].tolist() == [1] * 4 + [2] * 4 + [3] * 4
    assert log.steps_per_epoch == 4
    assert log.fmt == "course"
    meta = log.meta
    assert (meta.model, meta.depth, meta.gpu, meta.split) == ("resnet20", 20, "Tesla V100-PCIE-32GB", "train")


def test_partial_last_epoch_does_not_change_steps_per_epoch():
    log = read_log(course_csv(epochs=4, spe=391, last=17), "r.csv")
    assert log.steps_per_epoch == 391
    assert log.frame["global_step"].iloc[-1] == 3 * 391 + 17
    assert any("partial last epoch (17 of 391 steps)" in f for f in log.flags)


def test_steps_per_epoch_override_is_used_and_flagged():
    log = read_log(course_csv(epochs=3, spe=4), "r.csv", steps_per_epoch=5)
    assert log.steps_per_epoch == 5
    assert log.frame["global_step"].tolist()[4] == 6  # epoch 2 step 1 -> 1*5 + 1
    assert any("steps per epoch set to 5" in f for f in log.flags)


def test_infer_steps_per_epoch_zero_based_steps():
    epoch = np.repeat([0, 1, 2], [10, 10, 3])
    step = np.concatenate([np.arange(10), np.arange(10), np.arange(3)])
    assert infer_steps_per_epoch(epoch, step) == 10


def test_val_file_name_sets_split():
    log = read_log(course_csv(), "resnet56_NVIDIA A100-PCIE-40GB_val.csv")
    assert log.meta.split == "val" and log.meta.gpu == "NVIDIA A100-PCIE-40GB"


def test_lightning_metrics_csv_sparse_rows_global_step_and_zero_based_epoch():
    csv = (b"epoch,step,train_loss_step,train_acc_step,val_loss,val_acc,train_loss_epoch\n"
           b"0,49,2.0,0.30,,,\n0,99,1.5,0.50,,,\n0,99,,,1.4,0.55,\n0,99,,,,,1.7\n"
           b"1,149,1.0,0.70,,,\n1,199,0.8,0.80,,,\n1,199,,,0.9,0.75,\n2,249,0.7,0.85,,,\n")
    log = read_log(csv, "metrics.csv")
    assert log.fmt == "lightning"
    assert log.roles.loss == "train_loss_step" and log.roles.acc == "train_acc_step"
    # Lightning writes the 0-based index of the last batch (a real Trainer, 10 batches per epoch, logs its
    # epoch-end validation at step 9): the steps done are step + 1 (issue 23, part 5)
    assert log.frame["global_step"].tolist() == [50, 100, 150, 200, 250]
    assert log.frame["epoch"].tolist() == [1, 1, 2, 2, 3]  # 0-based epochs become 1-based
    assert log.steps_per_epoch == 100  # first steps 49, 149, 249 per epoch -> 100 apart
    assert not any("skipped" in f for f in log.flags)  # sparse rows are normal in Lightning
    val = read_log(csv, "metrics.csv", roles={"loss": "val_loss", "acc": "val_acc"})
    assert val.frame["loss"].tolist() == [1.4, 0.9]


def test_tensorboard_export_value_is_loss_unless_name_says_accuracy():
    csv = b"Wall time,Step,Value\n1600000000.0,10,2.0\n1600000010.0,20,1.0\n1600000020.0,30,0.5\n"
    loss = read_log(csv, "run-resnet20-tag-train_loss.csv")
    assert loss.fmt == "tensorboard" and loss.roles.loss == "Value"
    assert loss.frame["loss"].tolist() == [2.0, 1.0, 0.5]
    assert loss.steps_per_epoch is None and loss.frame["epoch"].isna().all()
    acc = read_log(b"Wall time,Step,Value\n1,10,0.5\n2,20,0.8\n", "run-tag-train_acc.csv")
    assert acc.roles.acc == "Value" and acc.roles.loss is None
    assert any("accuracy-only" in f for f in acc.flags)
    with_spe = read_log(csv, "run-tag-loss.csv", steps_per_epoch=15)
    assert with_spe.frame["epoch"].tolist() == [1, 2, 2]  # ceil(10/15), ceil(20/15), ceil(30/15)


def test_wandb_export_ignores_min_max_columns():
    csv = (b'"Step","run1 - loss","run1 - loss__MIN","run1 - loss__MAX"\n'
           b"1,2.0,1.9,2.1\n2,1.0,0.9,1.1\n3,0.7,0.6,0.8\n")
    log = read_log(csv, "wandb_export.csv")
    assert log.fmt == "wandb" and log.roles.loss == "run1 - loss"


@pytest.mark.parametrize("job", ["cifar10", "imagenet"])
def test_pollux_validation_trace_is_an_epoch_level_accuracy_trace(job):
    path = DATA / "pollux_traces" / job / "validation-128.csv" if job == "cifar10" else \
        DATA / "pollux_traces" / job / "validation-200.csv"
    log = read_log_file(path, source=f"{job}/{path.name}")
    assert log.fmt == "metric-trace" and log.granularity == "epoch"
    assert log.meta.model == job and log.meta.split == "val"
    assert not log.has_loss and log.has_acc
    assert log.frame["epoch"].tolist()[:3] == [1, 2, 3]
    assert 0 < log.frame["acc"].max() <= 1


def test_percent_accuracy_is_divided_by_100():
    csv = b"epoch,step,loss,acc\n1,1,2.0,10\n1,2,1.0,55\n2,1,0.5,90\n2,2,0.4,95\n"
    log = read_log(csv, "r.csv")
    assert log.frame["acc"].tolist() == [0.10, 0.55, 0.90, 0.95]
    assert "accuracy given in percent; divided by 100" in log.flags


def test_restarted_steps_keep_the_later_rows_and_flag_it():
    # epochs 1-2, then the run restarts at epoch 2 and continues to 3
    csv = (b"epoch,step,loss,acc\n1,1,2.0,0.1\n1,2,1.8,0.2\n2,1,1.6,0.3\n2,2,1.5,0.4\n"
           b"2,1,1.55,0.31\n2,2,1.45,0.41\n3,1,1.2,0.5\n3,2,1.1,0.6\n")
    log = read_log(csv, "r.csv")
    assert log.frame["global_step"].tolist() == [1, 2, 3, 4, 5, 6]
    assert log.frame["loss"].tolist() == [2.0, 1.8, 1.55, 1.45, 1.2, 1.1]
    assert any(f.startswith("restarted steps") for f in log.flags)


def test_duplicated_rows_are_dropped_and_flagged():
    csv = b"step,loss\n1,2.0\n2,1.0\n2,1.0\n3,0.5\n"
    log = read_log(csv, "r.csv")
    assert log.frame["global_step"].tolist() == [1, 2, 3]
    assert any(f.startswith("duplicated steps: 1 rows") for f in log.flags)


def test_a_few_nan_and_inf_rows_are_skipped_and_counted():
    csv = b"step,loss\n1,2.0\n2,nan\n3,inf\n4,0.5\n5,0.4\n6,0.3\n"
    log = read_log(csv, "r.csv")
    assert log.frame["global_step"].tolist() == [1, 4, 5, 6]
    assert any("skipped 2 of 6 rows" in f and "1 inf" in f for f in log.flags)


def test_semicolon_and_tab_separated_files_are_read():
    assert read_log(b"step;loss\n1;2.0\n2;1.0\n", "r.csv").frame["loss"].tolist() == [2.0, 1.0]
    assert read_log(b"step\tloss\n1\t2.0\n2\t1.0\n", "r.tsv").frame["loss"].tolist() == [2.0, 1.0]


def test_role_override_with_unknown_column_names_the_columns():
    with pytest.raises(LogFormatError,
                       match=r"r\.csv: expected a column named 'nope' for loss; the columns are step, loss"):
        read_log(b"step,loss\n1,2\n2,1\n", "r.csv", roles={"loss": "nope"})


def test_detect_format_and_roles():
    assert detect_format(["epoch", "step", "loss", "acc"]) == "course"
    assert detect_format(["progress", "iteration", "metric", "grad_sqr", "grad_var"]) == "metric-trace"
    roles = detect_roles(["epoch", "step", "train_loss", "val_loss", "train_acc", "val_acc"], split="val")
    assert roles.loss == "val_loss" and roles.acc == "val_acc"


def test_epoch_of_step():
    # ceil(782/391) = 2, ceil(783/391) = 3
    assert epoch_of_step(782, 391) == 2 and epoch_of_step(783, 391) == 3 and epoch_of_step(5, None) is None


def test_builtin_logs_all_read():
    paths = sorted((DATA / "logs").glob("*.csv"))
    assert len(paths) >= 12
    for p in paths:
        log = read_log_file(p)
        assert log.steps_per_epoch and log.n_points > 100 and log.fmt == "course"


# ----------------------------------------------------------------------------- bad input
BAD = [
    (b"", "empty"),
    (b"   \n\n", "empty"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary data"),
    (b"PK\x03\x04\x14\x00\x06\x00", "ZIP archive"),
    ("epoch,step,loss\n1,1,0.5\n".encode("utf-16-le"), "UTF-16 text without a byte-order mark"),
    (b"epoch,step,loss,acc\n1,1,\xe9t\xe9,0.5\n", "expected UTF-8 text; got the byte 0xe9"),
    (b'{"epoch": 1, "loss": 0.5}\n', "got JSON"),
    (b"just some words\nno commas here\n", "expected a CSV with at least a step and a loss column"),
    (b"epoch,step,acc\n1,1,0.5\n1,2,0.6\n", "expected a loss column"),
    (b"epoch,step,loss,acc\n", "header but no data rows"),
    (b"epoch,step,loss,acc\n1,1,abc,0.5\n1,2,def,0.6\n", "expected numbers in column 'loss'"),
    (b"epoch,step,loss,acc\n1,1,nan,0.5\n1,2,nan,0.6\n", "expected numbers in column 'loss'"),
    (b"epoch,step,loss,acc\n1,1,nan,0.5\n1,2,nan,0.6\n1,3,,0.6\n1,4,1.0,", "well-formed|expected mostly"),
    (b"epoch,step,loss\nx,y,z\n", "expected numbers in column 'epoch'"),
    (b"epoch,step,loss,acc\n1,1,inf,0.5\n1,2,inf,0.6\n1,3,1.0,0.6\n", "mostly finite numbers; 2 of 3"),
    (b"epoch,step,loss,acc\n1,1,-0.5,0.5\n1,2,0.4,0.6\n", "expected loss >= 0 in column 'loss'; found 1 negative"),
    (b"epoch,step,loss,acc\n1,-1,0.5,0.5\n1,2,0.4,0.6\n", "expected step >= 0"),
    (b"epoch,step,loss,acc\n1,1,0.5,150\n1,2,0.4,160\n", "expected accuracy in \\[0, 1\\]"),
    (b"a,b\n1,2,3,4\n5,6,7,8,9\n", "expected 2 fields per row as in the header; line 2 has 4"),
]


@pytest.mark.parametrize("data,message", BAD, ids=[m.split("|")[0][:30] for _, m in BAD])
def test_bad_input_names_the_file_and_the_problem(data, message):
    with pytest.raises(LogFormatError, match=rf"^bad_run\.csv: .*({message})") as info:
        read_log(data, "bad_run.csv")
    assert info.value.source == "bad_run.csv"


def test_over_the_size_limit_is_refused_with_the_limit():
    with pytest.raises(LogFormatError, match=r"big\.csv: expected at most 1 MB; got 1\.5 MB"):
        read_log(b"step,loss\n" + b"1,1.0\n" * 262_144, "big.csv", max_bytes=2**20)


def test_missing_file_is_a_log_format_error(tmp_path):
    with pytest.raises(LogFormatError, match="nothere.csv: cannot be read"):
        read_log_file(tmp_path / "nothere.csv")


def test_bad_steps_per_epoch_is_refused():
    with pytest.raises(LogFormatError, match="steps per epoch to be an integer >= 1; got 0"):
        read_log(course_csv(), "r.csv", steps_per_epoch=0)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400))
def test_arbitrary_bytes_raise_only_log_format_error(data):
    try:
        log = read_log(data, "fuzz.csv")
    except LogFormatError as exc:
        assert str(exc).startswith("fuzz.csv: ")
    else:
        assert log.n_points >= 1


@settings(max_examples=200, deadline=None)
@example(rows=[[1, 0, 0, 0], [2, 1, 0, 0], [4.421507323796443e-214, 1, 0, 0]])  # found by CI: an epoch that is 0
@example(rows=[[1, 0, 0, 0], [2, 1, 0, 0], [4.421507323796443e-214, 0, 0, 0]])  # after the 1-based shift
@given(st.lists(st.lists(st.one_of(st.integers(-5, 50), st.floats(allow_nan=True, allow_infinity=True),
                                   st.sampled_from(["", "x", "nan", "1e400"])), min_size=4, max_size=4),
                min_size=1, max_size=30))
def test_arbitrary_tables_in_course_format_raise_only_log_format_error(rows):
    text = "epoch, step, loss, acc\n" + "\n".join(",".join(str(v) for v in row) for row in rows) + "\n"
    try:
        log = read_log(text.encode(), "fuzz.csv")
    except LogFormatError as exc:
        assert str(exc).startswith("fuzz.csv: ")
    else:
        assert np.isfinite(log.frame["loss"]).all() and (log.frame["loss"] >= 0).all()
        assert log.frame["global_step"].is_monotonic_increasing


def test_invalid_utf8_far_into_a_large_file_is_still_refused():
    body = "".join(f"{i},{1.0 / i:.6f}\n" for i in range(1, 20_000)).encode()
    assert len(body) > 65536
    data = b"step,loss\n" + body + b"20000,\xff\xfe\n"
    with pytest.raises(LogFormatError, match=r"^big\.csv: expected UTF-8 text; got the byte 0xff"):
        read_log(data, "big.csv")
