"""Batch scaling: samples and steps to target as a function of the global batch (McCandlish et al. 2018).

Modules: ``formulas`` (``E(B) = E_min·(1 + B/B_noise)``, ``S(B)``, statistical efficiency and goodput),
``measured_runs`` (one run's samples and steps to target at its batch), ``scaling_model`` (``BatchScaling``:
the model with its intervals, typed or anchored), ``batch`` (the model learned: fitted across batches or
from a noise scale), ``study`` (the batch study of a set of logs). Below both ``core.prediction`` (the same
job's fit is a prior) and ``core.plan`` (steps to target at a batch); ``rcp_data``, MLCommons' reference
convergence points read from the installed ``mlperf-logging``; ``rcp``, each batch's points predicted from
the others.
"""

from core.batch.batch import (
    BATCH_SCALING_METHODS,
    TUNED_NOTE,
    batch_scaling,
    fit_batch_scaling,
    learning_rate_cap,
    noise_batch_scaling,
)
from core.batch.formulas import (
    EFFICIENCY_LATEX,
    SAMPLES_LATEX,
    STEPS_LATEX,
    goodput,
    samples_to_target,
    statistical_efficiency,
    steps_to_target,
)
from core.batch.measured_runs import (
    BatchRun,
    evaluation_resolution,
    measure_batch_run,
    measure_batch_runs,
    run_batch,
    samples_at_step,
)
from core.batch.rcp import (
    LR_TOLERANCE,
    RCP_COLUMNS,
    lr_deviation,
    mccandlish_prediction,
    predict_from_points,
    rcp_fit,
    rcp_leave_one_out,
)
from core.batch.rcp_data import latest_round, load_rcps, parse_rcp_spec, rcp_benchmarks, rcp_rounds, rcp_unit
from core.batch.scaling_model import EXTRAPOLATION_SIGMA, BatchScaling, anchored_batch_scaling, typed_batch_scaling
from core.batch.study import BatchStudy, batch_study, crossing_row

__all__ = [
    'EXTRAPOLATION_SIGMA', 'LR_TOLERANCE', 'RCP_COLUMNS', 'latest_round', 'learning_rate_cap', 'load_rcps',
    'evaluation_resolution', 'lr_deviation', 'mccandlish_prediction', 'parse_rcp_spec', 'predict_from_points',
    'rcp_benchmarks', 'rcp_fit',
    'rcp_leave_one_out', 'rcp_rounds', 'rcp_unit',
    'BATCH_SCALING_METHODS', 'EFFICIENCY_LATEX',
    'SAMPLES_LATEX', 'STEPS_LATEX', 'TUNED_NOTE', 'BatchRun', 'BatchScaling',
    'BatchStudy', 'anchored_batch_scaling', 'batch_scaling', 'batch_study', 'crossing_row', 'fit_batch_scaling',
    'goodput', 'measure_batch_run', 'measure_batch_runs', 'noise_batch_scaling', 'run_batch', 'samples_at_step',
    'samples_to_target',
    'statistical_efficiency', 'steps_to_target', 'typed_batch_scaling',
]
