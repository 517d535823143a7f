"""The layer lists of the :mod:`core.models` architectures as the torch bridge traces them, kept as a table.

Tracing a model on the meta device (:func:`core.paleo.torch_bridge.net_from_model`) imports torch and runs
its decompositions: 4-7 s in a fresh process, which the Plan page's first visit paid for its Paleo estimate
of the run's ResNet. The table (``data/paleo/traced_nets.json``, batch 1) costs milliseconds;
``tests/core/paleo/test_traced.py`` re-traces every model and compares layer for layer, so the table cannot
drift from the definitions. Regenerate it with ``python -m core.paleo.traced``.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path

from core.paleo.layers import Layer, Net

TRACED_NETS_PATH = Path(__file__).resolve().parents[2] / "data" / "paleo" / "traced_nets.json"
_TUPLES = ("inputs", "output", "filters", "strides", "pad", "kernel", "parents")


def net_to_dict(net: Net) -> dict:
    """``net`` as plain JSON values (tuples become lists)."""
    return asdict(net)


def net_from_dict(data: dict) -> Net:
    """The :class:`Net` that :func:`net_to_dict` wrote.

    >>> from core.paleo import load_net
    >>> net = load_net("alex_v2")
    >>> net_from_dict(json.loads(json.dumps(net_to_dict(net)))) == net
    True
    """
    def layer(d: dict) -> Layer:
        fields = dict(d)
        for name in _TUPLES:
            value = fields.get(name)
            if value is not None:
                fields[name] = tuple(tuple(v) if isinstance(v, list) else v for v in value) \
                    if name == "inputs" else tuple(value)
        return Layer(**fields)

    return Net(name=data["name"], layers=tuple(layer(d) for d in data["layers"]), source=data["source"],
               batch_size=int(data["batch_size"]))


@lru_cache(maxsize=1)
def _table() -> dict:
    if not TRACED_NETS_PATH.is_file():
        return {}
    return json.loads(TRACED_NETS_PATH.read_text())


def traced_net(model_name: str) -> Net | None:
    """The table's layer list of ``model_name`` at batch 1, None when the table does not hold it."""
    data = _table().get(model_name)
    return net_from_dict(data) if data is not None else None


def write_table(path: Path = TRACED_NETS_PATH) -> dict:
    """Trace every registered model (imports torch) and write the table; returns it."""
    from core.models import MODEL_NAMES
    from core.paleo.torch_bridge import net_from_model

    table = {name: net_to_dict(net_from_model(name)) for name in MODEL_NAMES}
    path.write_text(json.dumps(table, separators=(",", ":")) + "\n")
    return table


if __name__ == "__main__":      # python -m core.paleo.traced
    written = write_table()
    print(f"{TRACED_NETS_PATH}: {len(written)} models")
