"""Runs from a real MLflow tracking server into the library and forecasts back (issue 20).

The server is ``mlflow server`` with a SQLite backend on a free loopback port, started once for
the session (or the one ``TTA_TEST_MLFLOW_URI`` names, e.g. started by ``.ci/run``), and filled by
MLflow's own client with runs made from three built-in logs of ``data/logs``.
"""

from __future__ import annotations

import io
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.errors import InputError
from core.library import Library, fit_library
from core.library.mlflow_source import add_mlflow, forecast_to_mlflow, parse_source, run_digest
from core.logs import read_log
from core.runs.analysis import analyse_run
from core.targets import accuracy_target

ROOT = Path(__file__).resolve().parents[3]
LOGS = ROOT / "data" / "logs"
#: two built-in validation logs, their first ROWS rows (six epochs of 16 steps), so that filling the server is quick
NAMES = ("resnet8_Intel Xeon Processor_val.csv", "resnet20_Intel Xeon Processor_val.csv")
ROWS = 96


def built_in(name: str):
    """The first ``ROWS`` rows of a built-in log, read as a CSV log is."""
    lines = (LOGS / name).read_bytes().splitlines(keepends=True)
    return read_log(b"".join(lines[:ROWS + 1]), name)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _up(uri: str) -> bool:
    try:
        with urllib.request.urlopen(f"{uri}/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="session")
def mlflow_uri(tmp_path_factory):
    """A running MLflow tracking server: ``$TTA_TEST_MLFLOW_URI``, else one started here (SQLite, loopback)."""
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    given = os.environ.get("TTA_TEST_MLFLOW_URI")
    if given:
        yield given
        return
    exe = shutil.which("mlflow") or str(Path(sys.executable).with_name("mlflow"))
    folder = tmp_path_factory.mktemp("mlflow")
    port = _free_port()
    uri = f"http://127.0.0.1:{port}"
    log = open(folder / "server.log", "wb")
    proc = subprocess.Popen([exe, "server", "--backend-store-uri", f"sqlite:///{folder / 'mlflow.db'}",
                             "--default-artifact-root", str(folder / "artifacts"), "--host", "127.0.0.1",
                             "--port", str(port), "--workers", "1"], stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true"})
    try:
        deadline = time.monotonic() + 900          # a loaded machine: its migrations and imports take minutes
        while not _up(uri):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"mlflow server did not start: {(folder / 'server.log').read_text()[-2000:]}")
            time.sleep(0.5)
        yield uri
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def log_run(client, experiment_id: str, name: str, **params) -> str:
    """One built-in log as an MLflow run, logged as a training script would: loss, acc and epoch at every
    global step, wall-clock times from the log's time column; params and tags as given."""
    from mlflow.entities import Metric, Param, RunTag

    log = built_in(name)
    run = client.create_run(experiment_id, run_name=Path(name).stem, start_time=1_700_000_000_000)
    start = 1_700_000_000_000
    metrics = []
    for row in log.frame.itertuples():
        step, stamp = int(row.global_step), start + int(round(1000 * (row.time_s if row.time_s == row.time_s else 0)))
        metrics += [Metric("loss", float(row.loss), stamp, step), Metric("acc", float(row.acc), stamp, step),
                    Metric("epoch", float(row.epoch), stamp, step)]
    for i in range(0, len(metrics), 1000):
        client.log_batch(run.info.run_id, metrics=metrics[i:i + 1000])
    client.log_batch(run.info.run_id, params=[Param(k, str(v)) for k, v in params.items()],
                     tags=[RunTag("split", log.meta.split)])
    client.set_terminated(run.info.run_id, end_time=start + 3_600_000)
    return run.info.run_id


@pytest.fixture(scope="session")
def experiment(mlflow_uri):
    """An experiment of three runs made from built-in logs: ``(name, {file name: MLflow run id})``."""
    from mlflow import MlflowClient

    client = MlflowClient(mlflow_uri)
    name = f"builtin-{uuid.uuid4().hex[:8]}"
    experiment_id = client.create_experiment(name)
    ids = {}
    for i, file in enumerate(NAMES):
        params = {"device": "Intel Xeon Processor", "batch_size": 64}
        if i == 0:
            params["seq_len"] = 128
        ids[file] = log_run(client, experiment_id, file, **params)
    return name, ids


def test_parse_source_refuses_a_missing_uri():
    with pytest.raises(InputError, match="expected mlflow:TRACKING_URI"):
        parse_source("mlflow:#exp")


def test_add_reads_every_step_and_gives_the_fits_of_the_same_csv_logs(mlflow_uri, experiment, tmp_path):
    name, ids = experiment
    lib = Library(tmp_path / "lib.duckdb")
    done = add_mlflow(lib, f"mlflow:{mlflow_uri}#{name}", dataset="mnist1d")
    assert (done.n_listed, done.n_fetched, done.report.n_added, done.report.errors) == (2, 2, 2, ())
    table = lib.runs().set_index("source")
    assert sorted(table.index) == sorted(Path(f).stem for f in NAMES)
    for file, mlflow_id in ids.items():
        csv = built_in(file)
        row = table.loc[Path(file).stem]
        tags = row["tags"].split(",")
        assert "mlflow" in tags and f"mlflow-run:{mlflow_id}" in tags
        assert (row["model"], row["gpu"], row["split"], row["global_batch"], row["dataset"]) == \
            (csv.meta.model, "Intel Xeon Processor", csv.meta.split, 64, "mnist1d")
        stored = lib.get(int(row["run_id"]))
        assert stored.n_points == csv.n_points and stored.steps_per_epoch == csv.steps_per_epoch
        for column in ("global_step", "loss", "acc"):
            np.testing.assert_array_equal(stored.frame[column].to_numpy(), csv.frame[column].to_numpy())
        assert stored.frame["epoch"].tolist() == csv.frame["epoch"].tolist()
    assert "seq_len:128" in table.loc[Path(NAMES[0]).stem, "tags"].split(",")
    fits = fit_library(lib).table.set_index("model")
    for file in NAMES:
        csv = built_in(file)
        expected = analyse_run(csv).row()
        got = fits[(fits.index == csv.meta.model) & (fits["split"] == csv.meta.split)].iloc[0]
        for p in ("b0", "b1", "b2", "r2"):
            assert got[p] == pytest.approx(expected[p], rel=1e-9, abs=1e-15)
        assert pd.isna(got["epoch_to_target"]) == pd.isna(expected["epoch_to_target"])
        if not pd.isna(got["epoch_to_target"]):
            assert got["epoch_to_target"] == expected["epoch_to_target"]


def test_second_add_fetches_nothing_and_a_changed_run_replaces_its_older_version(mlflow_uri, experiment, tmp_path):
    from mlflow import MlflowClient
    from mlflow.entities import Metric

    name, ids = experiment
    source = f"mlflow:{mlflow_uri}#{name}"
    lib = Library(tmp_path / "lib.duckdb")
    first = add_mlflow(lib, source)
    lib.tag([int(lib.runs()["run_id"].iloc[0])], ["keep-me"])
    again = add_mlflow(lib, source)
    assert (again.n_listed, again.n_fetched, again.report.n_added, again.report.n_present) == (2, 0, 0, 2)
    assert {r.run_id for r in again.report.results} == {r.run_id for r in first.report.results}

    # a run of its own that logs one more point: only it is fetched again, and it replaces its older version
    client = MlflowClient(mlflow_uri)
    experiment_id = client.get_experiment_by_name(name).experiment_id
    extra = client.create_run(experiment_id, run_name="resnet14_A100").info.run_id
    client.log_batch(extra, metrics=[Metric("loss", 1.0 / (0.01 * k + 1.0) + 0.1, 1_700_000_000_000 + k, k)
                                     for k in range(1, 41)])
    assert add_mlflow(lib, source).n_fetched == 1
    before = lib.runs().set_index("run_id")
    old_id = int(before[before["tags"].str.contains(f"mlflow-run:{extra}")].index[0])
    lib.tag([old_id], ["keep-me"])
    client.log_metric(extra, "loss", 0.01, timestamp=1_700_003_700_000, step=10_000)
    third = add_mlflow(lib, source)
    assert (third.n_fetched, third.report.n_added, third.replaced) == (1, 1, (old_id,))
    after = lib.runs().set_index("run_id")
    assert len(after) == len(before) and old_id not in after.index
    new = after[after["tags"].str.contains(f"mlflow-run:{extra}")].iloc[0]
    assert new["n_points"] == before.loc[old_id, "n_points"] + 1 and "keep-me" in new["tags"].split(",")
    client.delete_run(extra)


def test_forecast_to_writes_tags_and_metrics_that_read_back_and_do_not_change_the_run(mlflow_uri, experiment,
                                                                                       tmp_path):
    from mlflow import MlflowClient

    name, ids = experiment
    source = f"mlflow:{mlflow_uri}#{name}"
    lib = Library(tmp_path / "lib.duckdb")
    add_mlflow(lib, source)
    run_id = ids[NAMES[0]]
    client = MlflowClient(mlflow_uri)
    digest = run_digest(client.get_run(run_id))
    table = forecast_to_mlflow(lib, source, run_ids=[run_id], target=accuracy_target(0.5), level=0.8)
    assert len(table) == 1 and table["mlflow_run_id"].iloc[0] == run_id
    row = table.iloc[0]
    # the run passed 50 % in its 5th epoch (as core.runs counts it): measured, 5 × 16 steps, × batch 64 as logged
    assert (row["method"], row["epochs"], row["steps"], row["samples"]) == ("measured", 5, 80, 5120)
    run = client.get_run(run_id)
    assert run.data.tags["tta.method"] == "measured" and run.data.tags["tta.target_acc"] == "0.5"
    assert run.data.metrics["tta_epochs_to_target"] == 5 and run.data.metrics["tta_samples_to_target"] == 5120
    assert run.data.metrics["tta_time_s_to_target"] == pytest.approx(row["time_s"])
    assert run_digest(run) == digest          # the forecast written back is not a change of the run
    assert add_mlflow(lib, source).n_fetched == 0


def test_cli_add_twice_then_forecast_to(mlflow_uri, experiment, tmp_path, capsys):
    name, ids = experiment
    db = str(tmp_path / "lib.duckdb")
    assert main(["library", "add", f"mlflow:{mlflow_uri}#{name}", "--db", db]) == 0
    out = capsys.readouterr()
    table = pd.read_csv(io.StringIO(out.out))
    assert sorted(table["status"]) == ["added"] * 2 and "2 run(s) listed, 2 fetched" in out.err
    assert main(["library", "add", f"mlflow:{mlflow_uri}#{name}", "--db", db]) == 0
    out = capsys.readouterr()
    assert sorted(pd.read_csv(io.StringIO(out.out))["status"]) == ["present"] * 2
    assert "2 run(s) listed, 0 fetched" in out.err
    run_id = ids[NAMES[1]]
    assert main(["library", "forecast-to", f"mlflow:{mlflow_uri}", "--experiment", name, "--run-id", run_id,
                 "--target-acc", "0.5", "--db", db]) == 0
    out = capsys.readouterr()
    assert pd.read_csv(io.StringIO(out.out))["mlflow_run_id"].tolist() == [run_id]


def test_an_unknown_experiment_is_refused_with_the_ones_there(mlflow_uri, experiment, tmp_path):
    with pytest.raises(InputError, match=f"expected an experiment named 'nope'.*{experiment[0]}"):
        add_mlflow(Library(tmp_path / "lib.duckdb"), f"mlflow:{mlflow_uri}#nope")


# --------------------------------------------------------------------------- bulk reading (issue 35)
#: the answer size the bulk tests ask for: two runs of 96 loss values fit in one answer, the long run (300) does not
CAP = 200


def log_series(client, experiment_id: str, name: str, series: dict, **params) -> str:
    """A run whose metrics are logged as ``series`` says: metric -> [(step, value), ...], one millisecond apart."""
    from mlflow.entities import Metric, Param

    run = client.create_run(experiment_id, run_name=name, start_time=1_700_000_000_000)
    metrics = [Metric(key, float(v), 1_700_000_000_000 + 1000 * i, int(step))
               for key, points in series.items() for i, (step, v) in enumerate(points)]
    for i in range(0, len(metrics), 1000):
        client.log_batch(run.info.run_id, metrics=metrics[i:i + 1000])
    client.log_batch(run.info.run_id, params=[Param(k, str(v)) for k, v in params.items()])
    client.set_terminated(run.info.run_id, end_time=1_700_003_600_000)
    return run.info.run_id


@pytest.fixture(scope="session")
def uneven(mlflow_uri):
    """Runs whose metrics are logged at different steps (loss every step, accuracy every 10th, epoch every step),
    and one run of 300 steps, more values of loss than one answer of CAP holds: ``(name, {run name: points})``."""
    from mlflow import MlflowClient

    client = MlflowClient(mlflow_uri)
    name = f"uneven-{uuid.uuid4().hex[:8]}"
    experiment_id = client.create_experiment(name)
    points = {}
    for file in NAMES:
        frame = built_in(file).frame
        steps = frame["global_step"].astype(int).tolist()
        series = {"loss": list(zip(steps, frame["loss"])), "epoch": list(zip(steps, frame["epoch"])),
                  "acc": [(s, a) for s, a in zip(steps, frame["acc"]) if s % 10 == 0]}
        log_series(client, experiment_id, Path(file).stem, series, steps_per_epoch=16, batch_size=64)
        points[Path(file).stem] = {k: len(v) for k, v in series.items()}
    k = np.arange(1, 301)
    long = {"loss": list(zip(k, 2.0 / (0.02 * k + 1.0) + 0.05)),
            "acc": list(zip(k[::10], 0.9 - 0.8 / (0.02 * k[::10] + 1)))}
    log_series(client, experiment_id, "resnet32_V100-64", long, steps_per_epoch=30)
    points["resnet32_V100-64"] = {"loss": 300, "acc": 30}
    return name, points


def test_bulk_reader_gives_every_value_get_metric_history_gives(mlflow_uri, uneven):
    from mlflow import MlflowClient

    from core.library.mlflow_bulk import HistoryReader, scalars_of
    from core.library.mlflow_source import list_runs

    name, points = uneven
    client = MlflowClient(mlflow_uri)
    runs = list_runs(client, [client.get_experiment_by_name(name).experiment_id])
    reader = HistoryReader(client, max_results=CAP)
    got = dict(reader.scalars(runs))
    assert reader.note is None and reader.requests >= 3          # in bulk, one metric a request at least
    assert reader.reread == 1                                    # the long run's loss, paged through alone
    for run in runs:
        expected = scalars_of(client, run)
        pd.testing.assert_frame_equal(got[run], expected)
        counts = expected.groupby("tag").size().to_dict()
        assert counts == points[run.info.run_name]


def test_bulk_reader_reads_on_where_an_answer_is_cut(mlflow_uri):
    """Metrics logged without a step (all at step 0): the run list's latest step says one value, so many runs are
    asked for at once, the server cuts the answer at 50 values, and the reader asks again from the cut run on."""
    from mlflow import MlflowClient

    from core.library.mlflow_bulk import HistoryReader, scalars_of
    from core.library.mlflow_source import list_runs

    client = MlflowClient(mlflow_uri)
    experiment_id = client.create_experiment(f"step0-{uuid.uuid4().hex[:8]}")
    for r in range(6):
        log_series(client, experiment_id, f"run{r}", {"loss": [(0, 1.0 / (i + r + 1)) for i in range(20)]})
    runs = list_runs(client, [experiment_id])
    reader = HistoryReader(client, max_results=50)
    got = list(reader.scalars(runs))
    # 120 values, at most 49 of them complete a request: at least three requests, and no history read alone
    assert reader.requests >= 3 and reader.reread == 0
    for run, frame in got:
        assert len(frame) == 20
        pd.testing.assert_frame_equal(frame, scalars_of(client, run))


def test_bulk_import_gives_the_series_and_fits_of_the_per_metric_import(mlflow_uri, uneven, tmp_path):
    name, points = uneven
    source = f"mlflow:{mlflow_uri}#{name}"
    bulk, per = Library(tmp_path / "bulk.duckdb"), Library(tmp_path / "per.duckdb")
    done = add_mlflow(bulk, source, max_results=CAP)
    slow = add_mlflow(per, source, bulk=False)
    assert (done.report.n_added, done.report.errors, done.note) == (3, (), None) and done.n_requests >= 3
    assert (slow.report.n_added, slow.n_requests) == (3, 0)
    a, b = bulk.runs().set_index("source"), per.runs().set_index("source")
    assert sorted(a.index) == sorted(points)
    for run in points:
        x, y = bulk.get(int(a.loc[run, "run_id"])), per.get(int(b.loc[run, "run_id"]))
        pd.testing.assert_frame_equal(x.frame, y.frame)
        assert x.n_points == points[run]["loss"]                 # one row a loss value: none lost, none added
    assert a.loc["resnet32_V100-64", "n_points"] == 300
    fa = fit_library(bulk).table.set_index("file").sort_index()
    fb = fit_library(per).table.set_index("file").sort_index()
    assert len(fa) == 3
    pd.testing.assert_frame_equal(fa[["b0", "b1", "b2", "r2", "epoch_to_target"]],
                                  fb[["b0", "b1", "b2", "r2", "epoch_to_target"]])


class _NoBulkRoute:
    """A real HTTP proxy in front of the tracking server that forwards ``/api/`` and answers 404 to the rest
    (``/ajax-api/``, where the bulk route lives), as a gateway that exposes MLflow's REST API only does."""

    def __init__(self, upstream: str):
        import http.server
        import threading

        class Handler(http.server.BaseHTTPRequestHandler):
            def _forward(self):
                if not self.path.startswith("/api/"):
                    self.send_error(404)
                    return
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
                request = urllib.request.Request(upstream + self.path, data=body, method=self.command,
                                                 headers={"Content-Type": self.headers.get("Content-Type", "")})
                try:
                    with urllib.request.urlopen(request, timeout=60) as response:
                        status, data = response.status, response.read()
                except urllib.error.HTTPError as err:
                    status, data = err.code, err.read()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_DELETE = _forward

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.uri = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_a_server_without_the_bulk_route_is_read_per_metric_and_the_cli_says_so(mlflow_uri, uneven, tmp_path,
                                                                                capsys):
    name, points = uneven
    proxy = _NoBulkRoute(mlflow_uri)
    try:
        lib = Library(tmp_path / "lib.duckdb")
        done = add_mlflow(lib, f"mlflow:{proxy.uri}#{name}")
        assert done.report.n_added == 3 and 1 <= done.n_requests <= 2     # those that answered 404 (2 in flight)
        assert "HTTP 404" in done.note and "get_metric_history" in done.note
        table = lib.runs().set_index("source")
        assert {run: int(table.loc[run, "n_points"]) for run in points} == {r: p["loss"] for r, p in points.items()}
        assert main(["library", "add", f"mlflow:{proxy.uri}#{name}", "--db", str(tmp_path / "cli.duckdb")]) == 0
        err = capsys.readouterr().err
        assert "3 run(s) listed, 3 fetched; read one metric history per request (get_metric_history): the server " \
               "answered HTTP 404 to its bulk route /ajax-api/2.0/mlflow/metrics/get-history-bulk" in err
    finally:
        proxy.close()


def test_a_sqlite_tracking_uri_is_read_per_metric_and_says_so(tmp_path):
    from mlflow import MlflowClient

    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    client = MlflowClient(uri)
    experiment_id = client.create_experiment("local")
    log_run(client, experiment_id, NAMES[0], device="Intel Xeon Processor", batch_size=64)
    lib = Library(tmp_path / "lib.duckdb")
    done = add_mlflow(lib, f"mlflow:{uri}#local")
    assert done.report.n_added == 1 and done.n_requests == 0
    assert done.note == (f"read one metric history per request (get_metric_history): {uri} is not an HTTP "
                         "tracking server, so it has no bulk route")
    stored = lib.get(int(lib.runs()["run_id"].iloc[0]))
    csv = built_in(NAMES[0])
    np.testing.assert_array_equal(stored.frame["loss"].to_numpy(), csv.frame["loss"].to_numpy())
