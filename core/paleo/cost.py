"""Paleo's per-layer cost model: FLOPs and memory traffic to milliseconds.

Faithful mode (``paleo_compatible=True``) follows ``paleo/profilers/flops_profiler.py``
with ``--use_only_gemm`` operation for operation, in the same floating-point order:

* ``Tc(flops) = max(1 cycle, flops / 1e9 / peak_GFLOPS · 1e3 / ppp_comp)`` ms (0 if no FLOPs);
* ``Tm(bytes) = max(1 cycle, bytes / 2**30 / mem_bandwidth · 1e3 / ppp_comp)`` ms: device
  memory in **GiB/s** and scaled by the *compute* PPP; every ``Tm`` call has its own floor;
* a layer's time is ``comp + mem`` (``max`` of the two with pipelining);
* conv forward = one GEMM (padded input read, filter, output write); conv backward = a data
  gradient and a filter gradient, each a GEMM on a "dummy" conv with TensorFlow's
  ``ConvBackprop*`` padding and holes (the data gradient is skipped for a conv reading
  ``data``; a geometry whose dummy convs do not give back the input and filter shapes, on
  which the original stops with an assertion, raises ``InputError``); inner product: three
  GEMMs; pooling and dropout: backward = forward;
* apply (``w -= lr·dw``) = ``Tc(2·#params) + 3·Tm(param bytes)`` at **PPP 1**, whatever
  ``ppp_comp`` says (Paleo builds it with fresh options).

Modern mode (the default) changes only what is listed here:

* device memory in decimal GB/s (datasheets are decimal);
* conv backward counts exactly what the GEMMs do: data and filter gradients each cost the
  forward FLOPs (as ``torch.utils.flop_counter`` counts them), reading/writing dY, W, dX
  and X, dY, dW: no dummy-conv holes or padding, so a fully connected layer written as a
  convolution no longer costs 25-49x its forward;
* apply uses ``ppp_comp`` like every other device term.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import InputError
from core.paleo.devices import Device
from core.paleo.layers import BYTES_FLOAT, Layer


@dataclass(frozen=True)
class LayerCost:
    """Time and work of one layer in one pass (or of the update step).

    Attributes
    ----------
    comp_ms : float
        Arithmetic time, ms.
    mem_ms : float
        Device-memory traffic time, ms (Paleo calls it ``comm_time``).
    total_ms : float
        ``comp_ms + mem_ms``, accumulated in Paleo's order.
    flops : float
        Floating-point operations counted (2 per multiply-add).
    bytes : float
        Device-memory bytes read and written that ``mem_ms`` prices (4 per element).
    """

    comp_ms: float = 0.0
    mem_ms: float = 0.0
    total_ms: float = 0.0
    flops: float = 0.0
    bytes: float = 0.0

    @property
    def lowerbound_ms(self) -> float:
        """``max(comp, mem)``: Paleo's perfect-pipelining time."""
        return max(self.comp_ms, self.mem_ms)

    def __add__(self, other: LayerCost) -> LayerCost:
        return LayerCost(self.comp_ms + other.comp_ms, self.mem_ms + other.mem_ms,
                         self.total_ms + other.total_ms, self.flops + other.flops,
                         self.bytes + other.bytes)


_ZERO = LayerCost(0, 0, 0, 0, 0)


def _prod(shape) -> int:
    result = 1
    for v in shape:
        result *= v
    return result


class _Model:
    """Tc/Tm of one device at one PPP (private: the public entry points are below)."""

    def __init__(self, device: Device, ppp_comp: float, paleo_compatible: bool) -> None:
        self.peak = float(device.peak_gflops)
        self.bw = float(device.mem_bandwidth_gbs)
        self.clock_ms = 1 / device.clock_mhz / 10 ** 3
        self.ppp = ppp_comp
        self.unit = 2 ** 30 if paleo_compatible else 10 ** 9
        self.faithful = paleo_compatible

    def tc(self, flops: float) -> float:
        if not flops:
            return 0
        time_ms = flops / 10 ** 9 / self.peak * 10 ** 3
        time_ms /= self.ppp
        return max(self.clock_ms, time_ms)

    def tm(self, n_bytes: float) -> float:
        time_ms = n_bytes / self.unit / self.bw * 10 ** 3
        time_ms /= self.ppp
        return max(self.clock_ms, time_ms)

    def cost(self, flops: float, *byte_counts: float) -> LayerCost:
        comp = self.tc(flops)
        mem = 0
        for i, n_bytes in enumerate(byte_counts):
            mem = self.tm(n_bytes) if i == 0 else mem + self.tm(n_bytes)
        return LayerCost(comp, mem, comp + mem, flops, float(sum(byte_counts)))

    # ------------------------------------------------------------------ convolution
    def gemm(self, inputs, filters, pad, out, holes_inputs=0.0, holes_filters=0.0) -> LayerCost:
        """``_profile_conv2d_gemm``: FLOPs and three memory terms of one conv as a GEMM."""
        flops = 2 * filters[0] * filters[1] * filters[2]
        flops *= out[1] * out[2] * filters[3]
        flops *= inputs[0]
        flops *= (1.0 - holes_filters)
        if holes_inputs > 0:
            flops += 2 * _prod(inputs) * (1.0 - holes_inputs)
        padded = inputs[0] * (inputs[1] + 2 * pad[0]) * (inputs[2] + 2 * pad[1]) * inputs[3]
        return self.cost(flops, padded * BYTES_FLOAT,
                         _prod(filters) * (1.0 - holes_filters) * BYTES_FLOAT,
                         _prod(out) * BYTES_FLOAT)

    def conv_forward(self, layer: Layer) -> LayerCost:
        return self.gemm(layer.input, layer.filters, layer.pad, layer.output)

    def conv_backward(self, layer: Layer) -> LayerCost:
        if not self.faithful:
            return self._conv_backward_exact(layer)
        data = _dummy_data_gradient(layer)
        filt = _dummy_filter_gradient(layer)
        if data[3] != layer.input or filt[3][1:3] != layer.filters[:2]:
            raise InputError(
                f"layer {layer.name!r}: expected a convolution whose gradient Paleo can model; "
                f"got a {layer.filters[0]}x{layer.filters[1]} filter, stride {layer.strides}, "
                f"pad {layer.pad} on {layer.input[1]}x{layer.input[2]} (the original program "
                "stops with an assertion here). Use the modern mode (paleo_compatible=False).")
        t_data = self.gemm(*data) if layer.backprop else _ZERO
        return t_data + self.gemm(*filt)

    def _conv_backward_exact(self, layer: Layer) -> LayerCost:
        x, w, y = layer.input, layer.filters, layer.output
        fwd_flops = 2 * w[0] * w[1] * w[2] * y[1] * y[2] * w[3] * x[0]
        bx, bw, by = (_prod(s) * BYTES_FLOAT for s in (x, w, y))
        t_filter = self.cost(fwd_flops, bx, by, bw)          # read X, dY; write dW
        if not layer.backprop:
            return _ZERO + t_filter
        return self.cost(fwd_flops, by, bw, bx) + t_filter   # read dY, W; write dX

    # ------------------------------------------------------------------ other layers
    def inner_product(self, x, w, y) -> LayerCost:
        flops = 2 * _prod(x) * w[-1]
        return self.cost(flops, _prod(x) * BYTES_FLOAT, _prod(w) * BYTES_FLOAT,
                         _prod(y) * BYTES_FLOAT)

    def innerproduct_forward(self, layer: Layer) -> LayerCost:
        x, y = layer.input, layer.output
        return self.inner_product(x, (x[1], y[1]), y)

    def innerproduct_backward(self, layer: Layer) -> LayerCost:
        x, y = layer.input, layer.output
        w = (x[1], y[1])
        t_data = self.inner_product(y, (w[1], w[0]), x)        # dX = dY · Wᵀ
        t_filter = self.inner_product((x[1], x[0]), y, w)      # dW = Xᵀ · dY
        return t_data + t_filter

    def pool(self, layer: Layer) -> LayerCost:
        x, y = layer.input, layer.output
        flops = 2 * layer.kernel[0] * layer.kernel[1] * x[3]
        flops *= y[1] * y[2]
        flops *= x[0]
        return self.cost(flops, _prod(x) * BYTES_FLOAT, _prod(y) * BYTES_FLOAT)

    def dropout(self, layer: Layer) -> LayerCost:
        return self.cost(_prod(layer.input), _prod(layer.input) * BYTES_FLOAT,
                         _prod(layer.output) * BYTES_FLOAT)


def _gradient_geometry(layer: Layer) -> tuple[int, int, int, int, float]:
    """Expanded output size, padding and share of holes of a conv's gradient (TF rules)."""
    (_, h, w, _), (_, out_h, out_w, _) = layer.input, layer.output
    kh, kw = layer.filters[0], layer.filters[1]
    (sh, sw), (pad_h, pad_w) = layer.strides, layer.pad
    eh, ew = (out_h - 1) * sh + 1, (out_w - 1) * sw + 1
    before_h, before_w = kh - 1 - pad_h, kw - 1 - pad_w
    after_h = (h + kh - 1) - eh - before_h
    after_w = (w + kw - 1) - ew - before_w
    if abs(before_h - after_h) == 1:
        eh += 1
    if abs(before_w - after_w) == 1:
        ew += 1
    holes = (eh * ew - out_h * out_w) / eh / ew
    return eh, ew, min(before_h, after_h), min(before_w, after_w), holes


def _dummy_data_gradient(layer: Layer) -> tuple:
    """GEMM arguments of Paleo's data-gradient conv: dY dilated and padded, filters swapped."""
    eh, ew, p_h, p_w, holes = _gradient_geometry(layer)
    n, k = layer.output[0], layer.output[3]
    kh, kw, c, _ = layer.filters
    inputs = (n, eh, ew, k)
    out = (n, (eh + 2 * p_h - kh) + 1, (ew + 2 * p_w - kw) + 1, c)
    return inputs, (kh, kw, k, c), (p_h, p_w), out, holes, 0.0


def _dummy_filter_gradient(layer: Layer) -> tuple:
    """GEMM arguments of Paleo's filter-gradient conv: X (C,H,W,N) convolved with dY."""
    eh, ew, p_h, p_w, holes = _gradient_geometry(layer)
    n, h, w, c = layer.input
    k = layer.output[3]
    inputs = (c, h, w, n)
    pad = (0, 0) if layer.padding == "VALID" else (p_h, p_w)
    out = (c, h + 2 * pad[0] - eh + 1, w + 2 * pad[1] - ew + 1, k)
    return inputs, (eh, ew, layer.output[0], k), pad, out, 0.0, holes


def gradient_shapes_match(layer: Layer) -> bool:
    """Whether Paleo's dummy gradient convs give back the layer's input and filter shapes.

    Paleo asserts this and the faithful mode raises ``InputError`` when it fails (e.g. a 1x1
    stride-3 conv on 3x3 skips input rows); every shipped spec and every ``core.models``
    network passes.

    Examples
    --------
    >>> conv = Layer("conv1", "conv2d", "Convolution", ((128, 224, 224, 3),),
    ...              (128, 54, 54, 64), filters=(11, 11, 3, 64), strides=(4, 4))
    >>> gradient_shapes_match(conv)
    True
    """
    data, filt = _dummy_data_gradient(layer), _dummy_filter_gradient(layer)
    return data[3] == layer.input and filt[3][1:3] == layer.filters[:2]


def layer_cost(layer: Layer, device: Device, *, direction: str, ppp_comp: float = 1.0,
               paleo_compatible: bool = False) -> LayerCost:
    """Time of one layer in one pass.

    Parameters
    ----------
    layer : Layer
    device : Device
    direction : {"forward", "backward"}
    ppp_comp : float, default=1.0
        Platform percent of peak for arithmetic and device memory.
    paleo_compatible : bool, default=False
        Paleo's exact arithmetic (GiB/s, dummy-conv gradients) instead of the modern mode.

    Examples
    --------
    AlexNet conv1 forward on a K80 at batch 128 (PALEO_MODEL.md, worked example):
    2·11·11·3 · 54·54·64 · 128 = 17,342,595,072 FLOPs at 5600 GFLOP/s is 3.0969 ms.

    >>> from core.paleo.devices import get_device
    >>> conv = Layer("conv1", "conv2d", "Convolution", ((128, 224, 224, 3),),
    ...              (128, 54, 54, 64), filters=(11, 11, 3, 64), strides=(4, 4))
    >>> cost = layer_cost(conv, get_device("K80"), direction="forward", paleo_compatible=True)
    >>> int(cost.flops), round(cost.comp_ms, 7), round(cost.total_ms, 7)
    (17342595072, 3.096892, 3.4320027)
    """
    model = _Model(device, ppp_comp, paleo_compatible)
    forward = direction == "forward"
    if layer.kind == "conv2d":
        return model.conv_forward(layer) if forward else model.conv_backward(layer)
    if layer.kind == "innerproduct":
        return model.innerproduct_forward(layer) if forward else model.innerproduct_backward(layer)
    if layer.kind == "pool2d":
        return model.pool(layer)
    if layer.kind == "dropout":
        return model.dropout(layer)
    return _ZERO


def apply_cost(params_bytes: int, device: Device, *, ppp_comp: float = 1.0,
               paleo_compatible: bool = False) -> LayerCost:
    """Time of the parameter update ``w -= lr·dw``: 2 FLOPs per parameter, 3 passes over them.

    In the faithful mode the PPP is 1.0 whatever ``ppp_comp`` is (Paleo's quirk).

    Examples
    --------
    AlexNet (201,215,648 bytes) on a K80: 2·50,303,912 / 5.6e12 s + 3·201,215,648 / 2**30
    / 480 s = 1.1891949 ms.

    >>> from core.paleo.devices import get_device
    >>> round(apply_cost(201215648, get_device("K80"), paleo_compatible=True).total_ms, 7)
    1.1891949
    """
    model = _Model(device, 1.0 if paleo_compatible else ppp_comp, paleo_compatible)
    flops = 2 * (params_bytes // BYTES_FLOAT)
    comp = model.tc(flops)
    mem = 3 * model.tm(params_bytes)
    return LayerCost(comp, mem, comp + mem, flops, 3.0 * params_bytes)
