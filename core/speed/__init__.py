"""Speed: a training step's time on ``w`` GPUs (and ``p`` parameter servers), the one step-time area.

Every speed model is a registered **speed family** (:mod:`core.speed.registry`) behind one declared interface
(:mod:`core.speed.family`: ``SpeedFamily`` records what a consumer reads: name, label, the formula of each
mode, ``fit``, ``loo``, the context a table must name; ``FittedSpeed`` is what a fitted model answers:
``steps_per_s_at``, ``step_time_s``, ``scaled``, ``named_params``, ``report``, ``to_dict``).  A contract test
over the registry checks every entry (tests/core/plan/test_speed_contract.py).

Modules: ``family`` (the interface and scaling to a measured step), ``table`` (measured speeds in one shape),
``optimus`` and ``optimus_fit`` (Optimus, EuroSys 2018: equations, paper θ, NNLS fit), ``pollux`` and
``pollux_fit`` (Pollux's throughput model, OSDI 2021), ``transformer`` (the transformer model of
:mod:`core.transformer`, calibrated fractions of peak), ``per_gpu_batch`` (the fit of logs' own step times
against the per-GPU batch: overhead, elastic, their bracket), ``paleo`` (Paleo's roofline with PPP),
``registry`` (every family by name), ``select`` (the chooser: families fitted and scored by leave-one-out;
the choice of θ source for a plan).
"""

from core.speed.family import FittedSpeed, SpeedFamily, scale_to_step_time
from core.speed.optimus import MODES, PAPER_GLOBAL_BATCH, PAPER_THETA, THETA_NAMES, SpeedModel, paper_speed_model
from core.speed.optimus_fit import fit_speed_model
from core.speed.paleo import StepCalibration, calibrate_paleo_step
from core.speed.per_gpu_batch import PerGpuBatchSpeed, bracket_band
from core.speed.pollux import PolluxSpeedModel
from core.speed.pollux_fit import fit_pollux_speed
from core.speed.registry import SPEED_FAMILIES, get_speed_family

# names used outside the area since the trim (issue 34)
from core.speed.select import (
    THETA_SOURCES,
    SpeedFit,
    build_speed_model,
    fit_speed,
    speed_model_choices,
    speed_model_names,
)
from core.speed.table import default_speed_mode, has_parameter_servers, read_speed_csv, speed_table_from_logs
from core.speed.transformer import TransformerSpeedModel, transformer_speed_model

__all__ = [
    'speed_model_names', 'FittedSpeed', 'SpeedFamily', 'scale_to_step_time', 'MODES', 'PAPER_GLOBAL_BATCH',
    'PAPER_THETA', 'THETA_NAMES', 'SpeedModel', 'paper_speed_model', 'fit_speed_model', 'StepCalibration',
    'calibrate_paleo_step', 'PerGpuBatchSpeed', 'bracket_band', 'PolluxSpeedModel', 'fit_pollux_speed',
    'SPEED_FAMILIES', 'get_speed_family', 'THETA_SOURCES', 'SpeedFit', 'build_speed_model', 'fit_speed',
    'speed_model_choices', 'default_speed_mode', 'has_parameter_servers', 'read_speed_csv', 'speed_table_from_logs',
    'TransformerSpeedModel', 'transformer_speed_model',
]
