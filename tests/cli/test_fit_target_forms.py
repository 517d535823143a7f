"""Issue 34: ``--target acc>=A``, ``--target-acc A`` and a log's own declaration are one target, on the verbs
whose target plumbing goes through ``args.target`` (fit, batch-scaling, library list): identical outputs."""

from __future__ import annotations

import io

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.cli import main
from core.datasets import DATA_DIR

LOGS = [str(p) for p in sorted((DATA_DIR / "logs").glob("resnet2*.csv"))[:2]]
SPEEDRUN = str(sorted((DATA_DIR / "llm" / "nanogpt_speedrun" / "track_1_short").glob("*/*.txt"))[0])
POLLUX = [str(DATA_DIR / "pollux_traces" / "cifar10" / f"validation-{b}.csv") for b in (128, 256, 512)]
MLPERF = [str(p) for p in sorted((DATA_DIR / "mlperf_v3.0_resnet50" / "NVIDIA").glob("dgxh100_n*_ngc23.04_mxnet"))
          [:3]]


def _out(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    got = capsys.readouterr()
    return code, got.out, got.err


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hundredths=st.integers(min_value=50, max_value=99))
def test_fit_target_and_target_acc_are_the_same_target(capsys, hundredths):
    value = f"{hundredths / 100:g}"
    spec = _out(["fit", *LOGS, "--target", f"acc>={value}"], capsys)
    acc = _out(["fit", *LOGS, "--target-acc", value], capsys)
    assert spec == acc and spec[0] == 0
    table = pd.read_csv(io.StringIO(spec[1]))
    assert table["target"].tolist() == [hundredths / 100] * 2 and table["target_acc"].tolist() == [hundredths / 100] * 2


def test_fit_a_logs_own_declaration_is_the_target_given_by_hand(capsys):
    own = _out(["fit", SPEEDRUN], capsys)
    given_ = _out(["fit", SPEEDRUN, "--target", "val_loss<=3.28"], capsys)
    assert own == given_ and own[0] == 0
    row = pd.read_csv(io.StringIO(own[1])).iloc[0]
    assert (row["metric"], row["direction"], row["target"]) == ("val_loss", "<=", 3.28) and pd.isna(row["target_acc"])


def test_batch_scaling_target_forms_and_the_logs_declaration(capsys):
    spec = _out(["batch-scaling", *POLLUX, "--target", "acc>=0.93"], capsys)
    acc = _out(["batch-scaling", *POLLUX, "--target-acc", "0.93"], capsys)
    assert spec == acc and spec[0] == 0
    logs = [f"{d}/result_{s}.txt" for d in MLPERF for s in (0, 1)]
    own = _out(["batch-scaling", *logs], capsys)
    given_ = _out(["batch-scaling", *logs, "--target", "eval_accuracy>=0.759"], capsys)
    assert own == given_ and len(pd.read_csv(io.StringIO(own[1])))


def test_library_list_reached_target_follows_target_acc(capsys, tmp_path):
    db = str(tmp_path / "lib.duckdb")
    assert main(["library", "--db", db, "add", *LOGS]) == 0
    capsys.readouterr()
    tables = {}
    for argv in ([], ["--target-acc", "0.5"], ["--target-acc", "0.999"]):
        assert main(["library", "--db", db, "list", *argv]) == 0
        tables[tuple(argv)] = pd.read_csv(io.StringIO(capsys.readouterr().out))
    default = tables[()]
    assert default["reached_target"].tolist() == (default["best_acc"] >= 0.92).tolist()
    assert tables[("--target-acc", "0.5")]["reached_target"].all()
    assert not tables[("--target-acc", "0.999")]["reached_target"].any()
