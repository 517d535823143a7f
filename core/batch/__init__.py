"""Batch scaling: samples and steps to target as a function of the global batch (McCandlish et al. 2018).

Modules: ``formulas`` (``E(B) = E_min·(1 + B/B_noise)``, ``S(B)``, statistical efficiency and goodput),
``measured_runs`` (one run's samples and steps to target at its batch), ``scaling_model`` (``BatchScaling``:
the model with its intervals, typed or anchored), ``batch`` (the model learned: fitted across batches or
from a noise scale), ``study`` (the batch study of a set of logs). Below both ``core.prediction`` (the same
job's fit is a prior) and ``core.plan`` (steps to target at a batch); ``rcp_data``, MLCommons' reference
convergence points read from the installed ``mlperf-logging``; ``rcp``, each batch's points predicted from
the others.
"""

from core.batch.batch import TUNED_NOTE, batch_scaling, fit_batch_scaling
from core.batch.measured_runs import BatchRun, evaluation_resolution, measure_batch_run, measure_batch_runs
from core.batch.rcp import RCP_COLUMNS, predict_from_points, rcp_fit, rcp_leave_one_out
from core.batch.rcp_data import latest_round, load_rcps, parse_rcp_spec, rcp_benchmarks, rcp_rounds
from core.batch.scaling_model import EXTRAPOLATION_SIGMA, BatchScaling, anchored_batch_scaling, typed_batch_scaling
from core.batch.study import BatchStudy, batch_study

__all__ = [
    'EXTRAPOLATION_SIGMA', 'RCP_COLUMNS', 'latest_round', 'load_rcps',
    'evaluation_resolution', 'parse_rcp_spec', 'predict_from_points',
    'rcp_benchmarks', 'rcp_fit',
    'rcp_leave_one_out', 'rcp_rounds',
    'TUNED_NOTE', 'BatchRun', 'BatchScaling',
    'BatchStudy', 'anchored_batch_scaling', 'batch_scaling', 'batch_study', 'fit_batch_scaling',
    'measure_batch_run', 'measure_batch_runs',
    'typed_batch_scaling',
]
