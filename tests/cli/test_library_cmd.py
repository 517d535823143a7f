"""``python -m core library ...`` on a temporary library file: every verb, and ``--from-library`` of fit,
calibrate, backtest and plan."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from core.cli import main
from core.library import Library
from core.logs import read_log
from tests.core.library.helpers import course_csv

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "data" / "logs"


def _csv(capsys) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(capsys.readouterr().out))


@pytest.fixture
def db(make_db, capsys) -> str:
    """The 12 built-in MNIST-1D logs, added in name order: resnet14 = runs 1-2, resnet20 = 3-4, ..., resnet8 = 11-12
    (in a library of each kind: a DuckDB file, a PostgreSQL database)."""
    path = make_db("lib")
    assert main(["library", "add", str(LOGS), "--tag", "mnist1d", "--dataset", "mnist1d", "--db", path]) == 0
    capsys.readouterr()
    return path


def test_add_prints_one_row_per_run_and_readding_is_a_no_op(make_db, capsys):
    path = make_db("lib")
    assert main(["library", "--db", path, "add", str(LOGS)]) == 0
    out = capsys.readouterr()
    table = pd.read_csv(io.StringIO(out.out))
    assert len(table) == 12 and (table["status"] == "added").all() and table["run_id"].tolist() == list(range(1, 13))
    assert "12 run(s) added, 0 already in the library." in out.err
    assert main(["library", "add", str(LOGS / "resnet8_Intel Xeon Processor.csv"), "--db", path]) == 0
    again = _csv(capsys)
    assert again[["status", "run_id"]].values.tolist() == [["present", 11]]


def test_add_refuses_bad_files_by_name_and_adds_the_rest(make_db, tmp_path, capsys):
    good = tmp_path / "resnet20_Tesla V100.csv"
    good.write_bytes(course_csv())
    bad = tmp_path / "broken.csv"
    bad.write_bytes(b"\x00\x01\x02")
    assert main(["library", "add", str(good), str(bad), "--db", make_db("lib")]) == 2
    out = capsys.readouterr()
    table = pd.read_csv(io.StringIO(out.out))
    assert table.set_index("source")["status"].to_dict() == {"resnet20_Tesla V100.csv": "added",
                                                             "broken.csv": "refused"}
    assert "broken.csv: expected a CSV text file; got binary data" in out.err


def test_list_filters_and_says_which_runs_reached_the_target(db, capsys):
    assert main(["library", "list", "--model", "resnet20", "--model", "resnet32", "--db", db,
                 "--target-acc", "0.96"]) == 0
    table = _csv(capsys)
    assert table["source"].tolist() == ["resnet20_Intel Xeon Processor.csv", "resnet20_Intel Xeon Processor_val.csv",
                                        "resnet32_Intel Xeon Processor.csv", "resnet32_Intel Xeon Processor_val.csv"]
    # best epoch-level accuracies of the built-in runs: 0.97625, 0.957, 0.99425, 0.962
    assert table["reached_target"].tolist() == [True, False, True, True]
    assert main(["library", "list", "--filter", "model=resnet8,split=val", "--db", db]) == 0
    assert _csv(capsys)["source"].tolist() == ["resnet8_Intel Xeon Processor_val.csv"]
    assert main(["library", "list", "--filter", "colour=red", "--db", db]) == 2
    assert "FILTER: expected key=value terms" in capsys.readouterr().err


def test_show_prints_metadata_or_the_series(db, capsys):
    assert main(["library", "show", "resnet14_Intel Xeon Processor.csv", "--db", db]) == 0
    fields = _csv(capsys).set_index("field")["value"]
    assert fields["model"] == "resnet14" and fields["n_params"] == "61210" and fields["steps_per_epoch"] == "63"
    assert fields["roles"] == ('{"epoch": "epoch", "step": "step", "loss": "loss", "acc": "acc", "time": "time", '
                               '"lr": null}')
    assert main(["library", "show", "1", "--series", "--db", db]) == 0
    series = _csv(capsys)
    assert list(series.columns) == ["global_step", "epoch", "loss", "acc", "time_s", "lr"] and len(series) == 1512


@pytest.mark.slow
def test_rm_restore_tag_export_import_vacuum_and_log(db, make_db, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TTA_LIBRARY_ACTOR", "alice")
    assert main(["library", "tag", "1", "2", "--add", "keep", "--db", db]) == 0
    assert "tagged 2 run(s)" in capsys.readouterr().err
    assert main(["library", "rm", "3", "4", "nope", "--db", db]) == 2
    err = capsys.readouterr().err
    assert "removed 2 run(s): #3, #4 (restorable for 30 days: python -m core library restore 3 4)" in err
    assert "nope: expected a run id" in err
    assert main(["library", "list", "--removed", "--db", db]) == 0
    assert _csv(capsys)["run_id"].tolist() == [3, 4]
    assert main(["library", "restore", "4", "7", "--db", db]) == 2            # 7 was never removed
    err = capsys.readouterr().err
    assert "restored 1 run(s): #4" in err and "#7: expected a removed run kept for restoring" in err
    assert main(["library", "export", str(tmp_path / "out"), "--filter", "tag=keep", "--db", db]) == 0
    assert "exported 2 run(s)" in capsys.readouterr().err
    other = make_db("other")
    assert main(["library", "import", str(tmp_path / "out"), "--db", other]) == 0
    assert _csv(capsys)["status"].tolist() == ["added", "added"]
    assert Library(other).runs()["tags"].tolist() == ["keep,mnist1d", "keep,mnist1d"]
    assert main(["library", "vacuum", "--db", db]) == 0                      # #3 removed just now: kept
    err = capsys.readouterr().err
    assert "bytes before" in err and "purged" not in err
    assert main(["library", "vacuum", "--keep-days", "0", "--db", db]) == 0
    assert "purged 1 removed run(s) for good: #3" in capsys.readouterr().err
    assert len(Library(db).runs()) == 11 and Library(db).restore([3]) == []
    assert main(["library", "log", "--db", db]) == 0
    log = _csv(capsys)
    assert log["action"].tolist()[:3] == ["purge", "restore", "remove"] and set(log["action"][3:]) == {"add"}
    added = sorted(int(i) for ids in log["run_ids"][3:] for i in str(ids).split(","))
    assert added == list(range(1, 13))                  # the 12 logs, in one add event per batch written
    assert log["run_ids"].astype(str).tolist()[:3] == ["3", "4", "3,4"] and log["actor"].tolist()[:3] == ["alice"] * 3
    assert main(["library", "log", "--db", other]) == 0
    imported = _csv(capsys)
    assert imported["action"].tolist() == ["import"] and imported["run_ids"].tolist() == ["1,2"]
    assert str(tmp_path / "out") in imported["detail"][0]


def test_a_memory_library_lives_for_one_command(capsys):
    assert main(["library", "add", str(LOGS / "resnet8_Intel Xeon Processor.csv"), "--db", ":memory:"]) == 0
    assert _csv(capsys)["status"].tolist() == ["added"]
    assert main(["library", "list", "--db", ":memory:"]) == 0
    assert _csv(capsys).empty


def test_the_default_library_is_the_environment_variables(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TTA_LIBRARY_DB", str(tmp_path / "env.duckdb"))
    assert main(["library", "add", str(LOGS / "resnet8_Intel Xeon Processor.csv")]) == 0
    assert (tmp_path / "env.duckdb").is_file()


def test_a_speed_table_is_added_and_planned_with(make_db, tmp_path, capsys):
    db = make_db("lib")
    pollux = ROOT / "data" / "pollux_traces" / "cifar10" / "scalability.csv"
    copy = tmp_path / "cifar10_speeds.csv"
    shutil.copy(pollux, copy)
    assert main(["library", "add", "--speed", str(copy), "--db", db]) == 0
    assert _csv(capsys)["status"].tolist() == ["added"]
    assert main(["plan", "--steps", "10000", "--batch", "512", "--mode", "allreduce", "--workers", "1,2,4",
                 "--theta", "fit:library:cifar10_speeds.csv", "--db", db]) == 0
    from_library = _csv(capsys)
    assert main(["plan", "--steps", "10000", "--batch", "512", "--mode", "allreduce", "--workers", "1,2,4",
                 "--theta", f"fit:{copy}"]) == 0
    pd.testing.assert_frame_equal(from_library, _csv(capsys))        # the same table, the same plan


def test_fit_from_library_prints_the_fit_table_of_those_runs(db, capsys):
    assert main(["fit", "--from-library", "model=resnet20", "--db", db]) == 0
    out = capsys.readouterr()
    table = pd.read_csv(io.StringIO(out.out))
    assert table["file"].tolist() == ["resnet20_Intel Xeon Processor.csv (library #3)",
                                      "resnet20_Intel Xeon Processor_val.csv (library #4)"]
    assert "2 fitted now, 0 fitted before" in out.err
    assert main(["fit", str(LOGS / "resnet20_Intel Xeon Processor.csv")]) == 0
    from_file = _csv(capsys)
    numbers = ["b0", "b1", "b2", "r2", "step_to_target", "epoch_to_target"]
    assert table.loc[0, numbers].tolist() == from_file.loc[0, numbers].tolist()   # same run, same fit
    assert main(["fit", "--from-library", "model=resnet20", "--db", db]) == 0
    assert "0 fitted now, 2 fitted before" in capsys.readouterr().err


@pytest.mark.slow
def test_calibrate_backtest_and_plan_take_runs_from_the_library(db, capsys):
    assert main(["calibrate", "--from-library", "split=train", "--holdout", "resnet56", "--target-acc", "0.9",
                 "--db", db]) == 0
    cal = _csv(capsys)
    assert cal["model"].unique().tolist() == ["resnet56"] and cal["epoch_pred"].notna().all()
    assert main(["backtest", "--from-library", "model=resnet20,split=train", "--observe", "0.5", "--db", db]) == 0
    bt = _csv(capsys)
    assert bt["file"].tolist() == ["resnet20_Intel Xeon Processor.csv (library #3)"]
    assert main(["plan", "--from-library", "model=resnet20,split=train", "--batch", "64", "--ps", "2",
                 "--workers", "1:2", "--db", db]) == 0
    out = capsys.readouterr()
    plan = pd.read_csv(io.StringIO(out.out))
    assert "steps from resnet20_Intel Xeon Processor.csv (library #3): 945 (measured)" in out.err
    assert main(["plan", "--steps", "945", "--batch", "64", "--ps", "2", "--workers", "1:2"]) == 0
    pd.testing.assert_frame_equal(plan, _csv(capsys))                 # 945 measured steps: the same plan
    assert main(["plan", "--from-library", "model=resnet20", "--steps", "5", "--db", db]) == 2
    assert "one of them" in capsys.readouterr().err


def test_plan_from_several_runs_uses_their_median_and_range(db, capsys):
    assert main(["plan", "--from-library", "split=train,model=resnet20,model=resnet32,model=resnet44", "--batch",
                 "64", "--ps", "2", "--workers", "1", "--db", db]) == 0
    out = capsys.readouterr()
    plan = pd.read_csv(io.StringIO(out.out))
    steps = sorted(int(line.split(": ")[1].split(" ")[0].replace(",", "")) for line in out.err.splitlines()
                   if line.startswith("steps from"))
    assert len(steps) == 3
    ratio = plan["time_s"][0] / steps[1]                          # time is proportional to steps
    assert plan["time_s_low"][0] == pytest.approx(ratio * steps[0]) and \
        plan["time_s_high"][0] == pytest.approx(ratio * steps[2])


def test_the_command_runs_as_a_program(tmp_path):
    done = subprocess.run([sys.executable, "-m", "core", "library", "list", "--db", str(tmp_path / "none.duckdb")],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0 and done.stdout.startswith("run_id,source,model,")
    assert not (tmp_path / "none.duckdb").exists()


def test_a_malformed_timeout_setting_gives_one_line_and_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TTA_LIBRARY_TIMEOUT", "abc")
    assert main(["library", "list", "--db", str(tmp_path / "lib.duckdb")]) == 2
    out = capsys.readouterr()
    assert out.out == "" and len(out.err.strip().splitlines()) == 1 and "TTA_LIBRARY_TIMEOUT" in out.err


def test_a_missing_path_is_named_on_stderr(tmp_path, capsys):
    missing = tmp_path / "no_such_log.csv"
    assert main(["library", "add", str(missing), "--db", str(tmp_path / "lib.duckdb")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith(f"{missing}: ") or err[0].startswith("no_such_log.csv: "), err


def test_import_reads_the_zip_the_library_page_exports(make_db, tmp_path, capsys):
    """The round trip of issue 36: the page's Export (``export_zip``) imported as it is, no unzipping."""
    from core.library import export_zip, fit_library

    source = Library(make_db("source"))
    for i in range(2):
        data = course_csv(seed=i)
        source.add(read_log(data, f"resnet20_V100-{i}.csv"), data=data, tags=["zip"])
    fit_library(source)
    archive = tmp_path / "library_export.zip"
    archive.write_bytes(export_zip(source))
    fresh = tmp_path / "fresh.duckdb"
    done = subprocess.run([sys.executable, "-m", "core", "library", "import", str(archive), "--db", str(fresh)],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr
    assert pd.read_csv(io.StringIO(done.stdout))["status"].tolist() == ["added", "added"]
    assert "2 run(s) added, 0 already in the library." in done.stderr
    imported = Library(fresh)
    assert [log.fingerprint() for log in imported.load(named=False)] == \
        [log.fingerprint() for log in source.load(named=False)]
    assert imported.runs()["tags"].tolist() == ["zip", "zip"] and imported.counts()["fits"] == 2


def test_import_refuses_a_zip_reaching_out_of_itself_with_one_line(tmp_path, capsys):
    import zipfile

    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("../../manifest.json", '{"format": "tta-planner-library-export"}')
    assert main(["library", "import", str(archive), "--db", str(tmp_path / "lib.duckdb")]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.strip().splitlines() == [f"{archive}: expected member paths inside the archive; "
                                            "'../../manifest.json' points outside it. Nothing was imported."]
    assert not (tmp_path / "lib.duckdb").exists()
