"""Files and folders into the library: what a folder walk picks, its bounds, and hostile input."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

from core.library import Library, add_builtin, add_paths
from core.library.sources import collect_sources
from tests.core.library.helpers import course_csv, write_events

ROOT = Path(__file__).resolve().parents[3]
BAD = ROOT / "tests" / "data" / "bad_inputs"
_spec = importlib.util.spec_from_file_location("make_corpus", BAD / "make_corpus.py")
_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_corpus)
CORPUS = _corpus.CORPUS
MLLOG = ROOT / "data" / "batch_logs" / "resnet14_AMD EPYC-64.txt"


def _tree(tmp_path: Path) -> Path:
    top = tmp_path / "logs"
    (top / "cifar" / "v100").mkdir(parents=True)
    (top / "cifar" / "v100" / "resnet20_Tesla V100.csv").write_bytes(course_csv())
    (top / "cifar" / "resnet32_Tesla V100.tsv").write_bytes(course_csv(seed=1).replace(b", ", b"\t"))
    shutil.copy(MLLOG, top / "cifar" / "batch-64.txt")
    (top / "README.txt").write_text("how these runs were made\n")
    (top / ".git").mkdir()
    (top / ".git" / "config.csv").write_bytes(course_csv(seed=2))
    write_events(top / "tb" / "resnet56_NVIDIA A100", [{"step": k, "loss": 2.0 / k} for k in range(1, 4)])
    return top


def test_a_folder_walk_finds_logs_mllog_files_and_tensorboard_runs(tmp_path):
    found = collect_sources([_tree(tmp_path)])
    assert [(s.name, s.kind) for s in found.sources] == [
        ("cifar/batch-64.txt", "file"), ("cifar/resnet32_Tesla V100.tsv", "file"),
        ("cifar/v100/resnet20_Tesla V100.csv", "file"), ("tb/resnet56_NVIDIA A100", "tfevents")]
    assert not found.errors                          # README.txt (no MLLOG events) and .git/ left alone


def test_a_folder_is_added_with_its_metadata_and_readding_changes_nothing(db, tmp_path):
    lib = Library(db)
    top = _tree(tmp_path)
    report = add_paths(lib, [top], tags=["team"], dataset="cifar10")
    assert (report.n_added, report.errors) == (4, ())
    table = lib.runs().set_index("source")
    assert table.loc["cifar/v100/resnet20_Tesla V100.csv", ["model", "gpu", "dataset", "tags"]].tolist() == \
        ["resnet20", "Tesla V100", "cifar10", "team"]
    assert table.loc["cifar/v100/resnet20_Tesla V100.csv", "n_params"] == 269722     # CIFAR ResNet-20 (core.models)
    assert table.loc["cifar/batch-64.txt", "global_batch"] == 64 and table.loc["cifar/batch-64.txt", "fmt"] == "mllog"
    assert table.loc["tb/resnet56_NVIDIA A100", "fmt"] == "tfevents"
    again = add_paths(lib, [top])
    assert (again.n_added, again.n_present) == (0, 4)


def test_command_line_metadata_replaces_the_file_names(db, tmp_path):
    path = tmp_path / "metrics.csv"
    path.write_bytes(course_csv())
    lib = Library(db)
    add_paths(lib, [path], model="resnet44", gpu="NVIDIA H100", global_batch=512)
    row = lib.runs().iloc[0]
    assert (row["model"], row["depth"], row["gpu"], row["global_batch"]) == ("resnet44", 44, "NVIDIA H100", 512)


def test_every_bad_file_is_refused_by_name_and_the_good_ones_are_added(db, tmp_path):
    lib = Library(db)
    good = tmp_path / "resnet20_Tesla V100.csv"
    good.write_bytes(course_csv())
    bad = sorted(p for p in BAD.glob("*.csv") if p.name in CORPUS)    # UNFIT and READABLE: read as tables
    report = add_paths(lib, [*bad, good])
    assert report.n_added == 1 and lib.runs()["source"].tolist() == ["resnet20_Tesla V100.csv"]
    refused = {source for source, _ in report.errors}
    assert refused == {p.name for p in bad}
    for source, message in report.errors:
        assert message.startswith(f"{source}: ") and "\n" not in message


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs and symlinks (POSIX)")
def test_a_walk_skips_symlink_loops_and_special_files_and_stops_at_its_bound(tmp_path):
    top = tmp_path / "logs"
    top.mkdir()
    for i in range(5):
        (top / f"run{i}_Tesla V100.csv").write_bytes(course_csv(seed=i))
    (top / "loop").symlink_to(top, target_is_directory=True)       # a loop: never followed
    (top / "linked.csv").symlink_to(top / "run0_Tesla V100.csv")
    os.mkfifo(top / "pipe.csv")                                     # would block a reader forever
    found = collect_sources([top])
    assert [s.name for s in found.sources] == [f"run{i}_Tesla V100.csv" for i in range(5)]
    assert found.notes == ("2 symbolic link(s) not followed", "1 device(s), pipe(s) or socket(s) skipped")
    bounded = collect_sources([top], max_files=3)
    assert len(bounded.sources) == 3
    assert "stopped collecting: more than 3 runs" in bounded.errors[0][1]


def test_a_path_that_does_not_exist_is_named(db, tmp_path):
    lib = Library(db)
    report = add_paths(lib, [tmp_path / "nope"])
    assert report.errors[0][0] == str(tmp_path / "nope") and "cannot be read" in report.errors[0][1]
    assert not Library(db).exists()        # nothing to write: the library is not created


def test_the_built_in_data_goes_in_once_tagged_by_set(db):
    lib = Library(db)
    first = add_builtin(lib)
    # 12 MNIST-1D + 13 Pollux + 7 batch + 26 MLPerf ResNet + 7 MLPerf Llama 3.1 8B + 4 speedrun + 10 schedule curves
    assert first.n_added == 79 and not first.errors
    assert len(lib.runs("tag=mlperf")) == 26 and len(lib.runs("tag=mnist1d")) == 12
    assert len(lib.runs("tag=mlperf_llama8b")) == 7 and len(lib.runs("tag=speedrun")) == 4
    assert len(lib.runs("tag=lr_schedules")) == 10
    assert add_builtin(lib).n_present == 79


def test_keras_train_and_validation_folders_are_one_run_and_its_val_twin(db, tmp_path):
    run = tmp_path / "tb" / "resnet20_Tesla V100"
    write_events(run / "train", [{"step": k, "loss": 2.0 / k, "acc": 0.1 * k} for k in range(1, 4)])
    write_events(run / "validation", [{"step": k, "loss": 3.0 / k, "acc": 0.1 * k} for k in range(1, 4)])
    lib = Library(db)
    report = add_paths(lib, [tmp_path / "tb"])
    assert (report.n_added, report.errors) == (2, ())
    table = lib.runs().set_index("source")[["model", "gpu", "split"]]
    assert table.loc["resnet20_Tesla V100"].tolist() == ["resnet20", "Tesla V100", "train"]
    assert table.loc["resnet20_Tesla V100_val"].tolist() == ["resnet20", "Tesla V100", "val"]
    one = collect_sources([next((run / "validation").iterdir())])      # one event file given by name
    assert [s.name for s in one.sources] == ["resnet20_Tesla V100_val"]
