"""The Library page's deletion, restore and audit sections.

Whether Delete is offered is ``core.library.web_delete_policy`` (the server's
``TTA_LIBRARY_WEB_DELETE``, else on for the per-user file and off for a shared library); where it
is off the page says why and how to turn it on.  Restoring is always offered: it loses nothing.
The removed runs and the audit events come from ``core.library`` (``recently_deleted``,
``audit_log``).
"""

from __future__ import annotations

import streamlit as st

from core.errors import InputError, LibraryError
from core.library import (
    ACTOR_ENV_VAR,
    KEEP_DAYS_ENV_VAR,
    WEB_DELETE_ENV_VAR,
    audit_log,
    keep_days_setting,
    library_name,
    recently_deleted,
    web_delete_policy,
)
from pages.shared.common import LIBRARY_RUNS, plain

SELECTED = "library_selected"
PENDING_DELETE = "library_pending_delete"
NOTICE = "library_notice"
RESTORE_CHOICE = "library_restore_choice"


def delete_control(lib, column, chosen: list[int]) -> None:
    """The Delete button in ``column``, or, where the server does not allow it, why and how to turn it on."""
    policy = web_delete_policy(lib.store)
    if not policy.allowed:
        column.caption(plain(f"Deleting runs from the web is off: {policy.reason}.") + f" `{WEB_DELETE_ENV_VAR}=1` "
                       "where the server starts turns it on; `python -m core library rm ID` removes runs from the "
                       "command line.")
    elif column.button(f"Delete {len(chosen)} run(s)…", key="library_delete", icon=":material/delete:",
                       disabled=not chosen):
        st.session_state[PENDING_DELETE] = list(chosen)


def _delete_now(lib, ids: list[int], names: list[str]) -> None:
    """``on_click`` of the confirmation: remove the runs, unload them from this session, clear the choice
    (a callback runs before the widgets are drawn again, so it may reset the multiselect)."""
    try:
        allowed = web_delete_policy(lib.store).allowed   # the setting may have changed since the button was drawn
        removed = lib.remove(ids) if allowed else None
    except (LibraryError, InputError) as exc:
        st.session_state[NOTICE] = ("error", str(exc))
        return
    st.session_state[PENDING_DELETE] = []
    if removed is None:
        st.session_state[NOTICE] = ("error", f"Deleting runs is off: {web_delete_policy(lib.store).reason} "
                                             f"({WEB_DELETE_ENV_VAR}).")
        return
    for name in names:
        st.session_state.get(LIBRARY_RUNS, {}).pop(name, None)
    st.session_state[SELECTED] = []
    st.session_state[NOTICE] = ("success", f"Deleted {len(removed)} run(s) from the library; they can be restored "
                                           f"for {keep_days_setting():g} days (Recently deleted, below).")


def _cancel_delete() -> None:
    st.session_state[PENDING_DELETE] = []


def confirm_delete_section(lib, shown) -> None:
    pending = st.session_state.get(PENDING_DELETE)
    if not pending:
        return
    st.warning(f"Delete {len(pending)} run(s) from the library for every user? They can be restored for "
               f"{keep_days_setting():g} days, then they go for good with their series, fits and tags.",
               icon=":material/warning:")
    names = [library_name(int(r.run_id), r.source) for r in shown.itertuples() if int(r.run_id) in pending]
    c1, c2 = st.columns(2)
    c1.button("Yes, delete", key="library_delete_confirm", type="primary", icon=":material/delete_forever:",
              on_click=_delete_now, args=(lib, list(pending), names))
    c2.button("Cancel", key="library_delete_cancel", on_click=_cancel_delete)


def _restore_now(lib, ids: list[int]) -> None:
    try:
        restored = lib.restore(ids)
    except LibraryError as exc:
        st.session_state[NOTICE] = ("error", str(exc))
        return
    st.session_state[NOTICE] = ("success", f"Restored {len(restored)} run(s): " + ", ".join(f"#{i}" for i in restored)
                                + ".")
    st.session_state[RESTORE_CHOICE] = []


def removed_section(lib) -> None:
    """The runs deleted and not purged yet (until when each can be restored), and a button that brings the chosen
    ones back: offered whether or not the server allows deleting (restoring loses nothing)."""
    removed = recently_deleted(lib)
    if removed.empty:
        return
    st.subheader(f"Recently deleted ({len(removed)})")
    st.caption(f"Deleted runs stay restorable for {keep_days_setting():g} days (`{KEEP_DAYS_ENV_VAR}`); "
               "`python -m core library vacuum` deletes them for good after that.")
    st.dataframe(removed, hide_index=True, width="stretch", key="library_removed_table",
                 column_config={c: st.column_config.DatetimeColumn(f"{c.replace('_', ' ')} (UTC)",
                                                                   format="YYYY-MM-DD HH:mm")
                                for c in ("deleted_at", "restorable_until")})
    labels = {int(r.run_id): f"#{int(r.run_id)} {r.source}" for r in removed.itertuples()}
    if any(i not in labels for i in st.session_state.get(RESTORE_CHOICE, [])):
        st.session_state[RESTORE_CHOICE] = [i for i in st.session_state[RESTORE_CHOICE] if i in labels]
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    choice = c1.multiselect("Runs to restore", list(labels), format_func=lambda i: labels[i], key=RESTORE_CHOICE)
    c2.button(f"Restore {len(choice)} run(s)", key="library_restore", icon=":material/restore:",
              disabled=not choice, on_click=_restore_now, args=(lib, list(choice)))


def audit_section(lib) -> None:
    """Who did what: the latest audit events (adds, imports, removals, restores, purges)."""
    events = audit_log(lib)       # the latest (core's default count)
    with st.expander(f"Audit log: who did what (latest {len(events)})", icon=":material/history:"):
        st.caption("Every add, import, removal, restore and purge, latest first. The actor is "
                   f"`{ACTOR_ENV_VAR}` (or user@host) and, from this dashboard, the browser session's id; "
                   "`python -m core library log` prints the whole table.")
        st.dataframe(events, hide_index=True, width="stretch", key="library_audit_table",
                     column_config={"happened_at": st.column_config.DatetimeColumn("when (UTC)",
                                                                                   format="YYYY-MM-DD HH:mm:ss")})


def notice_section() -> None:
    """The outcome of the last action done in a callback (shown once)."""
    notice = st.session_state.pop(NOTICE, None)
    if notice is not None:
        kind, text = notice
        (st.success if kind == "success" else st.error)(plain(text))
