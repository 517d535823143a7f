"""The traced layer lists in data/paleo/traced_nets.json are what tracing the models gives today."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from core.models import MODEL_NAMES
from core.paleo import net_from_model
from core.paleo.torch_bridge import net_from_model as trace
from core.paleo.traced import traced_net

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_the_table_is_the_trace_layer_for_layer(name):
    assert traced_net(name) == trace(name)


def test_the_plan_pages_net_comes_from_the_table_without_torch_and_other_batches_are_traced():
    code = ("import sys\nfrom core.paleo import load_net\n"
            "net = load_net('torch:resnet20')\nprint(net.n_params, len(net.layers), 'torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["269722", str(len(trace("resnet20").layers)), "False"]
    assert net_from_model("resnet8_1d", 4) == trace("resnet8_1d", 4)      # batch 4: traced, not the table
