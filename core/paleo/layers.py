"""The layer list Paleo estimates: one frozen :class:`Layer` per operation, in NHWC shapes.

A :class:`Net` is what both readers produce: ``core.paleo.spec`` from Paleo's JSON specs
(shapes by Paleo's own rules, below) and ``core.paleo.torch_bridge`` from a torch module
(shapes as torch computed them).  The cost model only looks at these fields.

Shape rules (Paleo ``layers/conv.py`` and ``layers/pool.py``)
-------------------------------------------------------------
* conv/pool ``VALID``: ``out = ceil((H - k + 1) / s)``, pad 0;
* conv/pool ``SAME``: ``out = ceil(H / s)``; conv pad ``((out - 1)·s + k - H) // 2``
  (floor division: a 1x1 stride-2 SAME conv on an even input gets pad -1, kept as is);
* conv with explicit ``[ph, pw]``: ``out = (H + 2·ph - k) // s + 1``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.errors import InputError

Shape = tuple[int, ...]

#: layer kinds the cost model prices; every other kind costs nothing
COSTED_KINDS = ("conv2d", "innerproduct", "pool2d", "dropout")
#: bytes per parameter and per activation element (fp32, as Paleo)
BYTES_FLOAT = 4


@dataclass(frozen=True)
class Layer:
    """One operation of a network, as the cost model sees it.

    Attributes
    ----------
    name : str
        Unique name (``block/layer`` for spec blocks, the module path for torch).
    kind : str
        ``"input"``, ``"conv2d"``, ``"innerproduct"``, ``"pool2d"``, ``"dropout"`` or
        ``"free"`` (concatenate, add, softmax, batch norm ...: zero cost in Paleo).
    type : str
        The type as written in the source (``"Convolution"``, ``"BatchNorm"``, ``"Conv2d"``).
    inputs : tuple of shapes
        One NHWC shape per parent (inner products: the flattened ``(N, D)``).
    output : shape
        NHWC output shape.
    params : int
        Trainable parameters of this layer (conv/fc weights and biases; batch norm for torch).
    filters : (kh, kw, c_in, c_out) or None
        Convolution filter shape.
    strides : (sh, sw)
    pad : (ph, pw)
        Padding on each side, as Paleo computes it (may be -1 for SAME, see module notes).
    padding : str
        ``"VALID"``, ``"SAME"`` or ``"EXPLICIT"`` (a ``[ph, pw]`` list or torch padding).
    kernel : (kh, kw) or None
        Pooling window.
    backprop : bool
        False when the layer reads the network input: its data gradient is not computed.
    parents : tuple of str
        Names of the layers whose outputs feed this one.
    """

    name: str
    kind: str
    type: str
    inputs: tuple[Shape, ...]
    output: Shape
    params: int = 0
    filters: tuple[int, int, int, int] | None = None
    strides: tuple[int, int] = (1, 1)
    pad: tuple[int, int] = (0, 0)
    padding: str = "VALID"
    kernel: tuple[int, int] | None = None
    backprop: bool = True
    parents: tuple[str, ...] = ()

    @property
    def input(self) -> Shape:
        """The first (usually only) input shape."""
        return self.inputs[0] if self.inputs else self.output

    def with_batch(self, batch_size: int) -> Layer:
        """The same layer with every batch dimension set to ``batch_size`` (Paleo's setter)."""
        return replace(self, inputs=tuple((batch_size, *s[1:]) for s in self.inputs),
                       output=(batch_size, *self.output[1:]))


@dataclass(frozen=True)
class Net:
    """A network as an ordered (topological) tuple of layers.

    Attributes
    ----------
    name : str
        Short name (the spec's file stem, or ``torch:<model>``).
    layers : tuple of Layer
    source : str
        Where it came from (a file name, or ``core.models``).
    batch_size : int
        The batch the shapes were built with (simulations override it).
    """

    name: str
    layers: tuple[Layer, ...]
    source: str
    batch_size: int

    @property
    def n_params(self) -> int:
        """Trainable parameters, summed over layers."""
        return sum(layer.params for layer in self.layers)

    @property
    def params_bytes(self) -> int:
        """Bytes of all parameters in fp32: what data-parallel training communicates."""
        return BYTES_FLOAT * self.n_params

    def with_batch(self, batch_size: int) -> Net:
        """The same net with batch dimension ``batch_size`` everywhere."""
        return replace(self, layers=tuple(lay.with_batch(batch_size) for lay in self.layers),
                       batch_size=batch_size)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def conv_output(where: str, inputs: Shape, filters: tuple[int, int, int, int],
                strides: tuple[int, int], padding: str | tuple[int, int]
                ) -> tuple[Shape, tuple[int, int], str]:
    """Output shape, pads and padding mode of a convolution by Paleo's rules.

    Examples
    --------
    >>> conv_output("conv1", (128, 224, 224, 3), (11, 11, 3, 64), (4, 4), "VALID")
    ((128, 54, 54, 64), (0, 0), 'VALID')
    >>> conv_output("c", (1, 28, 28, 8), (1, 1, 8, 16), (2, 2), "SAME")   # pad (13·2+1-28)//2
    ((1, 14, 14, 16), (-1, -1), 'SAME')
    """
    n, h, w, _ = inputs
    kh, kw, _, c_out = filters
    sh, sw = strides
    if padding == "VALID":
        out_h, out_w, pads, mode = _ceil_div(h - kh + 1, sh), _ceil_div(w - kw + 1, sw), (0, 0), "VALID"
    elif padding == "SAME":
        out_h, out_w = _ceil_div(h, sh), _ceil_div(w, sw)
        pads = (((out_h - 1) * sh + kh - h) // 2, ((out_w - 1) * sw + kw - w) // 2)
        mode = "SAME"
    else:
        ph, pw = padding
        out_h, out_w, pads, mode = (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1, \
            (ph, pw), "EXPLICIT"
    if out_h < 1 or out_w < 1:
        raise InputError(f"{where}: expected a filter {kh}x{kw} that fits the {h}x{w} input; "
                         f"got an output of {out_h}x{out_w}. Check the filter, strides and padding.")
    return (n, out_h, out_w, c_out), pads, mode


def pool_output(where: str, inputs: Shape, kernel: tuple[int, int], strides: tuple[int, int],
                padding: str) -> Shape:
    """Output shape of a pooling layer by Paleo's rules (``VALID`` or ``SAME`` only).

    Examples
    --------
    >>> pool_output("pool1", (1, 112, 112, 64), (3, 3), (2, 2), "VALID")   # ceil(110/2)
    (1, 55, 55, 64)
    """
    n, h, w, c = inputs
    (kh, kw), (sh, sw) = kernel, strides
    if padding == "VALID":
        out_h, out_w = _ceil_div(h - kh + 1, sh), _ceil_div(w - kw + 1, sw)
    elif padding == "SAME":
        out_h, out_w = _ceil_div(h, sh), _ceil_div(w, sw)
    else:
        raise InputError(f"{where}: expected pooling padding 'VALID' or 'SAME'; got {padding!r}. "
                         "Use one of the two (Paleo has no explicit pooling pads).")
    if out_h < 1 or out_w < 1:
        raise InputError(f"{where}: expected a {kh}x{kw} window that fits the {h}x{w} input; "
                         f"got an output of {out_h}x{out_w}. Check ksize and padding.")
    return (n, out_h, out_w, c)
