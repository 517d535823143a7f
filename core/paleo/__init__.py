"""Paleo: an analytical model of training time (Qi, Sparks, Talwalkar, ICLR 2017).

Per layer FLOPs and memory traffic on a device give forward, backward and update time;
data-parallel communication schemes give the synchronisation time; together they give the
per-iteration time, throughput and speed-up over workers.  Two modes:

* ``paleo_compatible=True`` reproduces the original program (TalwalkarLab/paleo, commit
  984bbf5, ``--use_only_gemm``) to floating-point precision, quirks included;
* the default modern mode adds current GPUs and networks, ring all-reduce, parameter
  servers, overlap, and fixes the units and the backward count (``core.paleo.cost``).

Beside Paleo, the transfer model: a per-op roofline with efficiencies per kind of op
(``roofline``), calibrated on measured step times and predicting another GPU with an
interval (``transfer``, ``compare``), over the work of a training step counted op by op
(``workload``; ``torch_work`` traces a torch model), and a measured per-layer profile beside
both models (``profile``; ``torch_profile`` measures it).

Typical use::

    from core.paleo import load_net, simulate
    res = simulate(load_net("alex_v2"), device="K80", network="ethernet", batch_size=128,
                   workers=(1, 2, 4, 8), paleo_compatible=True)
    res.to_frame()          # the columns of Paleo's validation table

Modules: ``layers`` (Layer, Net, shape rules), ``spec`` (JSON specs), ``devices`` (Paleo's view of the one
device table, :mod:`core.devices`), ``cost`` (per-layer model), ``comm`` (schemes), ``simulate`` (scaling,
per-layer table), ``ppp`` (PPP presets; PPP from a measured step), ``results`` (``PaleoScaling`` and its rows),
``gpus`` (the precisions a step runs in; the training GPUs, a view of the device table), ``workload``,
``roofline``, ``transfer`` (the fit), ``transfer_records`` (its inputs and results), ``compare``, ``profile``,
``mlperf`` (per-GPU throughput of an MLPerf log);
``torch_bridge``, ``torch_work`` and ``torch_profile`` import torch and are imported only when used, so
``import core.paleo`` does not import torch.
"""

from __future__ import annotations

import functools
from pathlib import Path

from core.errors import InputError
from core.paleo.comm import PALEO_SCHEMES
from core.paleo.compare import DeviceComparison, calibrate_at_workers, compare_devices, transfer_scaling
from core.paleo.devices import (
    DEFAULT_DEVICES,
    DEFAULT_NETWORK,
    DEVICES,
    MODERN_DEVICES,
    NETWORKS,
    PALEO_DEVICES,
    PALEO_NETWORKS,
    devices_for,
    get_device,
    get_network,
    networks_for,
    settings_for_mode,
)
from core.paleo.gpus import GPUS, PRECISION_TEXT, PRECISIONS
from core.paleo.layers import Net
from core.paleo.mlperf import check_transfer, read_mlperf_throughput
from core.paleo.ppp import MAX_PPP, PPP_PRESETS, calibrate_ppp, solve_compute_ppp
from core.paleo.profile import (
    UNATTRIBUTED,
    MeasuredProfile,
    ProfileComparison,
    compare_profile,
    profile_report,
    read_profile,
)
from core.paleo.results import PaleoScaling, PPPCalibration
from core.paleo.roofline import DEFAULT_EFFICIENCIES, Efficiencies, Roof, roof_for
from core.paleo.simulate import SCALINGS, batch_split, layer_breakdown, simulate, step_time_ms, worker_counts
from core.paleo.spec import NETS_DIR, builtin_spec_names, parse_spec, read_spec_file
from core.paleo.transfer import calibrate_transfer, predict_step
from core.paleo.transfer_records import Measurement
from core.paleo.workload import Op, Workload, workload_from_net

TORCH_PREFIX = "torch:"

#: predict_step and step_time_ms stay though no other area imports them: docs/paleo.md's examples import them from here;
#: net_from_model is defined here
__all__ = [
    "DEFAULT_DEVICES", "DEFAULT_EFFICIENCIES", "DEFAULT_NETWORK",
    "DEVICES", "GPUS", "MODERN_DEVICES",
    "NETS_DIR", "NETWORKS", "PALEO_DEVICES", "PALEO_NETWORKS", "PALEO_SCHEMES", "PPP_PRESETS", "PRECISIONS",
    "PRECISION_TEXT", "TORCH_PREFIX", "DeviceComparison", "Efficiencies",
    "MeasuredProfile", "Measurement", "Net",
    "Op", "PPPCalibration", "PaleoScaling", "ProfileComparison", "Roof",
    "UNATTRIBUTED",
    "Workload",
    "SCALINGS", "batch_split", "calibrate_at_workers", "calibrate_ppp",
    "solve_compute_ppp", "MAX_PPP",
    "calibrate_transfer", "check_transfer",
    "compare_devices", "compare_profile", "devices_for", "get_device",
    "get_network", "layer_breakdown", "list_nets", "load_net",
    "load_workload", "measure_profile", "net_from_model", "networks_for", "parse_spec", "predict_step",
    "profile_report", "read_mlperf_throughput", "read_profile", "read_spec_file", "roof_for",
    "settings_for_mode", "simulate", "step_time_ms", "transfer_scaling",
    "worker_counts", "workload_from_net",
]


def net_from_model(model_name: str, batch_size: int = 1) -> Net:
    """The layer list of a :mod:`core.models` architecture: from the traced table at batch 1
    (:mod:`core.paleo.traced`, no torch), else traced (imports torch on first use).

    See :func:`core.paleo.torch_bridge.net_from_model`.
    """
    from core.paleo.traced import traced_net

    if batch_size == 1 and (net := traced_net(model_name)) is not None:
        return net
    from core.paleo.torch_bridge import net_from_model as _from_model

    return _from_model(model_name, batch_size)


def _is_model_ref(text: str) -> bool:
    """Whether :func:`load_net` would read ``text`` as a torch model rather than a spec."""
    from core.models import MODEL_NAMES

    if text.endswith(".json") and Path(text).is_file():
        return False
    if text.removesuffix(".json") in builtin_spec_names():
        return False
    return text.removeprefix(TORCH_PREFIX) in MODEL_NAMES


def load_workload(ref: str | Path | Net) -> Workload:
    """The op-by-op work of one training step, for the roofline and the transfer.

    A torch model (``torch:<model>``, or a bare model name no spec has) is traced aten op by
    aten op (:func:`core.paleo.torch_work.workload_from_model`, imports torch; a registered model's
    trace is read from :mod:`core.paleo.traced`'s table); a spec (or a
    :class:`Net`) gives its Paleo layer list's work (:func:`workload_from_net`).  Names resolve
    as in :func:`load_net`.

    Examples
    --------
    >>> w = load_workload("alex_v2")
    >>> w.counted.startswith("Paleo layer list"), w.n_params
    (True, 50303912)
    """
    if isinstance(ref, Net):
        return workload_from_net(ref)
    text = str(ref)
    if _is_model_ref(text):
        from core.paleo.traced import traced_workload

        model = text.removeprefix(TORCH_PREFIX)
        if (workload := traced_workload(model)) is not None:       # the traced table (no torch)
            return workload
        from core.paleo.torch_work import workload_from_model

        return workload_from_model(model)
    return workload_from_net(load_net(ref))


def measure_profile(model_name: str, **options) -> MeasuredProfile:
    """Time a :mod:`core.models` architecture's training step layer by layer (imports torch).

    See :func:`core.paleo.torch_profile.measure_profile` for the options.
    """
    from core.paleo.torch_profile import measure_profile as _measure

    return _measure(model_name.removeprefix(TORCH_PREFIX), **options)


def list_nets(*, loadable_only: bool = False) -> dict[str, tuple[str, ...]]:
    """Names :func:`load_net` accepts: ``{"specs": ..., "models": ...}``.

    Built-in Paleo specs go by their stem (``alex_v2``); torch models by
    ``torch:<name>``, or by the bare name when no spec has it (``resnet20``, but
    ``torch:resnet50`` since ``resnet50`` is Paleo's converted Caffe spec).

    Parameters
    ----------
    loadable_only : bool, default=False
        Leave out the built-in specs :func:`load_net` refuses (the model-parallel
        ``alex_v2_<k>gpu`` specs); each spec is read once to find out.

    Examples
    --------
    >>> nets = list_nets()
    >>> "inception_v3" in nets["specs"], "torch:inception_v3" in nets["models"]
    (True, True)
    >>> [s for s in nets["specs"] if s not in list_nets(loadable_only=True)["specs"]]
    ['alex_v2_2gpu', 'alex_v2_4gpu', 'alex_v2_8gpu']
    """
    from core.models import MODEL_NAMES

    specs = builtin_spec_names()
    if loadable_only:
        specs = tuple(s for s in specs if _spec_loads(s))
    return {"specs": specs, "models": tuple(f"{TORCH_PREFIX}{m}" for m in MODEL_NAMES)}


@functools.lru_cache(maxsize=64)
def _spec_loads(stem: str) -> bool:
    """Whether the built-in spec ``stem`` loads (the shipped files never change while the program runs)."""
    try:
        read_spec_file(NETS_DIR / f"{stem}.json")
    except InputError:
        return False
    return True


def load_net(ref: str | Path) -> Net:
    """A net by file path, built-in spec name, or model name.

    Resolution order: an existing ``.json`` file path; a built-in spec stem (with or
    without ``.json``) from ``data/paleo/nets/``; ``torch:<model>`` or a bare
    :data:`core.models.MODEL_NAMES` entry (torch bridge).

    Raises
    ------
    InputError
        If nothing matches, or the spec cannot be used (see :func:`parse_spec`).

    Examples
    --------
    >>> load_net("alex_v2").n_params            # Paleo's AlexNet v2 (PALEO_MODEL.md: 50.30 M)
    50303912
    >>> load_net("alex_v2_2gpu")
    Traceback (most recent call last):
    ...
    core.errors.InputError: alex_v2_2gpu.json: expected a data-parallel spec; got the ModelParallel block ...
    """
    text = str(ref)
    path = Path(text)
    if path.suffix == ".json" and path.is_file():
        return read_spec_file(path)
    stem = text.removesuffix(".json")
    if stem in builtin_spec_names():
        return read_spec_file(NETS_DIR / f"{stem}.json")
    model = text.removeprefix(TORCH_PREFIX)
    from core.models import MODEL_NAMES

    if model in MODEL_NAMES:
        return net_from_model(model)
    raise InputError(f"net: expected a .json spec path, a built-in spec ("
                     f"{', '.join(builtin_spec_names())}) or a model ({', '.join(MODEL_NAMES)}); "
                     f"got {text!r}. Check the name or path (python -m core paleo --list).")
