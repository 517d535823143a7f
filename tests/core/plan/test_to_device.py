"""``plan_on_device`` from the logs' metadata alone (uploads and built-in sets have no file beside a systems
JSON) gives the plan that reading the files gives."""

from __future__ import annotations

import pandas as pd
import pytest

from core.datasets import builtin_log_files
from core.errors import InputError
from core.logs import read_log_file
from core.plan import plan_on_device


@pytest.fixture(scope="module")
def gb200_8():
    files = [(n, p) for n, p in builtin_log_files("mlperf_llama8b") if "ngpu8_" in n]
    return [read_log_file(p, source=n) for n, p in files], [p for _, p in files]


@pytest.mark.parametrize("device", ["GB200", "B200"])
def test_the_logs_metadata_gives_the_plan_their_files_give(gb200_8, device):
    logs, paths = gb200_8
    assert {log.target.spec for log in logs} == {"eval_accuracy<=3.3"}       # the logs' own: log-perplexity
    from_files = plan_on_device(logs, paths, device, [8, 64])
    from_meta = plan_on_device(logs, None, device, [8, 64])
    pd.testing.assert_frame_equal(from_meta.table, from_files.table, rtol=1e-9)
    assert any("source 8×GB200" in f for f in from_meta.flags)


def test_a_log_without_its_device_is_refused_with_its_name(gb200_8):
    logs, _ = gb200_8
    nameless = [log.with_meta(accelerator=None, gpu=None) for log in logs]
    with pytest.raises(InputError, match=r"ngpu8_ngc25.09_nemo/result_0.txt: expected the source device"):
        plan_on_device(nameless, None, "B200", [8])
