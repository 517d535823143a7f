"""The work of one training step, op by op: FLOPs and memory traffic, linear in the batch.

A :class:`Workload` is what the per-layer roofline (:mod:`core.paleo.roofline`) prices.
Each :class:`Op` belongs to a layer, has a *kind* (the efficiencies of the roofline depend on
it), a phase (forward, backward, update), and its FLOPs and tensor elements read + written
as ``fixed + per_sample · B``: every op of a feed-forward network is linear in the batch
(activations grow with it, weights do not), so two traces give the work at any batch
exactly.  Bytes follow the precision of the run (:data:`core.paleo.gpus.PRECISIONS`); the
optimizer's state is always FP32.

Counting conventions (labelled wherever a count is shown)
--------------------------------------------------------
* **FLOPs = 2 per multiply-add** for convolutions and matrix products (what
  ``torch.utils.flop_counter`` and NVIDIA's peaks count; ptflops/thop/fvcore print
  multiply-adds, half as many); every other op counts one FLOP per output element.
* Memory traffic = every input and output tensor of an op read or written once (no cache
  reuse across ops, no fusion: eager execution).

Builders: :func:`workload_from_net` (Paleo's layer list, no torch) and
:func:`core.paleo.torch_work.trace_workload` (every aten op of a torch training step).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from core.errors import InputError
from core.paleo.cost import layer_cost
from core.paleo.devices import Device
from core.paleo.gpus import PRECISIONS, check_precision
from core.paleo.layers import BYTES_FLOAT, Layer, Net

#: kinds of op; each has its own compute and memory efficiency in the roofline
KINDS = ("conv", "matmul", "norm", "elementwise", "pool")
#: kinds that run on tensor cores (the precision's matrix peak); the others on CUDA cores
MATRIX_KINDS = frozenset({"conv", "matmul"})
PHASES = ("forward", "backward", "update")
UPDATE_LAYER = "optimizer step"
#: SGD with momentum per parameter: read w, g, v and write w, v (5 FP32 elements);
#: v = μ·v + g and w -= lr·v (4 FLOPs)
SGD_MOMENTUM_ELEMENTS = 5
SGD_MOMENTUM_FLOPS = 4
BYTES_FP32 = 4
#: Paleo layer types priced as normalisations; other free types are element-wise
_NORM_TYPES = ("batchnorm", "layernorm", "groupnorm", "lrn", "norm")
#: Paleo layer types that move no data
_NO_WORK_TYPES = frozenset({"input", "block", "accuracy", "parameter"})
_UNIT = Device("unit", 1e9, 1.0, 1.0)   # any device: only FLOPs and bytes are read from it


@dataclass(frozen=True)
class Op:
    """One operation of a training step.

    Attributes
    ----------
    layer : str
        The layer (module path, or Paleo layer name) it belongs to.
    op : str
        The aten op (``"convolution_backward"``) or Paleo layer type (``"Convolution"``).
    kind : str
        One of :data:`KINDS`.
    phase : str
        One of :data:`PHASES`.
    flops_fixed, flops_per_sample : float
        FLOPs (2 per multiply-add) = ``flops_fixed + flops_per_sample · B``.
    elements_fixed, elements_per_sample : float
        Tensor elements read + written at the run's precision, same form.
    fp32_elements : float
        Elements always 4 bytes (optimizer state and master weights).
    """

    layer: str
    op: str
    kind: str
    phase: str
    flops_fixed: float
    flops_per_sample: float
    elements_fixed: float
    elements_per_sample: float
    fp32_elements: float = 0.0

    def flops(self, batch_size: float) -> float:
        """FLOPs at batch ``batch_size``."""
        return self.flops_fixed + self.flops_per_sample * batch_size

    def bytes(self, batch_size: float, precision: str) -> float:
        """Bytes read + written at batch ``batch_size`` in ``precision``."""
        elements = self.elements_fixed + self.elements_per_sample * batch_size
        return elements * PRECISIONS[precision] + self.fp32_elements * BYTES_FP32


@dataclass(frozen=True)
class Workload:
    """The ops of one training step (forward, backward, update) of one network.

    Attributes
    ----------
    name : str
        The net (``torch:resnet50``, ``alex_v2``).
    source : str
        Where the op list came from.
    ops : tuple of Op
        In execution order.
    n_params : int
        Trainable parameters (what data-parallel training synchronises).
    counted : str
        How the ops were counted (aten trace or Paleo layer list).
    """

    name: str
    source: str
    ops: tuple[Op, ...]
    n_params: int
    counted: str

    def flops(self, batch_size: float, *, phase: str | None = None) -> float:
        """FLOPs (2 per multiply-add) of the step, or of one phase, at ``batch_size``.

        Examples
        --------
        >>> w = Workload("toy", "hand", (Op("fc", "mm", "matmul", "forward", 0, 96, 12, 10),), 12, "hand")
        >>> w.flops(4)         # 96 FLOPs per sample: an 8 → 6 linear layer is 48 multiply-adds
        384.0
        """
        return float(sum(op.flops(batch_size) for op in self.ops if phase in (None, op.phase)))

    def bytes(self, batch_size: float, precision: str) -> float:
        """Bytes read + written by the whole step in ``precision``."""
        check_precision(precision)
        return float(sum(op.bytes(batch_size, precision) for op in self.ops))

    def gradient_bytes(self, precision: str) -> int:
        """Bytes of one gradient exchange: every parameter at the precision's element size."""
        return int(self.n_params * PRECISIONS[check_precision(precision)])

    def layers(self) -> tuple[str, ...]:
        """Layer names in the order they first run."""
        return tuple(dict.fromkeys(op.layer for op in self.ops))

    def table(self, batch_size: float, precision: str) -> pd.DataFrame:
        """One row per op: ``layer, op, kind, phase, flops, bytes`` at ``batch_size`` in ``precision``."""
        check_precision(precision)
        return pd.DataFrame(
            [(o.layer, o.op, o.kind, o.phase, o.flops(batch_size), o.bytes(batch_size, precision))
             for o in self.ops], columns=["layer", "op", "kind", "phase", "flops", "bytes"])


def linear_ops(small: Sequence[tuple], large: Sequence[tuple], b_small: int, b_large: int,
               where: str) -> tuple[Op, ...]:
    """Ops linear in the batch from the same op list counted at two batches.

    Each item is ``(layer, op, kind, phase, flops, elements, fp32_elements)``.

    Raises
    ------
    InputError
        If the two lists do not describe the same ops (a data-dependent network).

    Examples
    --------
    A convolution with 100 weight elements and 50 activation elements per sample:

    >>> linear_ops([("c", "conv", "conv", "forward", 20, 150, 0)],
    ...            [("c", "conv", "conv", "forward", 40, 200, 0)], 1, 2, "toy")[0].elements_per_sample
    50.0
    """
    if len(small) != len(large) or any(a[:4] != b[:4] for a, b in zip(small, large)):
        raise InputError(f"{where}: expected the same ops at batch {b_small} and {b_large}; got "
                         f"{len(small)} and {len(large)} ops that differ. Only networks whose ops do not "
                         "depend on the batch can be priced.")
    ops = []
    step = b_large - b_small
    for a, b in zip(small, large):
        f_per, e_per = (b[4] - a[4]) / step, (b[5] - a[5]) / step
        ops.append(Op(a[0], a[1], a[2], a[3], float(a[4] - f_per * b_small), float(f_per),
                      float(a[5] - e_per * b_small), float(e_per), float(a[6])))
    return tuple(ops)


def update_op(n_params: int) -> tuple:
    """The optimizer step as one op row: SGD with momentum on every parameter, in FP32."""
    return (UPDATE_LAYER, "sgd_momentum", "elementwise", "update", SGD_MOMENTUM_FLOPS * n_params, 0,
            SGD_MOMENTUM_ELEMENTS * n_params)


def _free_kind(layer: Layer) -> str | None:
    kind = layer.type.lower()
    if kind in _NO_WORK_TYPES or layer.kind == "input":
        return None
    return "norm" if any(t in kind for t in _NORM_TYPES) else "elementwise"


def _net_rows(net: Net, batch_size: int, free_layers: bool) -> list[tuple]:
    """``(layer, op, kind, phase, flops, elements, fp32)`` rows of Paleo's layer list at one batch."""
    rows: list[tuple] = []
    costed = {"conv2d": "conv", "innerproduct": "matmul", "pool2d": "pool", "dropout": "elementwise"}
    for layer in net.with_batch(batch_size).layers:
        if layer.kind in costed:
            for phase, direction in (("forward", "forward"), ("backward", "backward")):
                c = layer_cost(layer, _UNIT, direction=direction)
                rows.append((layer.name, layer.type, costed[layer.kind], phase, c.flops, c.bytes / BYTES_FLOAT, 0))
            continue
        kind = _free_kind(layer)
        if kind is None or not free_layers:
            continue
        n_in = sum(math.prod(s) for s in layer.inputs) or math.prod(layer.output)
        n_out = math.prod(layer.output)
        rows.append((layer.name, layer.type, kind, "forward", n_out, n_in + n_out, 0))
        # backward reads dY (and X for a normalisation) and writes dX
        rows.append((layer.name, layer.type, kind, "backward", n_in,
                     n_out + n_in + (n_in if kind == "norm" else 0), 0))
    rows.append(update_op(net.n_params))
    return rows


def workload_from_net(net: Net, *, free_layers: bool = True) -> Workload:
    """The workload of Paleo's layer list (modern mode's FLOPs and bytes per layer).

    Convolutions, inner products, pools and dropout are counted as the modern cost model
    counts them (:mod:`core.paleo.cost`); the layers Paleo prices at zero (batch norm,
    element-wise, concatenation, softmax) move their inputs and output once forward and
    dY, dX (and X for normalisations) backward; the update is SGD with momentum in FP32.
    Activations fused into a layer in Paleo's specs (ReLU) are not separate layers and are
    not counted: the torch trace (:func:`core.paleo.torch_work.trace_workload`) counts them.
    ``free_layers=False`` leaves out the layers Paleo prices at zero, as Paleo does.

    Examples
    --------
    >>> from core.paleo import load_net
    >>> w = workload_from_net(load_net("alex_v2"))
    >>> w.flops(128, phase="forward") / 128 / 1e9      # PALEO_MODEL.md section 7: 1.475 GFLOP/img
    1.47...
    """
    ops = linear_ops(_net_rows(net, 1, free_layers), _net_rows(net, 2, free_layers), 1, 2, net.name)
    free = "free layers by type" if free_layers else "free layers left out, as Paleo"
    return Workload(name=net.name, source=net.source, ops=ops, n_params=net.n_params,
                    counted=f"Paleo layer list (modern mode's FLOPs and bytes; {free})")
