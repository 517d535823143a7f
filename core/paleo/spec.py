"""Read Paleo's JSON network specs into a :class:`~core.paleo.layers.Net`.

The format is Paleo's (``data/paleo/nets/README.md``): ``{"name": ..., "layers": {name:
params}}``, NHWC tensors, an ``Input`` layer named ``data``, ``Block`` namespaces
(``block/layer``; sublayers with ``"parents": []`` inherit the block's parents; an
``"endpoint"`` lets later layers name the block).  ``ModelParallel`` blocks and
``Deconvolution`` layers are refused with an :class:`~core.errors.InputError`: this
package simulates data parallelism only.

Layers are kept in a topological order of the graph reachable from ``data`` (Kahn's
algorithm with a stack: parallel branches one after the other, in spec order, as Paleo's
``GraphWalker`` lists them).  A layer with a parent not fed by ``data`` is left out, as
Paleo's walker leaves it out.  Paleo sums layer times in its walker's order, which depends
on Python's dict order; only the last bits of the sums depend on it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.datasets import DATA_DIR
from core.errors import InputError
from core.paleo.layers import Layer, Net, Shape, conv_output, pool_output

#: where the product's copies of Paleo's specs live
NETS_DIR = DATA_DIR / "paleo" / "nets"

_FREE_TYPES = {"Concatenate", "Elementwise", "Softmax", "Reshape", "Sigmoid", "UpSampling2D"}


def builtin_spec_names() -> tuple[str, ...]:
    """Stems of the JSON specs shipped in ``data/paleo/nets/`` (sorted).

    Examples
    --------
    >>> "alex_v2" in builtin_spec_names()
    True
    """
    return tuple(sorted(p.stem for p in NETS_DIR.glob("*.json")))


def read_spec_file(path: str | Path) -> Net:
    """Read a Paleo JSON spec file; the net's name is the file stem.

    Raises
    ------
    InputError
        If the file is missing, is not JSON, or describes an unsupported network.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise InputError(f"{path}: expected a readable Paleo JSON spec; got {err.strerror or err}. "
                         "Check the path.") from None
    return parse_spec(text, source=path.name, name=path.stem)


def parse_spec(text: str | bytes, *, source: str = "<spec>", name: str | None = None) -> Net:
    """Parse the text of a Paleo JSON spec (an upload, for instance).

    Parameters
    ----------
    text : str or bytes
        The JSON document.
    source : str, default="<spec>"
        File name used in every error message.
    name : str, optional
        Net name; defaults to ``source`` without ``.json``.

    Examples
    --------
    >>> spec = '''{"name": "tiny", "layers": {
    ...   "data": {"type": "Input", "parents": [], "tensor": [8, 32, 32, 3]},
    ...   "conv": {"type": "Convolution", "parents": ["data"], "filter": [3, 3, 3, 16],
    ...            "strides": [1, 1, 1, 1], "padding": "SAME"}}}'''
    >>> net = parse_spec(spec, source="tiny.json")
    >>> net.layers[1].output, net.n_params          # 3·3·3·16 + 16 biases
    ((8, 32, 32, 16), 448)
    """
    try:
        spec = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise InputError(f"{source}: expected a JSON document; got invalid JSON ({err}). "
                         "Upload a Paleo net spec (.json).") from None
    if not isinstance(spec, Mapping) or not isinstance(spec.get("layers"), Mapping):
        got = type(spec).__name__ if not isinstance(spec, Mapping) else "no 'layers' object"
        raise InputError(f"{source}: expected an object with a 'layers' object; got {got}. "
                         "See data/paleo/nets/README.md for the format.")
    flat = _flatten(spec["layers"], source)
    order = _topological_order(flat, source)
    layers = _build_layers(flat, order, source)
    net_name = name if name is not None else source.removesuffix(".json")
    return Net(name=net_name, layers=layers, source=source, batch_size=layers[0].output[0])


# --------------------------------------------------------------------------- graph
def _flatten(layers: Mapping[str, Any], source: str) -> dict[str, dict[str, Any]]:
    """Expand blocks into ``block/layer`` entries with resolved parent names."""
    flat: dict[str, dict[str, Any]] = {}
    endpoints: dict[str, str] = {}
    for name, params in layers.items():
        if not isinstance(params, Mapping):
            raise InputError(f"{source}: layer {name!r}: expected an object; got "
                             f"{type(params).__name__}. Write each layer as {{\"type\": ...}}.")
        kind = params.get("type")
        if kind == "ModelParallel":
            raise InputError(
                f"{source}: expected a data-parallel spec; got the ModelParallel block {name!r} "
                f"(splits={params.get('splits', 1)}). Only data parallelism is simulated: use a "
                "spec without model splits (alex_v2.json instead of alex_v2_<k>gpu.json).")
        if kind == "Block":
            sub_layers = params.get("layers")
            if not isinstance(sub_layers, Mapping):
                raise InputError(f"{source}: block {name!r}: expected a 'layers' object; got "
                                 f"{type(sub_layers).__name__}. Add the block's layers.")
            block_parents = list(_parents_of(params, name, source))
            for sub_name, sub in sub_layers.items():
                if not isinstance(sub, Mapping):
                    raise InputError(f"{source}: layer {name}/{sub_name!r}: expected an object; "
                                     f"got {type(sub).__name__}. Write each layer as an object.")
                if sub.get("type") in ("Block", "ModelParallel"):
                    raise InputError(f"{source}: block {name!r}: expected plain layers inside; "
                                     f"got a nested {sub.get('type')} {sub_name!r}. Flatten it.")
                own = _parents_of(sub, f"{name}/{sub_name}", source)
                parents = [f"{name}/{p}" for p in own] if own else block_parents
                flat[f"{name}/{sub_name}"] = {**sub, "parents": parents}
            if "endpoint" in params:
                endpoints[name] = f"{name}/{params['endpoint']}"
        else:
            flat[name] = {**params, "parents": list(_parents_of(params, name, source))}
    for name, params in flat.items():
        params["parents"] = [endpoints.get(p, p) for p in params["parents"]]
        for p in params["parents"]:
            if p not in flat:
                raise InputError(f"{source}: layer {name!r}: expected parents among the spec's "
                                 f"layers; got unknown parent {p!r}. Fix the name or add the layer.")
    if flat.get("data", {}).get("type") != "Input":
        raise InputError(f"{source}: expected an Input layer named 'data'; got "
                         f"{'a ' + repr(flat['data'].get('type')) + ' layer' if 'data' in flat else 'none'}. "
                         "Paleo starts every net at 'data'.")
    return flat


def _parents_of(params: Mapping[str, Any], name: str, source: str) -> tuple[str, ...]:
    parents = params.get("parents", [])
    if not isinstance(parents, list) or not all(isinstance(p, str) for p in parents):
        raise InputError(f"{source}: layer {name!r}: expected 'parents' as a list of names; got "
                         f"{parents!r}. Write e.g. \"parents\": [\"data\"].")
    return tuple(parents)


def _topological_order(flat: dict[str, dict[str, Any]], source: str) -> list[str]:
    """Layers reachable from ``data`` whose parents are all reachable, parents first."""
    children: dict[str, list[str]] = {name: [] for name in flat}
    for name, params in flat.items():
        for p in params["parents"]:
            children[p].append(name)
    waiting = {name: len(params["parents"]) for name, params in flat.items()}
    order, stack = [], ["data"]
    while stack:
        name = stack.pop()
        order.append(name)
        ready = []
        for child in children[name]:
            waiting[child] -= 1
            if waiting[child] == 0:
                ready.append(child)
        stack.extend(reversed(ready))     # depth first: one branch after the other
    if len(order) < 2:
        raise InputError(f"{source}: expected layers fed by 'data'; got none. "
                         "Give the first layer \"parents\": [\"data\"].")
    return order


# --------------------------------------------------------------------------- shapes
def _ints(value: Any, n: int, what: str, where: str) -> tuple[int, ...]:
    if (not isinstance(value, list) or len(value) != n
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise InputError(f"{where}: expected '{what}' as a list of {n} integers; got {value!r}. "
                         "See data/paleo/nets/README.md.")
    return tuple(value)


def _build_layers(flat: dict[str, dict[str, Any]], order: list[str], source: str
                  ) -> tuple[Layer, ...]:
    outputs: dict[str, Shape] = {}
    built: list[Layer] = []
    for name in order:
        params = flat[name]
        where = f"{source}: layer {name!r}"
        parents = tuple(params["parents"])
        inputs = tuple(outputs[p] for p in parents)
        layer = _make_layer(name, params, inputs, parents, where)
        outputs[name] = layer.output
        built.append(layer)
    return tuple(built)


def _make_layer(name: str, p: dict[str, Any], inputs: tuple[Shape, ...],
                parents: tuple[str, ...], where: str) -> Layer:
    kind = p.get("type")
    common = dict(name=name, type=str(kind), inputs=inputs, parents=parents)
    if kind == "Input":
        tensor = p.get("tensor")
        if (not isinstance(tensor, list) or not tensor
                or not all(isinstance(v, int) and v > 0 for v in tensor)):
            raise InputError(f"{where}: expected 'tensor' as positive integers [N, H, W, C]; "
                             f"got {tensor!r}. Give the input shape.")
        return Layer(**{**common, "inputs": ()}, kind="input", output=tuple(tensor))
    if not inputs:
        raise InputError(f"{where}: expected at least one parent; got none. Add \"parents\".")
    if kind == "Deconvolution":
        raise InputError(f"{where}: expected a supported layer type; got 'Deconvolution'. "
                         "Deconvolutions are not modelled here; use Paleo itself for GANs.")
    if kind in ("Convolution", "Pooling", "AvgPool", "InnerProduct", "Dropout"):
        if len(inputs) != 1:
            raise InputError(f"{where}: expected one parent for a {kind}; got {len(inputs)}. "
                             "Concatenate the branches first.")
    if kind in ("Convolution", "Pooling", "AvgPool") and len(inputs[0]) != 4:
        raise InputError(f"{where}: expected a 4-D NHWC input; got shape {list(inputs[0])}. "
                         "Feed it from a 4-D layer.")
    if kind == "Convolution":
        return _conv_layer(p, common, inputs[0], parents, where)
    if kind in ("Pooling", "AvgPool"):
        ksize = _ints(p.get("ksize"), 4, "ksize", where)
        strides = _ints(p.get("strides"), 4, "strides", where)
        out = pool_output(where, inputs[0], ksize[1:3], strides[1:3], p.get("padding"))
        return Layer(**common, kind="pool2d", output=out, kernel=ksize[1:3], strides=strides[1:3],
                     padding=str(p.get("padding")))
    if kind == "InnerProduct":
        k = p.get("num_outputs")
        if not isinstance(k, int) or k < 1:
            raise InputError(f"{where}: expected 'num_outputs' as an integer >= 1; got {k!r}.")
        x = inputs[0]
        flat = x if len(x) == 2 else (x[0], _prod(x[1:]))
        return Layer(**{**common, "inputs": (flat,)}, kind="innerproduct", output=(x[0], k),
                     params=flat[1] * k + k)
    if kind == "Dropout":
        return Layer(**common, kind="dropout", output=inputs[0])
    if kind in _FREE_TYPES:
        return Layer(**common, kind="free", output=_free_output(kind, p, inputs, where))
    # Any other type (BatchNorm, ReLU, LRN, Accuracy, ...) is Paleo's zero-cost Generic.
    return Layer(**common, kind="free", output=inputs[0])


def _conv_layer(p: dict[str, Any], common: dict, x: Shape, parents: tuple[str, ...],
                where: str) -> Layer:
    filters = list(_ints(p.get("filter"), 4, "filter", where))
    if filters[2] == -1:
        filters[2] = x[3]
    if filters[2] != x[3]:
        raise InputError(f"{where}: expected filter input channels = {x[3]} (the parent's "
                         f"channels); got filter {filters}. Use {x[3]} or -1.")
    strides = _ints(p.get("strides"), 4, "strides", where)[1:3]
    padding = p.get("padding")
    if isinstance(padding, list):
        padding = _ints(padding, 2, "padding", where)
    elif padding not in ("VALID", "SAME"):
        raise InputError(f"{where}: expected padding 'VALID', 'SAME' or [ph, pw]; got "
                         f"{padding!r}. Use one of those.")
    kh, kw, c_in, c_out = filters
    out, pads, mode = conv_output(where, x, (kh, kw, c_in, c_out), strides, padding)
    return Layer(**common, kind="conv2d", output=out, params=kh * kw * c_in * c_out + c_out,
                 filters=(kh, kw, c_in, c_out), strides=strides, pad=pads, padding=mode,
                 backprop="data" not in parents)


def _free_output(kind: str, p: dict[str, Any], inputs: tuple[Shape, ...], where: str) -> Shape:
    x = inputs[0]
    if kind == "Concatenate":
        dim = p.get("dim", 3)
        if not isinstance(dim, int) or not all(len(s) == len(x) for s in inputs) \
                or not 0 <= dim < len(x):
            raise InputError(f"{where}: expected inputs of equal rank and 'dim' below it; got "
                             f"shapes {[list(s) for s in inputs]} and dim {dim!r}.")
        others = {tuple(v for i, v in enumerate(s) if i != dim) for s in inputs}
        if len(others) != 1:
            raise InputError(f"{where}: expected inputs equal outside dim {dim}; got "
                             f"{[list(s) for s in inputs]}. Check the branches' shapes.")
        return tuple(sum(s[dim] for s in inputs) if i == dim else v for i, v in enumerate(x))
    if kind == "Elementwise":
        if any(s != x for s in inputs):
            raise InputError(f"{where}: expected inputs of one shape; got "
                             f"{[list(s) for s in inputs]}. Check the branches' shapes.")
        return x
    if kind == "Softmax":
        k = p.get("num_classes")
        return (x[0], x[-1] if k is None else int(k))
    if kind == "Sigmoid":
        return (x[0], 1)
    if kind == "UpSampling2D":
        k = _ints(p.get("ksize"), 4, "ksize", where)
        return (x[0], x[1] * k[1], x[2] * k[2], *x[3:])
    # Reshape: -1 first means "keep the batch"; -1 last means "what is left" (Paleo's rule,
    # evaluated at the spec's own batch).
    out = list(p.get("output_shape", []))
    if not out or not all(isinstance(v, int) for v in out):
        raise InputError(f"{where}: expected 'output_shape' as a list of integers; got "
                         f"{p.get('output_shape')!r}.")
    if out[0] == -1:
        out[0] = x[0]
    elif out[-1] == -1:
        out[-1] = _prod(x) // out[0]
    return tuple(out)


def _prod(shape: Shape) -> int:
    result = 1
    for v in shape:
        result *= v
    return result
