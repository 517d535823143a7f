"""One analysis per run: where a log passed its target, its fitted loss curve, the table of fits.

Modules: ``targets`` (where accuracy passed the target; where a fitted curve reaches a loss),
``analysis`` (``RunAnalysis`` per log, the fits table, ``fit_files`` for the CLI), ``target_choice``
(the target the pages offer on loaded runs: declared, metrics, direction, a suggestion), ``summary``
(how many runs reached their target, which first: the Logs page's headline).
"""

from core.runs.analysis import (
    FIT_TABLE_COLUMNS,
    RunAnalysis,
    RunFit,
    analyse_run,
    epoch_summary,
    fit_files,
    fit_metric,
    fit_run,
    fits_table,
    fits_table_of_rows,
    loss_curves,
    run_key,
    select_runs,
    step_scales,
    thin_indices,
)
from core.runs.evaluations import compared_rows, is_evaluation_metric, metric_column
from core.runs.summary import amount_text, not_loaded_text, summarize_targets

#: is_evaluation_metric stays though no other area imports it: docs/logs.md names it as core.runs.is_evaluation_metric
# names used outside the area since the trim (issue 34)
from core.runs.target_choice import (
    accuracy_chart_target,
    given_target,
    metric_direction,
    slider_range,
    starting_target,
    suggested_target,
    target_metrics,
    widget_target,
)
from core.runs.targets import (
    CRITERIA,
    TargetCrossing,
    best_accuracy,
    criterion_text,
    find_target_crossing,
    predict_step_at_loss,
)

__all__ = [
    'accuracy_chart_target', 'given_target', 'slider_range', 'starting_target', 'widget_target', 'CRITERIA',
    'FIT_TABLE_COLUMNS', 'RunAnalysis', 'RunFit', 'TargetCrossing', 'analyse_run', 'best_accuracy', 'compared_rows',
    'criterion_text', 'epoch_summary', 'is_evaluation_metric', 'find_target_crossing', 'fit_files', 'fit_metric',
    'summarize_targets', 'amount_text', 'not_loaded_text', 'fit_run', 'fits_table', 'fits_table_of_rows',
    'loss_curves', 'metric_column', 'metric_direction', 'predict_step_at_loss', 'run_key', 'select_runs',
    'step_scales', 'suggested_target', 'target_metrics', 'thin_indices',
]
