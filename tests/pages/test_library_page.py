"""The Library page (AppTest): an empty library, the built-in data in one button, filter, choose, preview, load
into the session (the Logs page then fits them), tag, delete after a confirmation (only with the server's setting
on a shared library), restore, the audit log; the Logs page's "save to the
library" keeps the edited roles and metadata."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from core.datasets import BUILTIN_LOG_SETS, builtin_log_files
from core.library import Library
from tests.pages.conftest import chart_specs, open_page, shown

PAGE = "pages/library.py"
#: the logs of every built-in set (the library's "load the built-in data" adds them all)
N_BUILTIN = sum(len(builtin_log_files(key)) for key in BUILTIN_LOG_SETS)


def _db() -> Path:
    return Path(os.environ["TTA_LIBRARY_DB"])            # tests/conftest.py: a file of this test's own


def _table(at):
    return at.dataframe[0].value


def test_an_empty_library_shows_where_it_will_be_and_creates_nothing():
    at = open_page(PAGE, via_app=True)
    assert at.title[0].value == "Library"
    assert "No library file yet" in at.info[0].value
    # the file name only (the server's folders are not shown), as text (escaped Markdown, outside a code span)
    assert [c for c in at.caption if shown(c.value).startswith(f"Library file: {_db().name} (set `TTA_LIBRARY_DB`")]
    assert not [c for c in at.caption if str(_db().parent) in shown(c.value)]
    assert _table(at).empty
    spec = chart_specs(at)[0]
    assert spec["layout"]["annotations"][0]["text"] == "Choose runs in the table to see their curves here."
    assert not _db().exists() and not Path(f"{_db()}.lock").exists()


def test_builtin_data_filter_choose_load_tag_and_delete(monkeypatch):
    monkeypatch.setenv("TTA_LIBRARY_WEB_DELETE", "1")          # the test's library is a TTA_LIBRARY_DB path: shared
    at = open_page(PAGE, via_app=True)
    at.button(key="library_load_builtin").click().run()
    assert not at.exception
    # every built-in set's logs: 58 image-model runs + the LLM sets (7 MLPerf Llama 3.1 8B logs, 4 NanoGPT speedrun
    # logs, 10 schedule curves): 79
    assert N_BUILTIN == 79
    assert shown(at.success[0].value) == f"{N_BUILTIN} run(s) added, 0 already in the library."
    assert not [i for i in at.info if "No library file yet" in i.value]     # no stale box after loading
    assert len(_table(at)) == N_BUILTIN and len(Library(_db()).runs()) == N_BUILTIN

    at.multiselect(key="library_f_model").set_value(["resnet20"]).run()
    table = _table(at)
    assert table["source"].tolist() == ["resnet20_Intel Xeon Processor.csv", "resnet20_Intel Xeon Processor_val.csv"]
    assert table["reached_target"].tolist() == [True, True]        # best epoch accuracies 0.976 and 0.957 > 0.92
    ids = [int(i) for i in table["run_id"]]
    at.multiselect(key="library_selected").set_value(ids).run()
    preview = chart_specs(at)[0]
    assert [t["name"] for t in preview["data"]] == ["resnet20 · Intel Xeon Processor",
                                                     "resnet20 · Intel Xeon Processor · val", "target"]

    at.button(key="library_load").click().run()
    names = [f"resnet20_Intel Xeon Processor.csv (library #{ids[0]})",
             f"resnet20_Intel Xeon Processor_val.csv (library #{ids[1]})"]
    assert list(at.session_state["library_runs"]) == names
    assert at.sidebar.text[-1].value == "\n".join(names)

    at.text_input(key="library_tag_text").input("keep").run()
    at.button(key="library_tag_add").click().run()
    assert _table(at)["tags"].tolist() == ["built-in,keep,mnist1d"] * 2

    at.button(key="library_delete").click().run()
    assert "Delete 2 run(s) from the library" in at.warning[0].value
    at.button(key="library_delete_cancel").click().run()
    assert len(Library(_db()).runs()) == N_BUILTIN and not at.warning
    at.button(key="library_delete").click().run()
    at.button(key="library_delete_confirm").click().run()
    assert not at.exception
    assert shown(at.success[0].value) == ("Deleted 2 run(s) from the library; they can be restored for 30 days "
                                          "(Recently deleted, below).")
    assert len(Library(_db()).runs()) == N_BUILTIN - 2 and "resnet20" not in set(Library(_db()).runs()["model"])
    assert at.session_state["library_runs"] == {}                   # unloaded from the session too

    assert at.subheader[-1].value == "Recently deleted (2)"
    removed = at.dataframe[1].value                                   # restorable from the page, until when
    assert removed["run_id"].tolist() == ids
    assert (removed["restorable_until"] - removed["deleted_at"]).tolist() == [pd.Timedelta(days=30)] * 2
    audit = at.dataframe[2].value                                     # who did what, latest first
    assert audit["action"].tolist()[:2] == ["remove", "add"] and audit["run_ids"][0] == f"{ids[0]},{ids[1]}"
    assert ", web session " in audit["actor"][0]
    at.multiselect(key="library_restore_choice").set_value(ids).run()
    at.button(key="library_restore").click().run()
    assert not at.exception and shown(at.success[0].value) == f"Restored 2 run(s): #{ids[0]}, #{ids[1]}."
    assert not [h for h in at.subheader if h.value.startswith("Recently deleted")]
    assert len(Library(_db()).runs()) == N_BUILTIN
    history = Library(_db()).history()
    assert history["action"].tolist()[:2] == ["restore", "remove"]
    assert all(", web session " in actor for actor in history["actor"])   # this browser session, every event


def _delete_offered(at) -> bool:
    return "library_delete" in [b.key for b in at.button]


OFF_TEXT = ("Deleting runs from the web is off: this library is a file the server names (TTA_LIBRARY_DB or --db), "
            "which other users and servers may share. `TTA_LIBRARY_WEB_DELETE=1` where the server starts turns it "
            "on; `python -m core library rm ID` removes runs from the command line.")


def test_deleting_on_a_shared_library_needs_the_server_setting(monkeypatch):
    """The tests' library is a TTA_LIBRARY_DB path (shared): no Delete unless TTA_LIBRARY_WEB_DELETE=1; 0 wins."""
    monkeypatch.delenv("TTA_LIBRARY_WEB_DELETE", raising=False)
    at = open_page(PAGE, via_app=True)
    at.button(key="library_load_builtin").click().run()
    at.multiselect(key="library_selected").set_value([1, 2]).run()
    assert not at.exception and not _delete_offered(at)
    assert [c for c in at.caption if shown(c.value) == OFF_TEXT]
    assert len(Library(_db()).runs()) == N_BUILTIN

    monkeypatch.setenv("TTA_LIBRARY_WEB_DELETE", "1")
    at.run()
    assert _delete_offered(at) and not [c for c in at.caption if shown(c.value) == OFF_TEXT]
    at.button(key="library_delete").click().run()
    at.button(key="library_delete_confirm").click().run()
    assert not at.exception and len(Library(_db()).runs()) == N_BUILTIN - 2

    monkeypatch.setenv("TTA_LIBRARY_WEB_DELETE", "0")
    at.run()
    assert not _delete_offered(at)
    assert [c for c in at.caption if shown(c.value).startswith("Deleting runs from the web is off: the server sets "
                                                               "TTA_LIBRARY_WEB_DELETE=0.")]


def test_the_users_own_default_file_offers_delete(monkeypatch, tmp_path):
    monkeypatch.delenv("TTA_LIBRARY_DB", raising=False)
    monkeypatch.delenv("TTA_LIBRARY_WEB_DELETE", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    at = open_page(PAGE, via_app=True)
    at.button(key="library_load_builtin").click().run()
    at.multiselect(key="library_selected").set_value([1]).run()
    assert not at.exception and _delete_offered(at)
    assert (tmp_path / "data" / "tta-planner" / "library.duckdb").is_file()


def test_restoring_from_the_page_works_where_deleting_is_off(monkeypatch):
    """Restoring loses nothing: offered on a shared library without the setting (a run removed by the CLI)."""
    monkeypatch.delenv("TTA_LIBRARY_WEB_DELETE", raising=False)
    at = open_page(PAGE, via_app=True)
    at.button(key="library_load_builtin").click().run()
    Library(_db(), actor="admin@server").remove([3])
    at.run()
    assert not _delete_offered(at) and at.subheader[-1].value == "Recently deleted (1)"
    at.multiselect(key="library_restore_choice").set_value([3]).run()
    at.button(key="library_restore").click().run()
    assert not at.exception and shown(at.success[0].value) == "Restored 1 run(s): #3."
    assert len(Library(_db()).runs()) == N_BUILTIN
    history = Library(_db()).history()
    assert history["action"].tolist()[:2] == ["restore", "remove"]
    assert history["actor"][1] == "admin@server" and ", web session " in history["actor"][0]


def test_runs_loaded_from_the_library_are_fitted_on_the_logs_page():
    at = open_page(PAGE, via_app=True)
    at.button(key="library_load_builtin").click().run()
    at.multiselect(key="library_f_tag").set_value(["mnist1d_batch"]).run()
    ids = [int(i) for i in _table(at)["run_id"]][:2]
    at.multiselect(key="library_selected").set_value(ids).run()
    at.button(key="library_load").click().run()
    at.switch_page("pages/logs.py").run()
    assert not at.exception
    files = list(_table(at).index)
    assert [f for f in files if "(library #" in f] == [f"resnet14_AMD EPYC-16.txt (library #{ids[0]})",
                                                       f"resnet14_AMD EPYC-32.txt (library #{ids[1]})"]


def _two_loss_log() -> bytes:
    k = np.arange(1, 61)
    rows = "".join(f"{(i - 1) // 10 + 1},{(i - 1) % 10 + 1},{1 / (0.01 * i + 0.5):.6f},{1 / (0.02 * i + 0.5):.6f},"
                   f"{0.6 + 0.05 * ((i - 1) // 10 + 1):.3f}\n" for i in k)
    return ("epoch,step,loss,smooth_loss,acc\n" + rows).encode()


def test_save_to_the_library_keeps_the_edited_roles_and_metadata():
    at = open_page()
    at.file_uploader(key="logs_upload_0").upload("metrics.csv", _two_loss_log(), "text/csv").run()
    at.session_state["logs_edit"] = True                 # open the edit expander (its widgets are made only then)
    at.run()
    at.selectbox(key="logs_edit_file").set_value("metrics.csv").run()
    at.text_input(key="edit_model_metrics.csv").input("resnet77").run()
    at.selectbox(key="edit_role_loss_metrics.csv").set_value("smooth_loss").run()
    at.button(key="logs_apply_edit").click().run()
    at.text_input(key="logs_save_tags").input("mine, edited").run()
    at.button(key="logs_save").click().run()
    assert not at.exception
    assert shown(at.success[-1].value) == "1 run(s) added, 0 already in the library."
    lib = Library(_db())
    row = lib.runs().iloc[0]
    assert (row["source"], row["model"], row["tags"]) == ("metrics.csv", "resnet77", "edited,mine")
    log = lib.get(int(row["run_id"]))
    assert log.roles.loss == "smooth_loss"
    assert log.frame["loss"].tolist()[:2] == [round(1 / 0.52, 6), round(1 / 0.54, 6)]   # smooth_loss, k = 1, 2
    at.button(key="logs_save").click().run()
    assert "metrics.csv: already in the library as run #1 (same content); nothing added." in [
        shown(c.value).removeprefix(":material/info: ") for c in at.caption]


def test_filter_by_the_metric_logged_and_by_the_runs_own_target():
    from core.datasets import builtin_log_files
    from core.library import add_paths

    lib = Library()
    speedrun = [p for _, p in builtin_log_files("speedrun")][:2]
    add_paths(lib, [*speedrun, *[p for _, p in builtin_log_files("mnist1d")][:2]])
    at = open_page(PAGE, via_app=True)
    assert at.multiselect(key="library_f_target").options == ["val_loss<=3.28"]
    assert "acc" in at.multiselect(key="library_f_metric").options
    at.multiselect(key="library_f_target").set_value(["val_loss<=3.28"]).run()
    assert not at.exception and not at.error
    assert sorted(_table(at)["source"]) == sorted(p.name for p in speedrun)
    assert "Runs (2)" in [h.value for h in at.subheader]
    at.multiselect(key="library_f_target").set_value([]).run()
    at.multiselect(key="library_f_metric").set_value(["acc"]).run()
    assert not at.exception and not at.error
    assert sorted(_table(at)["source"]) == sorted(lib.runs("metric=acc")["source"]) and len(_table(at)) == 2
