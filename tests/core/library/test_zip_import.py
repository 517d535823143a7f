"""The ZIP the Library page exports imports as it is (the round trip), within the bounds a folder has; a crafted
ZIP (a path out of the archive, a bomb, a link, no manifest) is refused with one line naming it."""

from __future__ import annotations

import io
import stat
import zipfile

import pandas as pd
import pytest

from core.errors import InputError
from core.library import RUN_COLUMNS, Library, data_hash, export_library, export_zip, fit_library, import_library
from core.logs import read_log
from tests.core.library.helpers import course_csv


def _library(path, n: int = 3) -> Library:
    lib = Library(path, actor="alice@lab")
    for i in range(n):
        data = course_csv(seed=i)
        lib.add(read_log(data, f"resnet{20 + 12 * (i % 2)}_Tesla V100-{64 * (i + 1)}.csv"), data=data,
                tags=["even" if i % 2 == 0 else "odd"], dataset="cifar10")
    fit_library(lib)
    return lib


def test_the_page_export_zip_imports_into_a_fresh_library_with_the_same_runs_and_fits(make_db, tmp_path,
                                                                                     monkeypatch):
    import tempfile

    source = _library(make_db("a"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))       # where the ZIP is unpacked
    archive = tmp_path / "library_export.zip"
    archive.write_bytes(export_zip(source))                    # what the page's Export button downloads
    fresh = Library(tmp_path / "fresh.duckdb", actor="bob@lab")
    report = import_library(fresh, archive)
    assert (report.n_added, report.n_present, report.errors) == (3, 0, ())
    assert report.notes[-1].startswith(f"read {archive} (all runs, exported ")
    assert [a.fingerprint() for _, a in source.get_many([1, 2, 3])] == \
        [b.fingerprint() for _, b in fresh.get_many([1, 2, 3])]
    # every column but when it was added and the content hash (recomputed from the rows: a file's bytes are not in
    # an export)
    columns = [c for c in RUN_COLUMNS if c not in ("added_at", "content_hash")]
    # (check_dtype=False: PostgreSQL reads an all-empty integer column as float)
    pd.testing.assert_frame_equal(fresh.runs()[columns], source.runs()[columns], check_dtype=False)
    assert fresh.runs()["content_hash"].tolist() == [data_hash(log) for _, log in source.get_many([1, 2, 3])]
    assert fresh.counts()["fits"] == source.counts()["fits"] == 3
    pd.testing.assert_frame_equal(fit_library(fresh).table, fit_library(source).table)
    event = fresh.history().iloc[0]
    assert (event["action"], event["actor"], event["detail"]) == ("import", "bob@lab", f"{archive}: 3 run(s): "
                                                                  + ", ".join(fresh.runs()["source"]))
    again = import_library(fresh, archive)
    assert (again.n_added, again.n_present) == (0, 3)
    assert not list((tmp_path / "tmp").iterdir())                  # the unpacked folder is gone


def test_a_zipped_export_folder_without_a_top_folder_imports_too(tmp_path):
    export_library(_library(tmp_path / "a.duckdb"), tmp_path / "export", "tag=odd")
    archive = tmp_path / "flat.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        for path in sorted((tmp_path / "export").iterdir()):
            out.write(path, path.name)
        out.writestr("README.txt", "ignored")
    report = import_library(Library(tmp_path / "b.duckdb"), archive)
    assert report.n_added == 1 and Library(tmp_path / "b.duckdb").runs()["tags"].tolist() == ["odd"]


def _zip_of(members: dict[str, bytes], *, link: str | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in members.items():
            out.writestr(name, data)
        if link is not None:
            info = zipfile.ZipInfo(link)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            out.writestr(info, "/etc/passwd")
    return buffer.getvalue()


MANIFEST = b'{"format": "tta-planner-library-export"}'


@pytest.mark.parametrize(("members", "link", "message"), [
    ({"../../evil/manifest.json": MANIFEST}, None,
     "expected member paths inside the archive; '../../evil/manifest.json' points outside it. Nothing was imported."),
    ({"/etc/manifest.json": MANIFEST}, None,
     "expected member paths inside the archive; '/etc/manifest.json' points outside it. Nothing was imported."),
    ({"export/manifest.json": MANIFEST}, "export/runs.parquet",
     "expected plain files in the ZIP; 'export/runs.parquet' is a symbolic link. Nothing was imported."),
    ({"notes.txt": b"hello"}, None,
     "expected one manifest.json of a library export in the ZIP (the Library page's Export, or a zipped export "
     "folder); found none. Nothing was imported."),
    ({"a/manifest.json": MANIFEST, "b/manifest.json": MANIFEST}, None,
     "expected one manifest.json of a library export in the ZIP (the Library page's Export, or a zipped export "
     "folder); found a/manifest.json, b/manifest.json. Nothing was imported."),
])
def test_a_crafted_zip_is_refused_with_one_line_naming_it(tmp_path, members, link, message):
    archive = tmp_path / "crafted.zip"
    archive.write_bytes(_zip_of(members, link=link))
    with pytest.raises(InputError) as caught:
        import_library(Library(tmp_path / "lib.duckdb"), archive)
    assert str(caught.value) == f"{archive}: {message}"
    assert not (tmp_path / "lib.duckdb").exists() and not (tmp_path.parent / "evil").exists()


def test_a_zip_bomb_is_refused_from_its_directory_before_anything_is_unpacked(tmp_path, monkeypatch):
    import core.library.archive as archive_module

    monkeypatch.setattr(archive_module, "MAX_IMPORT_BYTES", 4 * 2**20)
    archive = tmp_path / "bomb.zip"
    archive.write_bytes(_zip_of({"export/manifest.json": MANIFEST, "export/series.parquet": bytes(6 * 2**20)}))
    assert archive.stat().st_size < 20_000                    # 6 MB of zeros deflate to a few kB
    written = []
    monkeypatch.setattr(archive_module, "_unpack", lambda *args: written.append(args))
    with pytest.raises(InputError, match=rf"^{archive}: expected an export of at most 4 MB unpacked; its files take "
                                         r"6\.0 MB\. Export it in parts"):
        import_library(Library(tmp_path / "lib.duckdb"), archive)
    # a manifest past its own bound, the rest small: the manifest's size is named, not the total
    big = tmp_path / "big_manifest.zip"
    big.write_bytes(_zip_of({"export/manifest.json": MANIFEST + b" " * (2 * 2**20)}))
    with pytest.raises(InputError, match=rf"^{big}: expected a manifest.json of at most 1 MB; it unpacks to 2\.0 MB"):
        import_library(Library(tmp_path / "lib.duckdb"), big)
    assert written == []


def test_a_file_that_is_not_a_zip_and_a_damaged_zip_are_named(tmp_path):
    text = tmp_path / "export.csv"
    text.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match=rf"^{text}: expected an export folder or the ZIP of one \(the Library "
                                         r"page's Export\); got a file that is not a ZIP\.$"):
        import_library(Library(tmp_path / "lib.duckdb"), text)
    cut = tmp_path / "cut.zip"
    cut.write_bytes(export_zip(_library(tmp_path / "a.duckdb"))[:3000])
    with pytest.raises(InputError, match=rf"^{cut}: expected the ZIP of a library export; cannot read it"):
        import_library(Library(tmp_path / "lib.duckdb"), cut)


def test_a_changed_file_inside_the_zip_is_named_by_the_zip_not_a_temporary_folder(tmp_path):
    export_library(_library(tmp_path / "a.duckdb"), tmp_path / "export")
    archive = tmp_path / "changed.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for path in sorted((tmp_path / "export").iterdir()):
            data = path.read_bytes()
            out.writestr(f"export/{path.name}", data[:-4] + b"XXXX" if path.name == "runs.parquet" else data)
    with pytest.raises(InputError, match=rf"^{archive}/runs\.parquet: expected the file the manifest describes"):
        import_library(Library(tmp_path / "lib.duckdb"), archive)
