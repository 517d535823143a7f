"""Language-model step time on GPUs you have not measured (issue 19).

Transformer work per step from a model description (:mod:`.config`, :mod:`.flops`), the accelerators
(:mod:`.devices`), data × tensor × pipeline × context parallelism (:mod:`.strategy`) with its memory
(:mod:`.memory`) and collectives (:mod:`.parallel`), and the step time calibrated on measured steps
with a leave-one-out interval (:mod:`.calibrate`). See docs/transformer.md.
"""

from core.transformer.achieved import ARCHITECTURES, Achieved, achieved_efficiency, transfer_factor
from core.transformer.calibrate import Calibration, Measurement, Prediction, calibrate, predict, step_table
from core.transformer.config import BUILTIN, TransformerConfig, load_config
from core.transformer.devices import ACCELERATORS, Accelerator, accelerator_from_text, get_accelerator, system_from_json
from core.transformer.flops import Work, layer_ops, step_work
from core.transformer.measured import LogStep, read_log_step
from core.transformer.memory import Memory, memory_per_gpu
from core.transformer.parallel import (
    TENSOR_PRECISIONS,
    Efficiency,
    Latency,
    Overlap,
    StepEstimate,
    best_strategy,
    estimate_step,
)
from core.transformer.strategy import Strategy, parse_strategy, with_dp

__all__ = [
    "ARCHITECTURES", "TENSOR_PRECISIONS", "Achieved", "achieved_efficiency", "transfer_factor",
    "ACCELERATORS", "BUILTIN", "Accelerator", "Calibration", "Efficiency", "Latency", "LogStep", "Measurement",
    "Memory", "Overlap", "Prediction", "StepEstimate", "Strategy", "TransformerConfig", "Work", "accelerator_from_text",
    "best_strategy", "calibrate", "estimate_step", "get_accelerator", "layer_ops", "load_config", "memory_per_gpu",
    "parse_strategy", "predict", "read_log_step", "step_table", "step_work", "system_from_json", "with_dp",
]
