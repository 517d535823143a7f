"""Language-model step time on GPUs you have not measured (issue 19).

Transformer work per step from a model description (:mod:`.config`, :mod:`.flops`), the accelerators
(:mod:`.devices`), data × tensor × pipeline × context parallelism (:mod:`.strategy`) with its memory
(:mod:`.memory`) and collectives (:mod:`.parallel`), and the step time calibrated on measured steps
with a leave-one-out interval (:mod:`.calibrate`). See docs/transformer.md.
"""

from core.transformer.achieved import ARCHITECTURES, achieved_efficiency, transfer_factor
from core.transformer.calibrate import Calibration, Measurement, Prediction, calibrate, predict, step_table
from core.transformer.config import BUILTIN, TransformerConfig, load_config
from core.transformer.devices import ACCELERATORS, Accelerator, accelerator_from_text, get_accelerator, system_from_json
from core.transformer.measured import LogStep, read_log_step

# names used outside the area since the trim (issue 34)
from core.transformer.parallel import (
    TENSOR_PRECISIONS,
    Efficiency,
    Overlap,
    estimate_step,
)
from core.transformer.strategy import Strategy, parse_strategy, with_dp

__all__ = [
    'TENSOR_PRECISIONS', 'ARCHITECTURES', 'achieved_efficiency', 'transfer_factor', 'ACCELERATORS', 'BUILTIN',
    'Accelerator', 'Calibration', 'Efficiency', 'LogStep', 'Measurement', 'Overlap', 'Prediction', 'Strategy',
    'TransformerConfig', 'accelerator_from_text', 'calibrate', 'estimate_step', 'get_accelerator', 'load_config',
    'parse_strategy', 'predict', 'read_log_step', 'step_table', 'system_from_json', 'with_dp',
]
