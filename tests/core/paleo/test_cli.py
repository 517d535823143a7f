"""``python -m core paleo``: CSV output, --list, one-line errors with exit status 2."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from tests.conftest import TEST_DATA


def _validation_sample() -> Path:
    return TEST_DATA / "paleo" / "validation_sample.csv"


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["paleo", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("net", ["alex_v2", "inception_v3"])
def test_cli_reproduces_the_validation_sample(capsys, net):
    ref = pd.read_csv(_validation_sample())
    ref = ref[ref.net == net].reset_index(drop=True)
    r = ref.iloc[0]
    code, out, err = _run(
        capsys, "--net", net, "--device", r.device, "--network", r.network,
        "--batch", str(r.batch_size_arg), "--workers", ",".join(map(str, ref.workers)),
        "--scaling", r.scaling, "--ppp-comp", str(r.ppp_comp), "--ppp-comm", str(r.ppp_comm),
        "--paleo-compatible")
    assert code == 0 and err == ""
    got = pd.read_csv(io.StringIO(out))
    assert list(got.columns[:len(ref.columns)]) == list(ref.columns)
    numeric = [c for c in ref.columns if pd.api.types.is_float_dtype(ref[c])]
    np.testing.assert_allclose(got[numeric].to_numpy(float), ref[numeric].to_numpy(float),
                               rtol=1e-12, atol=0)
    assert (got.net == ref.net).all() and (got.workers == ref.workers).all()


@pytest.mark.slow
def test_cli_modern_mode_has_the_extra_schemes(capsys):
    code, out, _ = _run(capsys, "--net", "torch:resnet20", "--device", "A100",
                        "--network", "infiniband_hdr", "--workers", "1,2")
    frame = pd.read_csv(io.StringIO(out))
    assert code == 0 and len(frame) == 2
    assert {"comm_RingAllReduce_ms", "comm_ParameterServer_p2_ms", "comm_ParameterServer_p4_ms",
            "naive_peak_img_s", "speedup_TreeAllReduce"} <= set(frame.columns)
    assert frame.net.tolist() == ["torch:resnet20"] * 2 and not frame.paleo_compatible.any()


def test_cli_pipeline_flag(capsys):
    _, plain, _ = _run(capsys, "--net", "vgg16", "--device", "K80", "--workers", "1")
    _, piped, _ = _run(capsys, "--net", "vgg16", "--device", "K80", "--workers", "1", "--pipeline")
    a, b = (pd.read_csv(io.StringIO(t)) for t in (plain, piped))
    assert b.use_pipeline.all() and b.time_comp_ms[0] < a.time_comp_ms[0]


def test_cli_list(capsys):
    code, out, _ = _run(capsys, "--list")
    frame = pd.read_csv(io.StringIO(out))
    assert code == 0 and list(frame.columns) == ["kind", "name", "description"]
    pairs = set(zip(frame.kind, frame.name))
    assert {("spec", "alex_v2"), ("spec", "resnet50"), ("model", "torch:resnet50"),
            ("device", "K80"), ("device", "A100"), ("device", "H100"), ("network", "ethernet"),
            ("network", "nvlink3")} <= pairs


@pytest.mark.parametrize("argv, pattern", [
    ((), r"^--net: expected a spec path or a net name; got nothing"),
    (("--net", "alex_v2_4gpu"), r"^alex_v2_4gpu.json: expected a data-parallel spec"),
    (("--net", "alexnet"), r"^net: expected a .json spec path"),
    (("--net", "alex_v2", "--workers", "1,two"), r"^--workers: expected comma-separated integers"),
    (("--net", "alex_v2", "--workers", "0,1"), r"^workers: expected an int >= 1; got 0"),
    (("--net", "alex_v2", "--batch", "12.5"), r"^--batch: expected an integer; got '12.5'\. Give e\.g\. 128\.$"),
    (("--net", "alex_v2", "--ppp-comp", "-1"), r"^ppp_comp: expected a finite number > 0; got -1.0"),
    (("--net", "alex_v2", "--ppp-comm", "fast"), r"^--ppp-comm: expected a number; got 'fast'\. Give e\.g\. 0\.62\.$"),
    (("--net", "alex_v2", "--scaling", "medium"), r"^scaling: expected one of weak, strong"),
    (("--net", "alex_v2", "--device", "K81"), r"^device: expected one of P100, V100_SXM2"),
    (("--net", "alex_v2", "--network", "wifi"), r"^network: expected one of aws"),
])
def test_cli_bad_input_prints_one_line_and_exits_2(capsys, argv, pattern):
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert re.search(pattern, err)
