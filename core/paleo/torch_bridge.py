"""Turn a torch module into Paleo's layer list, and count its FLOPs with torch.

:func:`net_from_torch` runs the module once on the **meta** device (shapes only, no memory,
no arithmetic) with forward hooks on its leaf modules and records, in execution order:

* ``Conv1d``/``Conv2d`` → ``conv2d`` (1-D: height 1, kernel ``1 x k``) with torch's explicit
  padding (``padding="EXPLICIT"``, or ``"VALID"`` when it is zero, which gives the same
  output and makes Paleo's filter-gradient dummy conv come out right); ``backprop`` is False
  when the conv's input does not require a gradient (the network input), as autograd then
  skips the data gradient;
* ``Linear`` → ``innerproduct``; max/average pools (adaptive ones with the window
  ``ceil(H / H_out)``) → ``pool2d``; ``Dropout`` → ``dropout``;
* any other leaf module that owns parameters (batch norm) → a zero-cost ``free`` layer
  carrying its parameter count, so the communicated bytes are the model's real ones.

Parameter-free functional operations (ReLU, residual additions, ``torch.cat``, slicing of
option-A shortcuts, ``mean``) are not modules and cost nothing, as in Paleo.  Grouped or
dilated convolutions are refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from core.errors import InputError
from core.paleo.layers import Layer, Net

_POOLS = (nn.MaxPool1d, nn.MaxPool2d, nn.AvgPool1d, nn.AvgPool2d, nn.AdaptiveAvgPool1d,
          nn.AdaptiveAvgPool2d, nn.AdaptiveMaxPool1d, nn.AdaptiveMaxPool2d)
_DROPOUTS = (nn.Dropout, nn.Dropout1d, nn.Dropout2d)


@dataclass(frozen=True)
class TorchFlops:
    """FLOPs of one training step as ``torch.utils.flop_counter.FlopCounterMode`` counts them.

    Attributes
    ----------
    forward, backward : int
        Convolution and matrix-multiply FLOPs (2 per multiply-add) of the two passes.
    batch_size : int
    """

    forward: int
    backward: int
    batch_size: int


def _nhwc(t: torch.Tensor) -> tuple[int, ...]:
    """NCHW (or NCL) tensor shape → NHWC (NCL becomes N, 1, L, C); 2-D shapes stay."""
    s = tuple(int(v) for v in t.shape)
    if len(s) == 4:
        return (s[0], s[2], s[3], s[1])
    if len(s) == 3:
        return (s[0], 1, s[2], s[1])
    return s


def _pair(v, one_d: bool) -> tuple[int, int]:
    v = tuple(v) if isinstance(v, (tuple, list)) else (v,)
    if one_d:
        return (1, int(v[0]))
    return (int(v[0]), int(v[-1]))


def _own_params(module: nn.Module) -> int:
    return int(sum(p.numel() for p in module.parameters(recurse=False) if p.requires_grad))


def _conv_layer(name: str, m: nn.Module, x: torch.Tensor, y: torch.Tensor) -> Layer:
    one_d = isinstance(m, nn.Conv1d)
    if m.groups != 1 or any(d != 1 for d in m.dilation):
        raise InputError(f"layer {name!r}: expected a dense convolution (groups=1, dilation=1); got "
                         f"groups={m.groups}, dilation={tuple(m.dilation)}. Paleo's GEMM model "
                         "covers dense convolutions only.")
    kh, kw = _pair(m.kernel_size, one_d)
    if isinstance(m.padding, str):
        pad = (0, 0) if m.padding == "valid" else ((kh - 1) // 2, (kw - 1) // 2)
        pad = (0, pad[1]) if one_d else pad
    else:
        pad = (0, int(m.padding[0])) if one_d else (int(m.padding[0]), int(m.padding[1]))
    # Zero padding is Paleo's VALID (same output; the filter gradient then uses VALID too).
    return Layer(name=name, kind="conv2d", type=type(m).__name__, inputs=(_nhwc(x),),
                 output=_nhwc(y), params=_own_params(m),
                 filters=(kh, kw, m.in_channels, m.out_channels),
                 strides=_pair(m.stride, one_d), pad=pad,
                 padding="VALID" if pad == (0, 0) else "EXPLICIT",
                 backprop=bool(x.requires_grad))


def _pool_layer(name: str, m: nn.Module, x: torch.Tensor, y: torch.Tensor) -> Layer:
    xi, yo = _nhwc(x), _nhwc(y)
    if isinstance(m, (nn.AdaptiveAvgPool1d, nn.AdaptiveAvgPool2d, nn.AdaptiveMaxPool1d,
                      nn.AdaptiveMaxPool2d)):
        kernel = (math.ceil(xi[1] / yo[1]), math.ceil(xi[2] / yo[2]))
    else:
        one_d = isinstance(m, (nn.MaxPool1d, nn.AvgPool1d))
        kernel = _pair(m.kernel_size, one_d)
    return Layer(name=name, kind="pool2d", type=type(m).__name__, inputs=(xi,), output=yo,
                 kernel=kernel)


def _record(name: str, m: nn.Module, x: torch.Tensor, y: torch.Tensor) -> Layer | None:
    if isinstance(m, (nn.Conv1d, nn.Conv2d)):
        return _conv_layer(name, m, x, y)
    if isinstance(m, nn.Linear):
        xs, ys = tuple(int(v) for v in x.shape), tuple(int(v) for v in y.shape)
        rows = math.prod(xs[:-1])
        return Layer(name=name, kind="innerproduct", type="Linear", inputs=((rows, xs[-1]),),
                     output=(rows, ys[-1]), params=_own_params(m))
    if isinstance(m, _POOLS):
        return _pool_layer(name, m, x, y)
    if isinstance(m, _DROPOUTS):
        return Layer(name=name, kind="dropout", type=type(m).__name__, inputs=(_nhwc(x),),
                     output=_nhwc(y))
    if _own_params(m):
        return Layer(name=name, kind="free", type=type(m).__name__, inputs=(_nhwc(x),),
                     output=_nhwc(y), params=_own_params(m))
    return None


def net_from_torch(module: nn.Module, example_input: torch.Tensor, *, name: str,
                   source: str = "torch module") -> Net:
    """The Paleo layer list of a torch module, from one forward pass on the meta device.

    Parameters
    ----------
    module : torch.nn.Module
        Any device; it is copied to ``meta`` (the original is not touched).
    example_input : torch.Tensor
        An input batch of the right shape (any device; only its shape is used).
    name : str
        Net name for results.
    source : str, default="torch module"
        Where the module came from, for results.

    Returns
    -------
    Net
        Layers in execution order; ``n_params`` equals the module's trainable parameters.

    Examples
    --------
    >>> lin = torch.nn.Sequential(torch.nn.Linear(8, 4))
    >>> net = net_from_torch(lin, torch.empty(2, 8), name="tiny")
    >>> [(l.kind, l.inputs, l.output, l.params) for l in net.layers[1:]]
    [('innerproduct', ((2, 8),), (2, 4), 36)]
    """
    import copy

    model = copy.deepcopy(module).to("meta").train()
    x = torch.empty(tuple(example_input.shape), device="meta")
    names = {m: n or type(m).__name__ for n, m in model.named_modules()}
    layers: list[Layer] = [Layer(name="data", kind="input", type="Input", inputs=(),
                                 output=_nhwc(x))]
    seen: dict[str, int] = {}

    def hook(m: nn.Module, args: tuple, out) -> None:
        if list(m.children()) or not args or not isinstance(args[0], torch.Tensor) \
                or not isinstance(out, torch.Tensor):
            return
        base = names[m]
        seen[base] = seen.get(base, 0) + 1
        label = base if seen[base] == 1 else f"{base}#{seen[base]}"
        layer = _record(label, m, args[0], out)
        if layer is not None:
            layers.append(layer)

    handles = [m.register_forward_hook(hook) for m in model.modules()]
    try:
        model(x)
    finally:
        for h in handles:
            h.remove()
    missing = int(sum(p.numel() for p in model.parameters() if p.requires_grad)) - \
        sum(lay.params for lay in layers)
    if missing:
        # parameters used outside leaf modules (or modules called with odd arguments)
        layers.append(Layer(name="other parameters", kind="free", type="Parameter",
                            inputs=(layers[-1].output,), output=layers[-1].output,
                            params=missing))
    return Net(name=name, layers=tuple(layers), source=source, batch_size=int(x.shape[0]))


def net_from_model(model_name: str, batch_size: int = 1) -> Net:
    """The layer list of a :mod:`core.models` architecture, named ``torch:<model_name>``.

    Examples
    --------
    >>> net = net_from_model("resnet20")
    >>> net.name, net.n_params, net.layers[1].output      # 16 channels on 32x32
    ('torch:resnet20', 269722, (1, 32, 32, 16))
    """
    from core.models import build_model, example_input

    with torch.device("meta"):
        model = build_model(model_name)
    return net_from_torch(model, example_input(model_name, batch_size),
                          name=f"torch:{model_name}", source=f"core.models.{model_name}")


def torch_flops(model_name: str, batch_size: int = 1) -> TorchFlops:
    """Forward and backward FLOPs of one step counted by ``FlopCounterMode`` (meta device).

    The backward pass is driven by ``output.sum().backward()``; the input does not require a
    gradient, so the first layer's data gradient is not counted (as in Paleo).

    Examples
    --------
    ResNet-20 backward = 2 x forward minus conv1's data gradient (2·3·3·3·16·32·32 = 884,736):

    >>> f = torch_flops("resnet20")
    >>> f.forward, f.backward, 2 * f.forward - 884736
    (81102080, 161319424, 161319424)
    """
    from core.models import build_model, example_input

    with torch.device("meta"):
        model = build_model(model_name)
    x = example_input(model_name, batch_size)
    with FlopCounterMode(display=False) as counter:
        out = model(x)
        forward = counter.get_total_flops()
        out.sum().backward()
        total = counter.get_total_flops()
    return TorchFlops(forward=int(forward), backward=int(total - forward),
                      batch_size=batch_size)
