"""Issue 36: the Logs page's uploader takes TensorBoard event files and reads them through the reader registry,
as ``python -m core fit`` and ``library add`` do."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from core.cli import main
from tests.conftest import ROOT
from tests.pages.conftest import open_page

EVENTS = ROOT / "tests" / "data" / "sweep" / "tensorboard" / "resnet8_CPU-16" / "events.out.tfevents.0.sweep.0"
NAME = "events.out.tfevents.1700000000.host.123.0"          # as PyTorch's SummaryWriter names it


def test_an_uploaded_event_file_is_fitted_as_the_cli_fits_it(capsys, tmp_path):
    at = open_page("pages/logs.py")
    # no filter: the content decides (Streamlit filters by the name's ending, and event files end in .0, .v2 or a host)
    assert list(at.get("file_uploader")[0].proto.type) == []
    at.file_uploader(key="logs_upload_0").set_value([(NAME, EVENTS.read_bytes(), "application/octet-stream")]).run()
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    table = at.dataframe[0].value
    assert NAME in table.index
    row = table.loc[NAME]
    path = tmp_path / NAME                                                     # the same bytes, the same name
    path.write_bytes(EVENTS.read_bytes())
    assert main(["fit", str(path), "--no-extra"]) == 0
    cli = pd.read_csv(io.StringIO(capsys.readouterr().out)).iloc[0]
    assert row["n_points"] == cli["n_points"] == 500
    for name in ("b0", "b1", "b2"):
        assert row[name] == pytest.approx(cli[name], rel=1e-5), name
