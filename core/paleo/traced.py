"""The layer lists and workloads of the :mod:`core.models` architectures as tracing gives them, kept as a table.

Tracing a model on the meta device (:func:`core.paleo.torch_bridge.net_from_model`, the layer list at batch 1;
:func:`core.paleo.torch_work.workload_from_model`, the aten ops of a training step) imports torch and runs
its decompositions: 4-9 s in a fresh process, which the Plan page's first visit paid for its Paleo estimate
and the Throughput page's for its measured-profile comparison. The table (``data/paleo/traced.json``) costs
milliseconds; ``tests/core/paleo/test_traced.py`` re-traces every model and compares layer for layer and op
for op, so the table cannot drift from the definitions. Regenerate it with ``python -m core.paleo.traced``.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path

from core.paleo.layers import Layer, Net
from core.paleo.workload import Op, Workload

TRACED_PATH = Path(__file__).resolve().parents[2] / "data" / "paleo" / "traced.json"
_TUPLES = ("inputs", "output", "filters", "strides", "pad", "kernel", "parents")


def net_from_dict(data: dict) -> Net:
    """The :class:`Net` that ``dataclasses.asdict`` wrote (tuples came back as lists).

    >>> from core.paleo import load_net
    >>> net = load_net("alex_v2")
    >>> net_from_dict(json.loads(json.dumps(asdict(net)))) == net
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


def workload_from_dict(data: dict) -> Workload:
    """The :class:`Workload` that ``dataclasses.asdict`` wrote."""
    return Workload(name=data["name"], source=data["source"], ops=tuple(Op(**op) for op in data["ops"]),
                    n_params=int(data["n_params"]), counted=data["counted"])


@lru_cache(maxsize=1)
def _table() -> dict:
    if not TRACED_PATH.is_file():
        return {}
    return json.loads(TRACED_PATH.read_text())


def traced_net(model_name: str) -> Net | None:
    """The table's layer list of ``model_name`` at batch 1, None when the table does not hold it."""
    data = _table().get("nets", {}).get(model_name)
    return net_from_dict(data) if data is not None else None


def traced_workload(model_name: str) -> Workload | None:
    """The table's traced workload of ``model_name``, None when the table does not hold it."""
    data = _table().get("workloads", {}).get(model_name)
    return workload_from_dict(data) if data is not None else None


def write_table(path: Path = TRACED_PATH) -> dict:
    """Trace every registered model (imports torch) and write the table; returns it."""
    from core.models import MODEL_NAMES
    from core.paleo.torch_bridge import net_from_model
    from core.paleo.torch_work import workload_from_model

    table = {"nets": {name: asdict(net_from_model(name)) for name in MODEL_NAMES},
             "workloads": {name: asdict(workload_from_model(name)) for name in MODEL_NAMES}}
    path.write_text(json.dumps(table, separators=(",", ":")) + "\n")
    return table


if __name__ == "__main__":      # python -m core.paleo.traced
    written = write_table()
    print(f"{TRACED_PATH}: {len(written['nets'])} models")
