"""Library: the runs every session and the command line share, in one database file.

Filter the runs, choose some, and load them into this session (every page then uses them
beside the uploads and the built-in data), tag them, delete them (after a confirmation; only
where the server allows it: ``core.library.web_delete_policy``) or download them as an export.
Deleted runs stay restorable for the keeping period (*Recently deleted*, always offered); the audit
log says who did what (``pages/library_sections/removal.py``).  The
built-in data goes into the library with one button.
Nothing here creates the library file: it appears with the first run saved.  Every number
and every query comes from ``core.library``.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from core.errors import InputError, LibraryError
from core.figures.library import library_preview_figure
from core.library import (
    Library,
    RunFilter,
    add_builtin,
    export_zip,
    filter_options,
    metric_options,
    reached_note,
    with_reached,
)
from core.logs import RunLog
from core.targets import Target
from pages.library_sections.removal import (
    NOTICE,
    SELECTED,
    audit_section,
    confirm_delete_section,
    delete_control,
    notice_section,
    removed_section,
)
from pages.shared.bounded import bounded_resource
from pages.shared.common import (
    SHARED,
    chart,
    guarded,
    library,
    load_library_runs,
    load_logs,
    page_setup,
    plain,
    show_errors,
    table_download,
    target_input,
    target_text,
)

SHOWN_COLUMNS = ["run_id", "source", "model", "gpu", "global_batch", "dataset", "split", "tags", "n_points",
                 "n_epochs", "best_acc", "reached_target", "added_at"]


# ---------------------------------------------------------------- cached core calls
@bounded_resource(**SHARED)
def _preview_logs(path: str, runs: tuple[tuple[int, str], ...]) -> tuple[RunLog, ...]:
    """The chosen runs (``(id, content hash)``: a run's content never changes, so the pair is a safe key)."""

    return tuple(log for _, log in Library(path).get_many([i for i, _ in runs]))


def _progress_bar(text: str):
    """An ``st.progress`` bar and the ``progress(done, total, label)`` callback ``core.library`` calls."""
    bar = st.progress(0.0, text=text)

    def progress(done: int, total: int, label: str) -> None:
        bar.progress(min(1.0, done / max(total, 1)), text=plain(f"{done}/{total}: {label}"))

    return bar, progress


# ---------------------------------------------------------------- sections
def location_section(lib) -> None:
    """Which library this is (its file name: the server's folders are not the user's business) and, until
    the first run is saved, that it has no file yet."""
    st.caption(f"Library file: {plain(Path(lib.path).name)} (set `TTA_LIBRARY_DB` to share another one). Every browser "
               "session and `python -m core library ...` on this machine use it at once; each run is written "
               "whole or not at all.")
    if not lib.exists():
        st.info("No library file yet: it is created when the first run is saved (Logs page: *Save to the "
                "library*, the button below, or `python -m core library add PATH`).", icon=":material/info:")


def builtin_section(lib) -> None:
    with st.expander("Load the built-in data into the library", icon=":material/database_upload:",
                     expanded=not lib.exists()):
        st.caption("Adds the example runs shipped with the app (MNIST-1D, Pollux, MLPerf), tagged `built-in` and "
                   "their set; runs already in the library are left as they are.")
        if st.button("Load the built-in data", key="library_load_builtin", icon=":material/database:"):
            bar, progress = _progress_bar("Adding the built-in runs…")
            report = add_builtin(lib, progress=progress)
            bar.empty()
            show_errors(report.errors)
            st.success(plain(report.summary()), icon=":material/check:")


def filters_section(table) -> RunFilter:
    """Model, device, tag, batch, metric and own-target filters (options from the library itself)."""
    options = {**filter_options(table), **metric_options(table)}
    c1, c2, c3, c4, c5, c6 = st.columns(6)
    chosen = {"model": c1.multiselect("Model", options["model"], key="library_f_model"),
              "gpu": c2.multiselect("Device", options["gpu"], key="library_f_gpu"),
              "tag": c3.multiselect("Tag", options["tag"], key="library_f_tag"),
              "batch": c4.multiselect("Global batch", options["batch"], key="library_f_batch"),
              "metric": c5.multiselect("Metric logged", options["metric"], key="library_f_metric"),
              "target": c6.multiselect("Run's own target", options["target"], key="library_f_target",
                                       help="The target an MLPerf or speedrun log declares.")}
    return RunFilter.of(**chosen)


def table_section(shown, target: Target) -> None:
    table = with_reached(shown, target)[SHOWN_COLUMNS]
    if (note := reached_note(target)) is not None:
        st.caption(plain(note))
    st.subheader(f"Runs ({len(table)})")
    st.dataframe(table, key="library_table", hide_index=True, width="stretch",
                 column_config={"best_acc": st.column_config.NumberColumn("best acc", format="%.4f"),
                                "reached_target": st.column_config.CheckboxColumn(f"reached {target_text(target)}"),
                                "added_at": st.column_config.DatetimeColumn("added (UTC)", format="YYYY-MM-DD HH:mm")})
    table_download(table, key="library_table_csv", file_name="library_runs.csv")


def selection_section(shown) -> list[int]:
    """The runs chosen (ids among those shown)."""
    labels = {int(r.run_id): f"#{int(r.run_id)} {r.source}" for r in shown.itertuples()}
    current = [i for i in st.session_state.get(SELECTED, []) if i in labels]
    if current != st.session_state.get(SELECTED, []):
        st.session_state[SELECTED] = current
    return st.multiselect("Choose runs", list(labels), format_func=lambda i: labels[i], key=SELECTED,
                          help="Load them into this session, tag, delete or export them.")


def actions_section(lib, shown, chosen: list[int]) -> None:
    c1, c2, c3 = st.columns([2, 3, 2])
    c1.button(f"Load {len(chosen)} run(s) into this session", key="library_load", icon=":material/input:",
              disabled=not chosen, on_click=_load_now, args=(lib, list(chosen)))
    with c2:
        tag = st.text_input("Tag", key="library_tag_text", placeholder="e.g. baseline", label_visibility="collapsed")
        b1, b2 = st.columns(2)
        add = b1.button("Add tag", key="library_tag_add", icon=":material/sell:", disabled=not chosen)
        remove = b2.button("Remove tag", key="library_tag_remove", disabled=not chosen)
        if (add or remove) and not tag.strip():
            st.warning("Type a tag first.")
        elif add or remove:
            lib.tag(chosen, [tag], remove=remove)
            st.rerun()
    delete_control(lib, c3, chosen)
    export_filter = RunFilter.of(id=chosen) if chosen else None
    st.download_button("Export (Parquet + manifest, ZIP)" + (" of the chosen runs" if chosen else ""),
                       data=lambda: export_zip(lib, export_filter), file_name="library_export.zip",
                       mime="application/zip", key="library_export", on_click="ignore", icon=":material/archive:",
                       help="Import it elsewhere with python -m core library import library_export.zip.")


def _load_now(lib, ids: list[int]) -> None:
    """``on_click`` of *Load*: before the page is drawn again, so the sidebar lists the runs at once."""
    try:
        names = load_library_runs(lib, ids)
    except (LibraryError, InputError) as exc:
        st.session_state[NOTICE] = ("error", str(exc))
        return
    st.session_state[NOTICE] = ("success", f"Loaded {len(names)} run(s): every page now uses them beside the "
                                           "uploads and the built-in data (see the sidebar).")


def preview_section(lib, shown, chosen: list[int], target: Target) -> None:
    hashes = dict(zip(shown["run_id"].astype(int), shown["content_hash"]))
    key = tuple((i, hashes[i]) for i in chosen if i in hashes)
    logs = _preview_logs(lib.path, key) if key else ()
    chart(library_preview_figure, logs, target=target, key="library_preview_chart", file_stem="library_runs",
          inputs=(lib.path, key))


# ---------------------------------------------------------------- page
@guarded("The Library page")
def main() -> None:
    page_setup()
    st.title("Library")
    st.caption("Every run and fit saved by anyone on this server or its command line, in one database: filter "
               "them, load them into your session, tag, delete or export them.")
    lib = library()
    location = st.empty()      # filled after the built-in data may have created the file: no stale "no file" box
    notice_section()
    try:
        builtin_section(lib)
        target = target_input(load_logs()[0], key="library_target_acc")
        everything = lib.runs()
        run_filter = filters_section(everything)
        shown = lib.runs(run_filter) if not run_filter.is_empty else everything
        table_section(shown, target)
        chosen = selection_section(shown)
        actions_section(lib, shown, chosen)
        confirm_delete_section(lib, shown)
        preview_section(lib, shown, chosen, target)
        removed_section(lib)
        audit_section(lib)
    except (LibraryError, InputError) as exc:
        st.error(plain(str(exc)), icon=":material/error:")
    finally:
        with location.container():
            location_section(lib)


main()
