"""Measure a torch model's training step layer by layer with ``torch.profiler`` (CPU or CUDA).

:func:`measure_profile` builds a :mod:`core.models` architecture, trains it for a few
steps on random data (SGD with momentum, ``output.sum()`` as the loss, as the traced
workload does) and records:

* the median wall time of a step without the profiler;
* under ``torch.profiler``, each layer's time: every module's forward runs inside a
  ``record_function("layer::<module path>")`` range, so a forward aten op belongs to the
  innermost module around it (an ``F.relu`` in a ResNet block to the block); each backward
  node (``autograd::engine::evaluate_function: ...Backward0``) belongs to the layer of the
  forward op with the same autograd sequence number; the optimizer step to
  ``"optimizer step"``.  On CPU a layer's time is its ops' CPU time; on CUDA their kernels'
  device time.  Each profiled step runs in a ``record_function("step::<i>")`` range; the
  layer times and the profiled step are **averaged over the faster half of the steps**
  (interference on a shared machine only ever slows a step down; averaging over the same
  steps keeps the layers adding up to the step);
* the device as a roof: the rate of a 2048 x 2048 FP32 matrix product and the bandwidth of a
  16 M-element FP32 copy (64 MB read, 64 MB written), timed the same way.

This is a measurement: it reads the clock and sets torch's thread count (restored after).
The CUDA path could not be run in the session that wrote it (no GPU was lent): it is written
for the same events plus device times, and untested.
"""

from __future__ import annotations

import bisect
import platform
import statistics
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile, record_function

from core.errors import InputError
from core.paleo.profile import LayerTime, MeasuredProfile, measured_roof
from core.paleo.torch_work import LOSS_LAYER
from core.paleo.workload import UPDATE_LAYER
from core.validation import check_option, check_scalar

LAYER_PREFIX = "layer::"
STEP_PREFIX = "step::"
BACKWARD_PREFIX = "autograd::engine::evaluate_function: "
DEVICES = ("cpu", "cuda")


def _device_label(device: str) -> str:
    if device == "cuda":
        return torch.cuda.get_device_name()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "CPU"


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def _median_s(fn, device: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        _sync(device)
        start = time.perf_counter()
        fn()
        _sync(device)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure_rates(device: str = "cpu", *, repeat: int = 5) -> tuple[float, float]:
    """``(GFLOP/s of a 2048² FP32 matrix product, GB/s of a 16 M-element FP32 copy)`` on ``device``."""
    n, elements = 2048, 16 * 2 ** 20
    a, b = torch.randn(n, n, device=device), torch.randn(n, n, device=device)
    src, dst = torch.randn(elements, device=device), torch.empty(elements, device=device)
    a @ b
    dst.copy_(src)
    gemm_s = _median_s(lambda: a @ b, device, repeat)
    copy_s = _median_s(lambda: dst.copy_(src), device, repeat)
    return 2 * n ** 3 / gemm_s / 1e9, 2 * elements * 4 / copy_s / 1e9


def _step_of(events) -> tuple[list[float], list[float]]:
    """Start and end times (µs) of the ``step::<i>`` ranges, in order."""
    steps = sorted((e.time_range.start, e.time_range.end) for e in events if e.name.startswith(STEP_PREFIX))
    return [a for a, _ in steps], [b for _, b in steps]


def _layer_times(events, cuda: bool) -> tuple[tuple[LayerTime, ...], float]:
    """Per-layer forward and backward seconds and the profiled step, averaged over the faster half of the steps.

    Each op is put in the step whose ``step::<i>`` range holds its start (module docstring for the layers).
    """
    def spent(e) -> float:
        return (e.device_time_total if cuda else e.cpu_time_total) / 1e6

    starts, ends = _step_of(events)
    n_steps = len(starts)

    def step_index(e) -> int:
        return max(0, bisect.bisect_right(starts, e.time_range.start) - 1)

    forward = defaultdict(lambda: np.zeros(n_steps))
    backward = defaultdict(lambda: np.zeros(n_steps))
    layer_of_seq: dict[int, str] = {}
    order: list[str] = []
    for e in events:
        parent = e.cpu_parent
        if e.name.startswith(LAYER_PREFIX) and e.name[len(LAYER_PREFIX):] not in forward:
            order.append(e.name[len(LAYER_PREFIX):])
            forward[order[-1]] += 0.0
        if parent is not None and parent.name.startswith(LAYER_PREFIX) and not e.name.startswith(LAYER_PREFIX):
            layer = parent.name[len(LAYER_PREFIX):]
            forward[layer][step_index(e)] += spent(e)
            if e.sequence_nr >= 0:
                layer_of_seq.setdefault(e.sequence_nr, layer)
    for e in events:
        top = e.cpu_parent is None or e.cpu_parent.name.startswith(STEP_PREFIX)
        if e.name.startswith(BACKWARD_PREFIX) and e.sequence_nr >= 0 and top:
            backward[layer_of_seq.get(e.sequence_nr, LOSS_LAYER)][step_index(e)] += spent(e)
    names = [*order, *(k for k in backward if k not in forward)]
    names = [n for n in names if n != UPDATE_LAYER] + [n for n in names if n == UPDATE_LAYER]
    zero = np.zeros(n_steps)
    totals = sum((forward.get(n, zero) + backward.get(n, zero) for n in names), zero)
    kept = np.argsort(totals, kind="stable")[:(n_steps + 1) // 2]      # the faster half of the steps
    layers = tuple(LayerTime(n, float(forward.get(n, zero)[kept].mean()), float(backward.get(n, zero)[kept].mean()))
                   for n in names)
    return layers, float(np.mean(np.subtract(ends, starts)[kept])) / 1e6


def measure_profile(model_name: str, *, batch_size: int, device: str = "cpu", steps: int = 5, warmup: int = 2,
                    threads: int = 1, seed: int = 0) -> MeasuredProfile:
    """Time one training step of a :mod:`core.models` architecture, layer by layer.

    Parameters
    ----------
    model_name : str
        A :data:`core.models.MODEL_NAMES` entry (``"resnet20"``).
    batch_size : int
    device : {"cpu", "cuda"}, default="cpu"
    steps : int, default=5
        Profiled (and, separately, timed) steps.
    warmup : int, default=2
        Steps run first and not counted.
    threads : int, default=1
        Torch intra-op threads (CPU); 1 gives steadier numbers on a shared machine.
    seed : int, default=0
        Weights and random input.

    Raises
    ------
    InputError
        Unknown model or device, CUDA asked without a GPU, non-positive counts.
    """
    from core.models import build_model, example_input

    check_option(device, "device", DEVICES, fix="Pick one")
    if device == "cuda" and not torch.cuda.is_available():
        raise InputError("device: expected a CUDA GPU for --device cuda; got none on this machine. Use --device cpu.")
    for value, name in ((batch_size, "batch_size"), (steps, "steps"), (threads, "threads")):
        check_scalar(value, name, int, min_val=1)
    check_scalar(warmup, "warmup", int, min_val=0)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        torch.manual_seed(seed)
        model = build_model(model_name).to(device).train()
        x = torch.randn(tuple(example_input(model_name, batch_size).shape), device=device)
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
        names = {m: (n or type(model).__name__) for n, m in model.named_modules()}
        open_ranges: list = []

        def enter(mod, args) -> None:
            rf = record_function(LAYER_PREFIX + names[mod])
            rf.__enter__()
            open_ranges.append(rf)

        def leave(mod, args, out) -> None:
            open_ranges.pop().__exit__(None, None, None)

        def step() -> None:
            optimizer.zero_grad(set_to_none=True)
            model(x).sum().backward()
            with record_function(LAYER_PREFIX + UPDATE_LAYER):
                optimizer.step()

        for _ in range(warmup):
            step()
        step_s = _median_s(step, device, steps)
        handles = [h for m in model.modules()
                   for h in (m.register_forward_pre_hook(enter), m.register_forward_hook(leave))]
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
        try:
            with profile(activities=activities) as prof:
                for i in range(steps):
                    with record_function(f"{STEP_PREFIX}{i}"):
                        step()
                        _sync(device)
        finally:
            for h in handles:
                h.remove()
        layers, profiled_s = _layer_times(prof.events(), device == "cuda")
        gemm_gflops, copy_gbs = measure_rates(device)
    finally:
        torch.set_num_threads(before)
    label = _device_label(device)
    return MeasuredProfile(net=f"torch:{model_name}", batch_size=int(batch_size), device=device, device_label=label,
                           threads=int(threads), steps=int(steps), step_time_s=step_s, profiled_step_s=profiled_s,
                           roof=measured_roof(label, gemm_gflops, copy_gbs, threads=int(threads)), layers=layers,
                           torch_version=torch.__version__)
