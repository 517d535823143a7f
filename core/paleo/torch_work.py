"""Count the work of a torch training step, aten op by aten op, on the meta device.

:func:`trace_workload` runs ``forward``, ``loss.backward()`` of a copy of the module on the
**meta** device (shapes only: no memory, no arithmetic) under a ``TorchDispatchMode`` that
sees every aten op torch runs, backward ops included, and records its FLOPs (torch's own
formulas, ``torch.utils.flop_counter``: 2 per multiply-add; one per output element for ops
without a formula) and the elements of its input and output tensors.  Views (``view``,
``t``, ``expand``, ``detach`` ...) and allocations (``empty``) move no data and are left out.

Each op is attributed to a layer, the innermost module running it: in the forward pass from
a stack kept by module hooks; in the backward pass from the autograd node being evaluated,
whose sequence number a ``TorchFunctionMode`` tied to the module that created it.  So the
``F.relu`` and the residual ``+`` inside a ResNet block belong to the block, and their
backward ops too; ops outside the model (the loss) to ``"(loss)"``.  The trace is run at
two batches and every op made linear in the batch (:func:`core.paleo.workload.linear_ops`).
"""

from __future__ import annotations

import bisect
import copy
import math

import torch
from torch import nn
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves
from torch.utils.flop_counter import flop_registry

from core.paleo.workload import Workload, linear_ops, update_op

LOSS_LAYER = "(loss)"
#: aten ops by kind; every other op that moves data is "elementwise"
_KIND_OF = {
    **dict.fromkeys(("convolution", "convolution_backward", "_convolution", "mkldnn_convolution",
                     "cudnn_convolution", "conv2d", "conv1d"), "conv"),
    **dict.fromkeys(("mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "_scaled_dot_product_flash_attention",
                     "_scaled_dot_product_efficient_attention", "_scaled_dot_product_attention_math",
                     "_scaled_dot_product_flash_attention_backward",
                     "_scaled_dot_product_efficient_attention_backward"), "matmul"),
    **dict.fromkeys(("native_batch_norm", "native_batch_norm_backward", "_native_batch_norm_legit",
                     "_native_batch_norm_legit_functional", "_native_batch_norm_legit_no_training",
                     "batch_norm_backward", "native_layer_norm", "native_layer_norm_backward",
                     "native_group_norm", "native_group_norm_backward"), "norm"),
    **dict.fromkeys(("max_pool2d_with_indices", "max_pool2d_with_indices_backward", "avg_pool2d",
                     "avg_pool2d_backward", "_adaptive_avg_pool2d", "_adaptive_avg_pool2d_backward",
                     "adaptive_max_pool2d", "adaptive_max_pool2d_backward", "max_pool1d", "avg_pool1d"), "pool"),
}
#: allocations: no data moved
_NO_TRAFFIC = frozenset({"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "lift_fresh"})


def _tensors(tree) -> list[torch.Tensor]:
    return [t for t in tree_leaves(tree) if isinstance(t, torch.Tensor)]


class _Attribution(TorchFunctionMode):
    """Ties each autograd node created in forward to the module that was running."""

    def __init__(self, stack: list[str]) -> None:
        super().__init__()
        self.stack = stack
        self.node_layer: dict[int, str] = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        layer = self.stack[-1] if self.stack else LOSS_LAYER
        for t in _tensors(out):
            if t.grad_fn is not None:
                self.node_layer.setdefault(t.grad_fn._sequence_nr(), layer)
        return out

    def layer_of_node(self, node) -> str:
        """The layer of a backward node: the one recorded at its sequence number, or at the next one
        recorded after it (nodes created inside one torch function all precede its output's)."""
        seqs = sorted(self.node_layer)
        i = bisect.bisect_left(seqs, node._sequence_nr())
        return self.node_layer[seqs[i]] if i < len(seqs) else LOSS_LAYER


class _Counter(TorchDispatchMode):
    """Records ``(layer, op, kind, phase, flops, elements, 0)`` for every aten op that moves data."""

    def __init__(self, stack: list[str], attribution: _Attribution) -> None:
        super().__init__()
        self.stack = stack
        self.attribution = attribution
        self.rows: list[tuple] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = func.overloadpacket.__name__
        if func.is_view or name in _NO_TRAFFIC:
            return out
        node = torch._C._current_autograd_node()
        if node is None:
            phase, layer = "forward", (self.stack[-1] if self.stack else LOSS_LAYER)
        else:
            phase, layer = "backward", self.attribution.layer_of_node(node)
        outputs = _tensors(out)
        if func.overloadpacket in flop_registry:
            flops = flop_registry[func.overloadpacket](*args, **kwargs, out_val=out)
        else:
            flops = sum(math.prod(t.shape) for t in outputs)
        elements = sum(math.prod(t.shape) for t in [*_tensors((args, kwargs)), *outputs])
        self.rows.append((layer, name, _KIND_OF.get(name, "elementwise"), phase, float(flops), float(elements), 0))
        return out


def _rows(module: nn.Module, example_shape: tuple[int, ...], root: str) -> list[tuple]:
    model = copy.deepcopy(module).to("meta").train()
    names = {m: (n or root) for n, m in model.named_modules()}
    stack: list[str] = []

    def enter(mod: nn.Module, args) -> None:
        stack.append(names[mod])

    def leave(mod: nn.Module, args, out) -> None:
        stack.pop()

    handles = []
    for m in model.modules():
        handles += [m.register_forward_pre_hook(enter), m.register_forward_hook(leave)]
    x = torch.empty(example_shape, device="meta")
    attribution = _Attribution(stack)
    counter = _Counter(stack, attribution)
    try:
        with attribution, counter:
            model(x).sum().backward()
    finally:
        for h in handles:
            h.remove()
    n_params = int(sum(p.numel() for p in model.parameters() if p.requires_grad))
    return [*counter.rows, update_op(n_params)]


def trace_workload(module: nn.Module, example_input: torch.Tensor, *, name: str,
                   source: str = "torch module") -> Workload:
    """Every aten op of one training step of ``module`` (forward, backward, SGD-momentum update).

    Parameters
    ----------
    module : torch.nn.Module
        Any device; a copy is moved to ``meta`` (the original is not touched).
    example_input : torch.Tensor
        An input batch (only its shape is used; its batch size is replaced).
    name, source : str
        For results.

    Returns
    -------
    Workload
        Ops linear in the batch (traced at batches 2 and 4).

    Examples
    --------
    One linear layer 8 → 4: forward ``addmm`` 2·8·4 = 64 FLOPs per sample; backward ``mm``
    for dW (64 per sample) and none for dX (the input needs no gradient):

    >>> w = trace_workload(torch.nn.Linear(8, 4), torch.empty(1, 8), name="fc")
    >>> [(o.layer, o.op, o.phase, o.flops_per_sample) for o in w.ops if o.kind == "matmul"]
    [('Linear', 'addmm', 'forward', 64.0), ('Linear', 'mm', 'backward', 64.0)]
    """
    shape = tuple(int(v) for v in example_input.shape[1:])
    root = type(module).__name__
    small, large = (_rows(module, (b, *shape), root) for b in (2, 4))
    ops = linear_ops(small, large, 2, 4, name)
    n_params = int(sum(p.numel() for p in module.parameters() if p.requires_grad))
    return Workload(name=name, source=source, ops=ops, n_params=n_params,
                    counted="aten ops of one training step (torch dispatch on the meta device)")


def workload_from_model(model_name: str) -> Workload:
    """The traced workload of a :mod:`core.models` architecture, named ``torch:<model_name>``.

    Examples
    --------
    ResNet-20: forward 2 x 40.55 M multiply-adds per image (as ``torch_flops``):

    >>> w = workload_from_model("resnet20")
    >>> w.name, w.n_params, round(w.flops(1, phase="forward") / 1e6, 1) >= 81.1
    ('torch:resnet20', 269722, True)
    """
    from core.models import build_model, example_input

    with torch.device("meta"):
        model = build_model(model_name)
    return trace_workload(model, example_input(model_name, 1), name=f"torch:{model_name}",
                          source=f"core.models.{model_name}")
