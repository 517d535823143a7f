"""The numbers a plan opens on before the user types their own: examples, computed where they can be.

The paper's θ have no time unit; the examples read one paper unit as ``SECONDS_PER_PAPER_UNIT``
seconds (docs/plan.md).  The all-reduce example is the Optimus fit of Pollux's cifar10 trace at
the paper's batch, rounded to three digits (``tests/core/plan/test_examples.py`` refits it).
"""

from __future__ import annotations

from core.speed import PAPER_GLOBAL_BATCH, PAPER_THETA, paper_speed_model

#: seconds per paper unit the examples assume (docs/plan.md)
SECONDS_PER_PAPER_UNIT = 0.02
#: the (p, w) the example step time is measured at
EXAMPLE_AT: tuple[int, int] = (2, 4)
#: the example measurement "one step takes s seconds at (p, w)": the paper's synchronous model there,
#: in seconds: ``(0.906, 2, 4)``
EXAMPLE_STEP_TIME: tuple[float, int, int] = (
    round(paper_speed_model("sync").step_time_s(*EXAMPLE_AT) * SECONDS_PER_PAPER_UNIT, 4), *EXAMPLE_AT)
#: Optimus's all-reduce θ fitted on data/pollux_traces/cifar10/scalability.csv at M = PAPER_GLOBAL_BATCH
CIFAR10_ALLREDUCE_THETA_S: tuple[float, float, float] = (0.000594, 0.092, 0.00207)
#: starting values of typed-in θ in seconds, per mode
EXAMPLE_THETA_S: dict[str, tuple[float, ...]] = {
    **{mode: tuple(round(t * SECONDS_PER_PAPER_UNIT, 6) for t in theta) for mode, theta in PAPER_THETA.items()},
    "allreduce": CIFAR10_ALLREDUCE_THETA_S,
}
#: the batch the all-reduce example was fitted at
EXAMPLE_GLOBAL_BATCH = PAPER_GLOBAL_BATCH
