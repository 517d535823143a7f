"""The traced layer lists and workloads in data/paleo/traced.json are what tracing the models gives today."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from core.models import MODEL_NAMES
from core.paleo import load_workload, net_from_model
from core.paleo.torch_bridge import net_from_model as trace
from core.paleo.torch_work import workload_from_model
from core.paleo.traced import traced_net, traced_workload

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_the_table_is_the_trace_layer_for_layer_and_op_for_op(name):
    assert traced_net(name) == trace(name)
    assert traced_workload(name) == workload_from_model(name)


def test_the_plan_pages_net_comes_from_the_table_without_torch_and_other_batches_are_traced():
    code = ("import sys\nfrom core.paleo import load_net, load_workload\n"
            "net, work = load_net('torch:resnet20'), load_workload('torch:resnet20')\n"
            "print(net.n_params, len(net.layers), len(work.ops), 'torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["269722", str(len(trace("resnet20").layers)),
                                  str(len(load_workload("resnet20").ops)), "False"]
    assert net_from_model("resnet8_1d", 4) == trace("resnet8_1d", 4)      # batch 4: traced, not the table
