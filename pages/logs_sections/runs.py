"""Logs page, the runs themselves: edit a run's metadata and column roles, save uploads to the library.

A section module of ``pages/logs.py``: widgets, calls into ``core`` and rendering only.
"""

from __future__ import annotations

import streamlit as st

from core.errors import InputError, LibraryError
from core.logs import ROLES
from pages.shared.common import (
    EDITS,
    UPLOADS,
    LoadedRuns,
    content_digest,
    guarded,
    is_library_run,
    library,
    loaded_log,
    plain,
    save_uploads_to_library,
    show_errors,
)

#: the edit expander's key (open: ``st.session_state[EDIT_EXPANDER]`` is True)
EDIT_EXPANDER = "logs_edit"
DATASET_LABELS = {None: "not recorded", "cifar10": "CIFAR-10", "mnist1d": "MNIST-1D", "other": "another data set"}


def edit_section(runs: LoadedRuns) -> None:
    # its widgets are made only once it is opened (a rerun): a first visit's browser loads and draws the answer
    # without a dozen inputs nobody sees (docs/cold_start.md)
    with st.expander("Edit run metadata and column roles", icon=":material/edit:", key=EDIT_EXPANDER,
                     on_change="rerun") as box:
        if not box.open:
            return
        st.caption("Model, depth and device come from the file name `<model>_<GPU>[_val].csv`; "
                   "change them here. Column roles are detected by name; override them per file.")
        names = [a.log.source for a in runs.analyses]
        name = st.selectbox("File", options=names, key="logs_edit_file")
        log = loaded_log(name)
        edit = dict(st.session_state[EDITS].get(name, {}))
        e1, e2, e3, e4, e5 = st.columns(5)
        model = e1.text_input("Model", value=log.meta.model or "", key=f"edit_model_{name}")
        depth = e2.number_input("Depth", value=log.meta.depth or 0, min_value=0, step=1, key=f"edit_depth_{name}")
        gpu = e3.text_input("Device", value=log.meta.gpu or "", key=f"edit_gpu_{name}")
        split = e4.selectbox("Split", ["train", "val"], index=0 if log.meta.split == "train" else 1,
                             key=f"edit_split_{name}")
        spe = e5.number_input("Steps per epoch", value=log.steps_per_epoch or 0, min_value=0, step=1,
                              key=f"edit_spe_{name}", help="0 = infer from the log")
        options = [None] + list(log.columns)
        roles = log.roles.to_dict()
        if is_library_run(name):   # saved as a tidy series: its columns were chosen when it was saved
            st.caption("Column roles and steps per epoch of a library run were fixed when it was saved: "
                       + plain(", ".join(f"{r} = {c}" for r, c in roles.items() if c)))
        else:
            for col, role in zip(st.columns(len(ROLES)), ROLES):
                current = getattr(log.roles, role)
                roles[role] = col.selectbox(role, options, index=options.index(current) if current in options else 0,
                                            key=f"edit_role_{role}_{name}",
                                            format_func=lambda c: "—" if c is None else c)
        if st.button("Apply", key="logs_apply_edit", icon=":material/check:"):
            new = {"model": model or None, "depth": int(depth) or None, "gpu": gpu or None}
            if split != log.meta.split:
                new["split"] = split
            if spe and spe != log.steps_per_epoch and not is_library_run(name):
                new["steps_per_epoch"] = int(spe)
            if roles != log.roles.to_dict():
                new["roles"] = roles
            st.session_state[EDITS][name] = {**edit, **new}
            st.rerun()


@st.fragment
@guarded("Logs: save to the library")
def save_section() -> None:
    """Uploaded runs into the library (as read here: edited roles and metadata), for every session to load."""
    uploads = list(st.session_state.get(UPLOADS, {}))
    with st.expander("Save to the library", icon=":material/database_upload:"):
        if not uploads:
            st.caption("Upload logs above to save them in the library, where every session (and "
                       "`python -m core library`) finds them again; the Library page lists them.")
            return
        names = st.multiselect("Uploaded files", uploads, default=uploads,   # a new key (all chosen) per set of files
                               key=f"logs_save_files_{content_digest(chr(0).join(uploads).encode())[:12]}")
        c1, c2 = st.columns(2)
        tags = c1.text_input("Tags (comma-separated)", key="logs_save_tags", placeholder="e.g. baseline, v100")
        dataset = c2.selectbox("Trained on", list(DATASET_LABELS), format_func=DATASET_LABELS.get,
                               key="logs_save_dataset", help="Gives the parameter count of known architectures.")
        if st.button("Save to the library", key="logs_save", icon=":material/save:", disabled=not names):
            bar = st.progress(0.0, text="Saving…")
            try:
                report = save_uploads_to_library(
                    library(), names, tags=tags.split(","), dataset=dataset,
                    progress=lambda done, total, label: bar.progress(done / max(total, 1),
                                                                     text=plain(f"{done}/{total}: {label}")))
            except (InputError, LibraryError) as exc:
                st.error(plain(str(exc)), icon=":material/error:")
                return
            finally:
                bar.empty()
            show_errors(report.errors)
            for result in report.results:
                st.caption((":material/check: " if result.added else ":material/info: ") + plain(result.message))
            st.success(plain(report.summary()), icon=":material/database:")
