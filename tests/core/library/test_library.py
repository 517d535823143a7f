"""The run library: runs come back exactly as added, content is stored once, filters, tags, removal, cancel."""

from __future__ import annotations

import pandas as pd
import pytest

from core.datasets import builtin_log_files
from core.errors import InputError, LibraryError
from core.library import Library, PendingRun, RunFilter, add_paths, check_tags, content_hash, with_reached
from core.logs import read_log, read_log_file
from core.runs import find_target_crossing
from core.targets import accuracy_target
from tests.core.library.helpers import course_csv, write_events


def _add_csv(lib: Library, name: str, data: bytes, **kw):
    return lib.add(read_log(data, name), data=data, **kw)


def test_a_run_comes_back_exactly_as_it_was_added(db):
    lib = Library(db)
    data = course_csv()
    log = read_log(data, "resnet20_Tesla V100-SXM2-16GB.csv")
    result = lib.add(log, data=data, tags=["baseline"], dataset="cifar10")
    back = lib.get(result.run_id)
    pd.testing.assert_frame_equal(back.frame, log.frame, check_exact=True)
    assert (back.source, back.meta, back.roles, back.fmt, back.steps_per_epoch, back.granularity, back.flags,
            back.columns) == (log.source, log.meta, log.roles, log.fmt, log.steps_per_epoch, log.granularity,
                              log.flags, log.columns)
    assert back.fingerprint() == log.fingerprint()


@pytest.mark.parametrize("set_key", ["mnist1d", "pollux", "mnist1d_batch", "mlperf", "mlperf_llama8b", "speedrun"])
def test_every_built_in_format_round_trips(db, set_key):
    lib = Library(db)
    name, path = builtin_log_files(set_key)[0]
    log = read_log_file(path, source=name)
    run_id = lib.add(log, data=path.read_bytes()).run_id
    back = lib.get(run_id)
    assert back.fingerprint() == log.fingerprint() and back.meta == log.meta
    if set_key == "mlperf":                       # the LARS decay the log declares (schema version 3)
        assert back.meta.schedule is not None and back.meta.schedule.startswith("poly:")


def test_a_tensorboard_run_round_trips(db, tmp_path):
    write_events(tmp_path / "tb" / "resnet20_Tesla V100", [{"step": k, "loss": 1.0 / k, "acc": 0.1 * k}
                                                           for k in range(1, 6)])
    lib = Library(db)
    report = add_paths(lib, [tmp_path / "tb"])
    assert report.n_added == 1 and not report.errors
    back = lib.get(report.results[0].run_id)
    assert back.fmt == "tfevents" and back.meta.model == "resnet20" and back.meta.gpu == "Tesla V100"
    assert back.frame["loss"].tolist() == pytest.approx([1.0, 0.5, 1 / 3, 0.25, 0.2], rel=1e-6)


def test_identical_content_is_stored_once_and_readding_says_which_run_holds_it(db):
    lib = Library(db)
    data = course_csv()
    first = _add_csv(lib, "resnet20_V100.csv", data)
    again = _add_csv(lib, "renamed_copy.csv", data)        # same bytes, another name: the same content
    assert first.added and not again.added and again.run_id == first.run_id
    assert again.message == f"renamed_copy.csv: already in the library as run #{first.run_id} (same content); " \
                            "nothing added."
    assert len(lib.runs()) == 1 and lib.runs()["content_hash"][0] == content_hash(data)


def test_reading_a_library_that_does_not_exist_creates_nothing(tmp_path):
    lib = Library(tmp_path / "not" / "yet" / "lib.duckdb")
    assert lib.runs().empty and list(lib.runs().columns)[:3] == ["run_id", "source", "model"]
    assert lib.counts()["runs"] == 0 and lib.schema_version() == 0 and lib.known_hashes() == {}
    assert not (tmp_path / "not").exists()


def _four_runs(lib: Library) -> dict[str, int]:
    specs = {"resnet20_Tesla V100-128.csv": ("a",), "resnet20_NVIDIA A100-256.csv": ("a", "b"),
             "resnet32_Tesla V100-128.csv": (), "resnet32_Tesla V100_val-128.csv": ("b",)}
    return {name: _add_csv(lib, name, course_csv(seed=i), tags=tags).run_id
            for i, (name, tags) in enumerate(specs.items())}


@pytest.mark.parametrize(("text", "expected"), [
    ("", ["resnet20_Tesla V100-128.csv", "resnet20_NVIDIA A100-256.csv", "resnet32_Tesla V100-128.csv",
          "resnet32_Tesla V100_val-128.csv"]),
    ("model=resnet20", ["resnet20_Tesla V100-128.csv", "resnet20_NVIDIA A100-256.csv"]),
    ("gpu=v100", ["resnet20_Tesla V100-128.csv", "resnet32_Tesla V100-128.csv", "resnet32_Tesla V100_val-128.csv"]),
    ("gpu=v100,model=resnet20", ["resnet20_Tesla V100-128.csv"]),
    ("tag=b", ["resnet20_NVIDIA A100-256.csv", "resnet32_Tesla V100_val-128.csv"]),
    ("tag=a,tag=b", ["resnet20_Tesla V100-128.csv", "resnet20_NVIDIA A100-256.csv",
                     "resnet32_Tesla V100_val-128.csv"]),
    ("batch=256", ["resnet20_NVIDIA A100-256.csv"]),
    ("split=val", ["resnet32_Tesla V100_val-128.csv"]),
    ("source=A100", ["resnet20_NVIDIA A100-256.csv"]),
    ("model=resnet56", []),
])
def test_filters_select_the_runs_they_name(db, text, expected):
    lib = Library(db)
    _four_runs(lib)
    assert lib.runs(text)["source"].tolist() == expected
    assert [log.source for log in lib.load(text, named=False)] == expected


def test_a_filter_by_id_and_the_library_names_of_loaded_runs(db):
    lib = Library(db)
    ids = _four_runs(lib)
    run_id = ids["resnet32_Tesla V100-128.csv"]
    assert [log.source for log in lib.load(RunFilter.of(id=run_id))] == \
        [f"resnet32_Tesla V100-128.csv (library #{run_id})"]


@pytest.mark.parametrize(("text", "message"), [
    ("model", "expected key=value terms"), ("color=red", "expected key=value terms"),
    ("batch=big", "expected a whole number for batch"), ("model=", "expected key=value terms")])
def test_a_malformed_filter_says_what_to_write(text, message):
    with pytest.raises(InputError, match=message):
        RunFilter.parse(text)


def test_tags_are_added_and_removed_and_checked(db):
    lib = Library(db)
    ids = _four_runs(lib)
    both = [ids["resnet20_Tesla V100-128.csv"], ids["resnet32_Tesla V100-128.csv"]]
    assert lib.tag(both, ["sweep", " sweep "]) == 2
    assert lib.runs("tag=sweep")["run_id"].tolist() == both
    assert lib.tag([both[0]], ["sweep"], remove=True) == 1
    assert lib.runs("tag=sweep")["run_id"].tolist() == [both[1]]
    assert lib.runs(RunFilter.of(id=ids["resnet20_NVIDIA A100-256.csv"]))["tags"].tolist() == ["a,b"]
    with pytest.raises(InputError, match="without commas"):
        check_tags(["a,b"])
    with pytest.raises(InputError, match="at most 64"):
        check_tags(["x" * 65])


def test_removing_a_run_hides_it_until_restored_and_purging_deletes_its_series_fits_and_tags(db):
    from datetime import timedelta

    from core.library import fit_library

    lib = Library(db, actor="tester")
    ids = _four_runs(lib)
    fit_library(lib)
    before = lib.counts()
    victim = ids["resnet20_NVIDIA A100-256.csv"]
    assert lib.remove([victim, 999]) == [victim]
    assert victim not in lib.runs()["run_id"].tolist() and len(lib.runs()) == 3
    assert lib.removed()["run_id"].tolist() == [victim]
    with pytest.raises(InputError, match=f"run #{victim} is not there"):
        lib.get(victim)
    assert lib.counts() == before                                   # soft: nothing deleted yet
    assert lib.restore([victim, 999]) == [victim]
    assert lib.runs(RunFilter.of(id=victim))["tags"].tolist() == ["a,b"] and lib.get(victim).n_points == 60
    assert lib.remove([victim]) == [victim]
    assert lib.purge(keep_days=30) == []                            # removed just now: still kept
    later = pd.Timestamp.now("UTC").tz_localize(None).to_pydatetime() + timedelta(days=31)
    assert lib.purge(keep_days=30, now=later) == [victim]
    after = lib.counts()
    assert (after["runs"], after["fits"], after["run_tags"]) == (before["runs"] - 1, before["fits"] - 1,
                                                                 before["run_tags"] - 2)
    assert after["series"] == before["series"] - 60        # 6 epochs x 10 steps
    assert lib.restore([victim]) == []                                # purged: gone for good
    history = lib.history()
    assert history["action"].tolist()[:5] == ["purge", "remove", "restore", "remove", "add"]
    assert history["run_ids"].tolist()[:4] == [str(victim)] * 4 and set(history["actor"]) == {"tester"}


def test_adding_a_removed_run_again_restores_it(db):
    lib = Library(db)
    data = course_csv()
    first = _add_csv(lib, "resnet20_V100.csv", data)
    lib.remove([first.run_id])
    again = _add_csv(lib, "resnet20_V100.csv", data)
    assert (again.run_id, again.added, again.restored) == (first.run_id, True, True)
    assert again.message == f"resnet20_V100.csv: restored run #{first.run_id} (it had been removed)."
    assert lib.runs()["run_id"].tolist() == [first.run_id]


def test_a_run_is_found_by_id_hash_prefix_or_unique_name(db):
    lib = Library(db)
    ids = _four_runs(lib)
    digest = lib.runs(RunFilter.of(id=ids["resnet32_Tesla V100-128.csv"]))["content_hash"][0]
    assert lib.resolve(str(ids["resnet32_Tesla V100-128.csv"])) == ids["resnet32_Tesla V100-128.csv"]
    assert lib.resolve(digest[:10]) == ids["resnet32_Tesla V100-128.csv"]
    assert lib.resolve("resnet20_NVIDIA A100-256.csv") == ids["resnet20_NVIDIA A100-256.csv"]
    with pytest.raises(InputError, match="no such run"):
        lib.resolve("resnet99.csv")


def test_reached_target_agrees_with_the_target_crossing(db):
    lib = Library(db)
    for _name, path in builtin_log_files("mnist1d")[:6]:
        lib.add(read_log_file(path), data=path.read_bytes())
    logs = lib.load(named=False)
    for target in map(accuracy_target, (0.8, 0.9, 0.95, 0.97)):
        table = with_reached(lib.runs(), target)
        assert table["reached_target"].tolist() == [find_target_crossing(log, target).reached for log in logs]


def test_stopping_an_import_keeps_whole_runs_only(db):
    lib = Library(db)
    pending = [PendingRun(read_log(course_csv(seed=i), f"run{i}_V100.csv"), content_hash(course_csv(seed=i)))
               for i in range(6)]
    seen = []

    def progress(done, total, label):
        seen.append((done, total, label))
        return done < 2                                   # stop after the second run

    report = lib.add_runs(pending, progress=progress)
    assert report.cancelled and report.n_added == 2 and seen[-1] == (2, 6, "run1_V100.csv")
    table = lib.runs()
    assert table["source"].tolist() == ["run0_V100.csv", "run1_V100.csv"]
    assert lib.counts()["series"] == int(table["n_points"].sum()) == 120
    assert "Stopped before the end" in report.summary()


def test_a_file_that_is_not_a_library_is_refused_with_its_name(tmp_path):
    path = tmp_path / "notes.duckdb"
    path.write_text("just text\n" * 100)
    with pytest.raises(LibraryError, match="notes.duckdb: expected a library database"):
        Library(path).runs()
    with pytest.raises(LibraryError, match="notes.duckdb: expected a library database"):
        Library(path).add(read_log(course_csv(), "resnet20_V100.csv"), data=course_csv())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.duckdb"]     # no lock file left beside it
    assert path.read_text() == "just text\n" * 100                           # and the file untouched


def test_a_library_from_a_newer_version_is_refused(db):
    from datetime import datetime

    Library(db).add(read_log(course_csv(), "a.csv"), data=course_csv())
    with Library(db).store.transaction() as con:
        con.execute("INSERT INTO schema_version VALUES (99, ?, 'future')", [datetime(2030, 1, 1)])
    with pytest.raises(LibraryError, match="schema version 6 or older; the file is version 99"):
        Library(db).runs()


def test_another_programs_database_is_refused_without_writing(db, store_kind):
    """``library list`` on a database that is not a library (tables, no schema_version) must not add ours."""
    import hashlib
    from pathlib import Path

    if store_kind == "duckdb":
        import duckdb

        con = duckdb.connect(db)
        con.execute("CREATE TABLE notes (id INTEGER, body VARCHAR)")
        con.execute("INSERT INTO notes VALUES (1, 'keep me')")
        con.close()
        before = hashlib.sha256(Path(db).read_bytes()).hexdigest()
    else:
        import psycopg

        with psycopg.connect(db, autocommit=True) as con:
            con.execute("CREATE TABLE notes (id INTEGER, body VARCHAR)")
    for attempt in (lambda: Library(db).runs(),
                    lambda: Library(db).add(read_log(course_csv(), "resnet20_V100.csv"), data=course_csv())):
        with pytest.raises(LibraryError, match=r"expected a run library of this planner .* it holds other tables "
                                               r"\(notes\)\. Give another --db; nothing was written"):
            attempt()
    if store_kind == "duckdb":
        assert hashlib.sha256(Path(db).read_bytes()).hexdigest() == before
        assert sorted(p.name for p in Path(db).parent.iterdir()) == ["lib.duckdb"]     # not even a lock file
        con = duckdb.connect(db, read_only=True)
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        con.close()
    else:
        with psycopg.connect(db) as con:
            tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables WHERE "
                                                "table_schema = current_schema()").fetchall()}
    assert tables == {"notes"}


def test_filters_by_a_logged_metric_and_by_the_runs_own_target(db):
    """Speedrun logs declare val_loss<=3.28, MLLOG Llama 8B logs eval_accuracy<=3.3 (log-perplexity), course CSVs
    log acc and loss and declare nothing: each filter picks its own, on both stores."""
    from core.datasets import builtin_log_files
    from core.library import add_paths, metric_options

    lib = Library(db)
    speedrun = [p for _, p in builtin_log_files("speedrun")][:2]
    llama = [p for _, p in builtin_log_files("mlperf_llama8b")][:1]
    course = [p for _, p in builtin_log_files("mnist1d")][:1]
    add_paths(lib, [*speedrun, *llama, *course])
    table = lib.runs()
    assert metric_options(table) == {"metric": ["acc", "eval_accuracy", "loss", "train_loss", "val_loss"],
                                     "target": ["eval_accuracy<=3.3", "val_loss<=3.28"]}
    assert sorted(lib.runs("target=val_loss<=3.28")["source"]) == sorted(p.name for p in speedrun)
    assert lib.runs("target=val_loss <= 3.280")["source"].tolist() == lib.runs("target=val_loss<=3.28")[
        "source"].tolist()                                                    # one spelling
    assert len(lib.runs("target=eval_accuracy<=3.3")) == 1
    with pytest.raises(InputError, match="'val_loss' is a loss, which falls"):    # never a climbing loss
        lib.runs("target=val_loss>=3.28")
    assert lib.runs("metric=acc")["source"].tolist() == [course[0].name]
    assert len(lib.runs("metric=val_loss")) == 2 and lib.runs("metric=val").empty   # a name, not a part of one
    with pytest.raises(InputError, match="expected"):
        RunFilter.parse("target=val_loss>3.28")
