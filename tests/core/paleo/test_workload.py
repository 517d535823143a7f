"""The work of a training step op by op (core.paleo.workload, core.paleo.torch_work)."""

from __future__ import annotations

import pytest
import torch

from core.errors import InputError
from core.paleo import load_net, load_workload, simulate, workload_from_net
from core.paleo.torch_bridge import torch_flops
from core.paleo.torch_work import LOSS_LAYER, trace_workload
from core.paleo.workload import SGD_MOMENTUM_ELEMENTS, UPDATE_LAYER, linear_ops


def test_a_spec_s_workload_counts_what_the_modern_cost_model_counts():
    net = load_net("alex_v2")
    w = workload_from_net(net)
    res = simulate(net, device="V100", batch_size=128, workers=(1,))
    # forward + backward FLOPs per image are those of the modern mode at any batch (linear in the batch),
    # plus the softmax Paleo prices at zero: one FLOP per element of its 1000 outputs, forward and backward
    assert (w.flops(128, phase="forward") + w.flops(128, phase="backward")) / 128 == pytest.approx(
        res.flops_per_image + 2 * 1000, rel=1e-12)
    assert w.flops(128, phase="forward") / 128 / 1e9 == pytest.approx(1.475, abs=1e-3)   # PALEO_MODEL.md sec. 7
    # the update: SGD with momentum reads and writes 5 FP32 values per parameter
    update = [o for o in w.ops if o.phase == "update"]
    assert [o.layer for o in update] == [UPDATE_LAYER] and update[0].fp32_elements == 5 * net.n_params


def test_spec_free_layers_are_priced_by_type():
    kinds = {o.op: o.kind for o in workload_from_net(load_net("densenet_cifar")).ops}
    assert kinds["BatchNorm"] == "norm" and kinds["Concatenate"] == "elementwise"
    assert kinds["Convolution"] == "conv" and kinds["Pooling"] == "pool"
    kinds = {o.op: o.kind for o in workload_from_net(load_net("resnet50")).ops}
    assert kinds["Elementwise"] == "elementwise" and kinds["InnerProduct"] == "matmul" and "Input" not in kinds


def test_linear_ops_are_exact_and_refuse_different_op_lists():
    # 100 weight elements + 50 per sample: (150, 200) at batches (1, 2) → 100 + 50·B
    op = linear_ops([("c", "conv", "conv", "forward", 20, 150, 0)], [("c", "conv", "conv", "forward", 40, 200, 0)],
                    1, 2, "toy")[0]
    assert (op.flops_fixed, op.flops_per_sample, op.elements_fixed, op.elements_per_sample) == (0, 20, 100, 50)
    with pytest.raises(InputError, match=r"toy: expected the same ops at batch 1 and 2; got 1 and 2 ops"):
        linear_ops([("c", "conv", "conv", "forward", 1, 1, 0)], [("c", "conv", "conv", "forward", 1, 1, 0)] * 2,
                   1, 2, "toy")


def test_a_traced_linear_layer_by_hand():
    w = trace_workload(torch.nn.Linear(8, 4), torch.empty(1, 8), name="fc")
    fwd = next(o for o in w.ops if o.op == "addmm")
    # addmm(bias, x, Wᵀ): reads 4 + 32 fixed and 8 per sample, writes 4 per sample; 2·8·4 FLOPs per sample
    assert (fwd.elements_fixed, fwd.elements_per_sample, fwd.flops_per_sample) == (36, 12, 64)
    # backward: dW = dYᵀ·X (no dX: the input needs no gradient), db = sum(dY)
    assert [(o.op, o.phase) for o in w.ops if o.phase == "backward" and o.kind == "matmul"] == [("mm", "backward")]
    assert w.n_params == 36 and w.ops[-1].fp32_elements == SGD_MOMENTUM_ELEMENTS * 36


@pytest.fixture(scope="module")
def resnet20():
    return load_workload("torch:resnet20")


def test_traced_flops_equal_torch_s_flop_counter(resnet20):
    counted = torch_flops("resnet20", batch_size=16)
    matrix = [o for o in resnet20.ops if o.kind in ("conv", "matmul")]
    assert sum(o.flops(16) for o in matrix if o.phase == "forward") == counted.forward
    assert sum(o.flops(16) for o in matrix if o.phase == "backward") == counted.backward


def test_ops_belong_to_their_layer_forward_and_backward(resnet20):
    ops = {(o.layer, o.op, o.phase) for o in resnet20.ops}
    # the block's F.relu and residual add belong to the block, in both passes
    assert {("blocks.0", "relu", "forward"), ("blocks.0", "add", "forward"),
            ("blocks.0", "threshold_backward", "backward")} <= ops
    # each convolution's backward is attributed to that convolution
    convs = {o.layer for o in resnet20.ops if o.op == "convolution"}
    assert len(convs) == 19 and convs == {o.layer for o in resnet20.ops if o.op == "convolution_backward"}
    assert ("blocks.0.bn1", "native_batch_norm_backward", "backward") in ops
    assert (LOSS_LAYER, "sum", "forward") in ops
    assert resnet20.layers()[-1] == UPDATE_LAYER


def test_torch_names_resolve_like_load_net():
    assert load_workload("alex_v2").counted.startswith("Paleo layer list")
    assert load_workload("resnet20").counted.startswith("aten ops")       # no spec has that name
