"""Export to Parquet + manifest and import back (merging by content hash); compaction."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from core.errors import InputError
from core.library import (
    Library,
    compact,
    content_hash,
    data_hash,
    export_library,
    export_zip,
    fit_library,
    import_library,
)
from core.logs import read_log
from tests.core.library.helpers import course_csv


def _library(path, n: int = 4) -> Library:
    lib = Library(path)
    for i in range(n):
        data = course_csv(seed=i)
        lib.add(read_log(data, f"resnet{20 + 12 * (i % 2)}_Tesla V100-{64 * (i + 1)}.csv"), data=data,
                tags=["even" if i % 2 == 0 else "odd"], dataset="cifar10")
    return lib


def test_an_export_imports_into_another_library_as_the_same_runs(make_db, tmp_path):
    source = _library(make_db("a"))
    fit_library(source)
    summary = export_library(source, tmp_path / "export")
    assert summary.n_runs == 4 and summary.rows["series"] == 240 and summary.rows["fits"] == 4
    manifest = json.loads((tmp_path / "export" / "manifest.json").read_text())
    assert manifest["schema_version"] == 6 and set(manifest["tables"]) == {"runs", "run_tags", "series", "fits",
                                                                            "speed_tables"}
    target = Library(make_db("b"))
    report = import_library(target, tmp_path / "export")
    assert report.n_added == 4 and not report.errors
    for (_, a), (_, b) in zip(source.get_many(range(1, 5)), target.get_many(range(1, 5))):
        assert a.fingerprint() == b.fingerprint()
    assert target.runs()["tags"].tolist() == ["even", "odd", "even", "odd"]
    assert target.counts()["fits"] == 4
    pd.testing.assert_frame_equal(fit_library(target).table, fit_library(source).table)   # the fits came along


def test_importing_twice_adds_nothing_and_a_filtered_export_merges_into_a_library_that_has_others(make_db, tmp_path):
    source = _library(make_db("a"))
    export_library(source, tmp_path / "odd", "tag=odd")
    target = _library(make_db("b"), n=1)                 # already holds run 0 (even)
    first = import_library(target, tmp_path / "odd")
    assert (first.n_added, first.n_present) == (2, 0)
    again = import_library(target, tmp_path / "odd")
    assert (again.n_added, again.n_present) == (0, 2)
    assert sorted(target.runs()["tags"]) == ["even", "odd", "odd"]


def test_an_export_never_overwrites_and_a_changed_file_is_refused(make_db, tmp_path):
    lib = _library(make_db("a"))
    export_library(lib, tmp_path / "export")
    with pytest.raises(InputError, match="expected a new or empty folder"):
        export_library(lib, tmp_path / "export")
    series = tmp_path / "export" / "series.parquet"
    series.write_bytes(series.read_bytes()[:-10] + b"0123456789")
    with pytest.raises(InputError, match="series.parquet: expected the file the manifest describes"):
        import_library(Library(target := make_db("b")), tmp_path / "export")
    assert not Library(target).exists()


@pytest.mark.parametrize(("manifest", "message"), [
    ("not json", "cannot read it"), ('{"format": "other"}', "expected format"),
    ('{"format": "tta-planner-library-export", "schema_version": 9}', "expected schema version 1 to 6; got 9")])
def test_a_bad_manifest_is_refused_with_what_was_expected(make_db, tmp_path, manifest, message):
    (tmp_path / "export").mkdir()
    (tmp_path / "export" / "manifest.json").write_text(manifest)
    with pytest.raises(InputError, match=message):
        import_library(Library(make_db("b")), tmp_path / "export")


def test_the_page_download_is_a_zip_of_the_export(make_db, tmp_path):
    import io
    import zipfile

    lib = _library(make_db("a"))
    names = zipfile.ZipFile(io.BytesIO(export_zip(lib, "tag=even"))).namelist()
    assert sorted(names) == ["library_export/fits.parquet", "library_export/manifest.json",
                             "library_export/run_tags.parquet", "library_export/runs.parquet",
                             "library_export/series.parquet"]


def test_compaction_gives_back_the_space_of_removed_runs_and_never_reuses_an_id(make_db, tmp_path):
    lib = Library(make_db("a"))
    for i in range(40):
        data = course_csv(epochs=60, steps=100, seed=i)              # 6000 rows each
        lib.add(read_log(data, f"run{i}_Tesla V100.csv"), data=data)
    lib.remove(range(2, 41))
    kept = compact(lib)                                              # removed just now: kept (restorable)
    assert kept.purged == () and lib.restore([2]) == [2] and lib.remove([2]) == [2]
    summary = compact(lib, keep_days=0)
    assert summary.purged == tuple(range(2, 41))
    assert summary.bytes_after < summary.bytes_before
    assert lib.runs()["run_id"].tolist() == [1]
    data = course_csv(seed=99)
    assert lib.add(read_log(data, "new_Tesla V100.csv"), data=data).run_id == 41   # none reused or skipped
    assert lib.get(1).n_points == 6000


def test_speed_tables_come_along_once(make_db, tmp_path):
    from pathlib import Path

    from core.library import add_speed_table
    from core.library.speed import speed_tables

    data = (Path(__file__).resolve().parents[3] / "data" / "pollux_traces" / "cifar10" / "scalability.csv").read_bytes()
    source = _library(make_db("a"), n=1)
    add_speed_table(source, "cifar10_scalability.csv", data)
    export_library(source, tmp_path / "export")
    target = Library(make_db("b"))
    import_library(target, tmp_path / "export")
    import_library(target, tmp_path / "export")                  # a second import adds nothing
    tables = speed_tables(target)
    assert tables["name"].tolist() == ["cifar10_scalability.csv"] and tables["table_id"].tolist() == [1]


def _as_version_1(directory) -> None:
    """Rewrite an export as the first release wrote it: no ``series.lr``, tags as text in ``runs.tags``, no
    ``run_tags`` table, manifest version 1 (hashes and row counts updated)."""
    import hashlib

    manifest = json.loads((directory / "manifest.json").read_text())
    runs = pd.read_parquet(directory / "runs.parquet")
    tags = pd.read_parquet(directory / "run_tags.parquet")
    runs["tags"] = runs["run_id"].map(lambda i: ", ".join(tags.loc[tags["run_id"] == i, "tag"]) + " ,")
    runs.drop(columns=["schedule", "deleted_at", "data_hash", "samples_per_epoch", "status", "system", "n_nodes",
                       "n_devices", "throughput"]).to_parquet(directory / "runs.parquet")
    pd.read_parquet(directory / "series.parquet").drop(columns=["lr"]).to_parquet(directory / "series.parquet")
    (directory / "run_tags.parquet").unlink()
    del manifest["tables"]["run_tags"]
    for entry in manifest["tables"].values():
        path = directory / entry["file"]
        entry["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
        entry["rows"] = len(pd.read_parquet(path))
    manifest["schema_version"] = 1
    (directory / "manifest.json").write_text(json.dumps(manifest))


def test_an_export_of_the_first_release_imports_with_its_tags(make_db, tmp_path):
    source = _library(make_db("a"), n=2)
    export_library(source, tmp_path / "export")
    _as_version_1(tmp_path / "export")
    target = Library(make_db("b"))
    report = import_library(target, tmp_path / "export")
    assert report.n_added == 2 and not report.errors
    assert target.runs()["tags"].tolist() == ["even", "odd"]
    back = target.get(1)
    assert back.frame["lr"].isna().all()
    assert back.frame["loss"].tolist() == source.get(1).frame["loss"].tolist()


def _rewrite(directory, table: str, frame: pd.DataFrame | None = None, data: bytes | None = None) -> None:
    """Replace one table of an export (a frame, or raw bytes) and make the manifest agree with it."""
    import hashlib

    path = directory / f"{table}.parquet"
    if frame is not None:
        frame.to_parquet(path)
    else:
        path.write_bytes(data)
    manifest = json.loads((directory / "manifest.json").read_text())
    manifest["tables"][table]["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    if frame is not None:
        manifest["tables"][table]["rows"] = len(frame)
    (directory / "manifest.json").write_text(json.dumps(manifest))


def test_a_crafted_export_cannot_pass_other_data_off_as_a_real_run(make_db, tmp_path):
    """The export keeps a real log's content hash but carries other numbers: the import stores it under the hash
    of what it stores, so the real log still comes in as itself, and a library holding the real run keeps it."""
    real = course_csv(seed=1)
    source = Library(make_db("a"))
    run_id = source.add(read_log(real, "resnet20_Tesla V100.csv"), data=real).run_id
    export_library(source, tmp_path / "export")
    series = pd.read_parquet(tmp_path / "export" / "series.parquet")
    _rewrite(tmp_path / "export", "series", series.assign(loss=series["loss"] * 10))   # fake numbers, same claim

    target = Library(make_db("b"))
    fake = import_library(target, tmp_path / "export")
    assert fake.n_added == 1
    stored = target.runs()["content_hash"][0]
    assert stored != content_hash(real) and stored == data_hash(target.get(1))
    honest = target.add(read_log(real, "resnet20_Tesla V100.csv"), data=real)
    assert honest.added and honest.run_id == 2                             # not "already in the library"
    assert target.get(2).frame["loss"].tolist() == read_log(real, "x.csv").frame["loss"].tolist()

    into_source = import_library(source, tmp_path / "export")              # the library holding the real run
    assert into_source.n_added == 1 and source.get(run_id).fingerprint() == \
        read_log(real, "resnet20_Tesla V100.csv").fingerprint()


@pytest.mark.parametrize("table", ["series", "runs"])
def test_a_crafted_export_changing_the_optional_columns_or_per_step_figures_is_another_run(make_db, tmp_path,
                                                                                             table):
    """The data hash covers what the language-model readers store beyond the frame's six columns: the optional
    columns' values (``series.extra``: samples, tokens, train_loss) and the per-step figures (``runs.steps``).
    An export changing either is not taken for the run it claims to be."""
    from core.logs import read_log_file
    from tests.conftest import TEST_DATA

    path = TEST_DATA / "llm/mlperf_v5.1/llama31_8b/NVIDIA__tyche_ngpu512_ngc25.09_nemo/result_0.txt"
    real = read_log_file(path)
    source = Library(make_db("a"))
    source.add(real, data=path.read_bytes())
    export_library(source, tmp_path / "export")
    frame = pd.read_parquet(tmp_path / "export" / f"{table}.parquet")
    if table == "series":       # the tokens of the last row (its optional columns: samples, tokens, train_loss)
        cells = [json.loads(text) for text in frame["extra"]]
        assert cells[-1][1] == real.frame["tokens"].iloc[-1]
        cells[-1][1] += 8192
        frame = frame.assign(extra=[json.dumps(c) for c in cells])
    else:                       # the first per-step time
        steps = json.loads(frame["steps"][0])
        assert steps["columns"][3] == "step_time_s" and steps["data"][0][3] == real.steps["step_time_s"][0]
        steps["data"][0][3] *= 2
        frame = frame.assign(steps=[json.dumps(steps)])
    _rewrite(tmp_path / "export", table, frame)

    assert import_library(source, tmp_path / "export").n_added == 1        # not "already in the library"
    changed = source.get(2)
    assert data_hash(changed) != data_hash(real) == data_hash(source.get(1))
    if table == "series":
        assert changed.frame["tokens"].iloc[-1] == real.frame["tokens"].iloc[-1] + 8192
    else:
        assert changed.steps["step_time_s"][0] == 2 * real.steps["step_time_s"][0]


def test_an_honest_export_of_a_run_and_its_file_are_the_same_run(make_db, tmp_path):
    data = course_csv(seed=3)
    source = Library(make_db("a"))
    source.add(read_log(data, "resnet20_Tesla V100.csv"), data=data)
    export_library(source, tmp_path / "export")
    target = Library(make_db("b"))
    assert import_library(target, tmp_path / "export").n_added == 1
    again = target.add(read_log(data, "resnet20_Tesla V100.csv"), data=data)
    assert (again.added, again.run_id) == (False, 1)                         # matched by the data stored


def _malformed(kind: str, directory) -> None:
    if kind == "not parquet":
        _rewrite(directory, "runs", data=b"PAR1 this is not a parquet file PAR1")
    elif kind == "missing column":
        _rewrite(directory, "runs", pd.read_parquet(directory / "runs.parquet").drop(columns=["fmt"]))
    elif kind == "text ids":
        _rewrite(directory, "series", pd.read_parquet(directory / "series.parquet").assign(run_id="one"))
    elif kind == "rows differ":
        manifest = json.loads((directory / "manifest.json").read_text())
        manifest["tables"]["series"]["rows"] = 5
        (directory / "manifest.json").write_text(json.dumps(manifest))
    elif kind == "tables not a dict":
        (directory / "manifest.json").write_text(json.dumps({"format": "tta-planner-library-export",
                                                             "schema_version": 5, "tables": ["runs"]}))


@pytest.mark.parametrize(("kind", "message"), [
    ("not parquet", r"runs.parquet: expected a Parquet file as an export writes it; cannot read it"),
    ("missing column", r"runs.parquet: expected the columns run_id, source, .*; fmt missing"),
    ("text ids", r"series.parquet: expected whole-number run ids; got 'one'"),
    ("rows differ", r"series.parquet: expected 5 rows as the manifest says; the file holds 240"),
    ("tables not a dict", r"expected the tables runs and series in the manifest"),
])
def test_a_malformed_export_is_refused_with_one_message_and_nothing_added(make_db, tmp_path, capsys, kind, message):
    from core.cli import main

    export_library(_library(make_db("a")), tmp_path / "export")
    _malformed(kind, tmp_path / "export")
    target = make_db("b")
    with pytest.raises(InputError, match=message):
        import_library(Library(target), tmp_path / "export")
    assert main(["library", "import", str(tmp_path / "export"), "--db", target]) == 2
    out = capsys.readouterr()
    assert out.out == "" and len(out.err.strip().splitlines()) == 1 and "Traceback" not in out.err
    assert Library(target).runs().empty


def test_a_run_with_bad_fits_or_a_bad_row_is_refused_whole_and_the_others_are_added(make_db, tmp_path):
    source = _library(make_db("a"))
    fit_library(source)
    export_library(source, tmp_path / "export")
    fits = pd.read_parquet(tmp_path / "export" / "fits.parquet")
    fits.loc[fits["run_id"] == 2, "params"] = "{not json"
    _rewrite(tmp_path / "export", "fits", fits)
    runs = pd.read_parquet(tmp_path / "export" / "runs.parquet")
    runs.loc[runs["run_id"] == 3, "roles"] = '["a list, not roles"]'
    _rewrite(tmp_path / "export", "runs", runs)

    target = Library(make_db("b"))
    report = import_library(target, tmp_path / "export")
    assert report.n_added == 2 and [source for source, _ in report.errors] == ["resnet32_Tesla V100-128.csv",
                                                                                 "resnet20_Tesla V100-192.csv"]
    assert "expected tags and fits as the planner exports them" in report.errors[0][1]
    assert "expected a run as the planner exports it" in report.errors[1][1]
    assert target.runs()["source"].tolist() == ["resnet20_Tesla V100-64.csv", "resnet32_Tesla V100-256.csv"]
    counts = target.counts()
    assert (counts["runs"], counts["series"], counts["fits"], counts["run_tags"]) == (2, 120, 2, 2)


def test_an_export_over_the_bounds_is_refused_from_its_footers_before_anything_is_decoded(make_db, tmp_path,
                                                                                           monkeypatch):
    import core.library.exchange as exchange

    export_library(_library(make_db("a")), tmp_path / "export")             # 4 runs + 4 tags + 240 series rows = 248
    monkeypatch.setattr(exchange, "MAX_IMPORT_ROWS", 200)

    def no_decoding(*args, **kwargs):
        raise AssertionError("decoded a table of an export over the bounds")

    monkeypatch.setattr(exchange.pd, "read_parquet", no_decoding)
    with pytest.raises(InputError, match=r"export: expected an export of at most 200 rows and 256 MB uncompressed; "
                                         r"got 248 rows and 0 MB\. Export it in parts"):
        import_library(Library(make_db("b")), tmp_path / "export")
