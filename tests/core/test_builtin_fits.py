"""The fits stored with the built-in data (data/builtin_fits.json, made by data/make_builtin_fits.py, issue 35):
they equal the fits the code makes now, and a log other than the one a fit was made from is fitted afresh."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil

import pytest

from core.datasets import (
    BUILTIN_FIT_FAMILY,
    BUILTIN_FITS_FILE,
    BUILTIN_LOG_SETS,
    DATA_DIR,
    builtin_log_files,
    fitted_run,
    is_builtin_log,
    same_fit,
    stored_builtin_fits,
)
from core.errors import LogFormatError
from core.logs import MIN_FIT_POINTS, read_log, read_log_file
from core.runs import fit_metric, fit_run
from core.targets import target_for

STALE = "data/builtin_fits.json is stale: run python data/make_builtin_fits.py"


def _builtin_logs():
    """Every readable built-in log, read as the pages read it (``pages.shared.cached._read_builtin``)."""
    for key in BUILTIN_LOG_SETS:
        for name, path in builtin_log_files(key):
            try:
                yield key, read_log_file(path, source=name, min_points=MIN_FIT_POINTS)
            except LogFormatError:
                continue


BUILTIN_LOGS = list(_builtin_logs())


def test_every_builtin_log_has_one_stored_fit_and_nothing_else_is_stored():
    stored = json.loads((DATA_DIR / BUILTIN_FITS_FILE).read_text(encoding="utf-8"))["fits"]
    assert len(stored) == len(BUILTIN_LOGS) == 79, STALE        # 12 + 13 + 7 + 26 + 7 + 4 + 10 files
    names = [name for key in BUILTIN_LOG_SETS for name, _ in builtin_log_files(key)]
    assert [e["file"] for e in stored] == names, STALE
    assert {e["fingerprint"] for e in stored} == {log.fingerprint() for _, log in BUILTIN_LOGS}, STALE


@pytest.mark.parametrize("key", list(BUILTIN_LOG_SETS))
def test_the_stored_fits_equal_the_fits_made_now(key):
    stored = stored_builtin_fits()
    logs = [log for k, log in BUILTIN_LOGS if k == key]
    assert logs
    for log in logs:
        metric = fit_metric(log, target_for(log))
        entry = stored.get((log.fingerprint(), BUILTIN_FIT_FAMILY, metric))
        assert entry is not None, f"{log.source}: {STALE}"
        assert same_fit(entry, fit_run(log, family=BUILTIN_FIT_FAMILY, metric=metric)), f"{log.source}: {STALE}"


def test_the_first_mnist1d_fit_is_the_one_the_docs_report():
    # resnet8 on the Xeon, train loss: 1512 per-step points, b2 at its bound (no floor): read from the file
    log = next(log for k, log in BUILTIN_LOGS if k == "mnist1d")
    fit = fitted_run(log, metric="loss").fit
    assert log.source == "resnet8_Intel Xeon Processor.csv"
    assert fit.n_points == 1512 and fit.k_min == 1.0 and fit.k_max == 1512.0
    assert fit.flags == ("b2 at its lower bound 0 (no loss floor)",)


def test_a_log_of_other_content_under_a_builtin_name_is_fitted_afresh():
    # the same name, the loss halved: y = 0.5 * loss, so every fitted b of a + b/(k+c) scale by 0.5 too
    name, path = builtin_log_files("mnist1d")[0]
    builtin = read_log_file(path, source=name, min_points=MIN_FIT_POINTS)
    frame = builtin.frame[["global_step", "loss"]].dropna().assign(loss=lambda f: f["loss"] * 0.5)
    other = read_log(frame.rename(columns={"global_step": "step"}).to_csv(index=False).encode(), name)
    assert is_builtin_log(builtin) and not is_builtin_log(other)
    fresh = fitted_run(other, metric="loss")
    assert same_fit(fresh, fit_run(other, metric="loss"))
    assert not same_fit(fresh, fitted_run(builtin, metric="loss"))


def test_an_edited_builtin_log_is_not_the_stored_one():
    name, path = builtin_log_files("mnist1d")[0]
    edited = read_log_file(path, source=name, min_points=MIN_FIT_POINTS).with_meta(gpu="NVIDIA A100")
    assert not is_builtin_log(edited)


def test_without_the_stored_file_every_log_is_fitted(tmp_path):
    shutil.copytree(DATA_DIR / "logs", tmp_path / "logs")       # the data without builtin_fits.json
    name, path = builtin_log_files("mnist1d", data_dir=tmp_path)[0]
    log = read_log_file(path, source=name, min_points=MIN_FIT_POINTS)
    assert stored_builtin_fits(tmp_path) == {}
    assert not is_builtin_log(log, data_dir=tmp_path)
    assert same_fit(fitted_run(log, metric="loss", data_dir=tmp_path), fit_run(log, metric="loss"))


def test_same_fit_sees_a_change_in_the_ninth_digit_and_takes_nan_as_nan():
    log = BUILTIN_LOGS[0][1]
    run = fit_run(log, metric="loss")
    params = dict(run.fit.params, b0=run.fit.params["b0"] * (1 + 1e-8))
    assert not same_fit(run, dataclasses.replace(run, fit=dataclasses.replace(run.fit, params=params)))
    nan = dataclasses.replace(run.fit, r2=math.nan)
    assert same_fit(dataclasses.replace(run, fit=nan), dataclasses.replace(run, fit=nan))
    assert not same_fit(run, dataclasses.replace(run, problem="not fitted: too few points"))
