"""``plan_on_device`` from the logs' metadata alone (uploads and built-in sets have no file beside a systems
JSON) gives the plan that reading the files gives."""

from __future__ import annotations

import pandas as pd
import pytest

from core.datasets import builtin_log_files
from core.errors import InputError
from core.logs import read_log_file
from core.plan import plan_on_device


@pytest.fixture(scope="module")
def gb200_8():
    files = [(n, p) for n, p in builtin_log_files("mlperf_llama8b") if "ngpu8_" in n]
    return [read_log_file(p, source=n) for n, p in files], [p for _, p in files]


@pytest.mark.parametrize("device", ["GB200", "B200"])
def test_the_logs_metadata_gives_the_plan_their_files_give(gb200_8, device):
    logs, paths = gb200_8
    assert {log.target.spec for log in logs} == {"eval_accuracy<=3.3"}       # the logs' own: log-perplexity
    from_files = plan_on_device(logs, paths, device, [8, 64])
    from_meta = plan_on_device(logs, None, device, [8, 64])
    pd.testing.assert_frame_equal(from_meta.table, from_files.table, rtol=1e-9)
    assert any("source 8×GB200" in f for f in from_meta.flags)


def test_a_log_without_its_device_is_refused_with_its_name(gb200_8):
    logs, _ = gb200_8
    nameless = [log.with_meta(accelerator=None, gpu=None) for log in logs]
    with pytest.raises(InputError, match=r"ngpu8_ngc25.09_nemo/result_0.txt: expected the source device"):
        plan_on_device(nameless, None, "B200", [8])


def test_the_plan_on_a_device_is_the_pieces_composed(gb200_8):
    """One plan for every family: on another device the row is the calibrated transformer model's step × the
    samples at that batch / M × the logs' evaluation overhead, its interval the samples' × the model's band (what
    the separate --to-device path computed before issue 33)."""
    import math

    from core.batch import EXTRAPOLATION_SIGMA
    from core.plan import measured_configurations, samples_at_batch, transformer_from_logs
    from core.plan.log_plan import counted_overhead

    logs, paths = gb200_8
    plan = plan_on_device(logs, paths, "B200", [8, 64], global_batch=32.0)
    measured, _ = measured_configurations(logs)
    model, _ = transformer_from_logs(logs, paths, measured, "B200", global_batch=32.0)
    overhead, _ = counted_overhead(measured)
    samples = samples_at_batch(measured, 32.0, benchmark="llama31_8b")
    low, high = model.time_band
    for w in (8, 64):
        row = plan.table.set_index("w").loc[w]
        step = model.prediction(w, 32.0).time * model.factor
        widen = math.exp(EXTRAPOLATION_SIGMA * math.log(w / 8))     # 64 GPUs lie ln 8 e-folds beyond the logs' 8
        assert row["step_time_s"] == pytest.approx(step, rel=1e-12)
        assert row["time_s"] == pytest.approx(samples.samples / 32 * step * overhead, rel=1e-12)
        assert row["time_low"] == pytest.approx(samples.low / 32 * step * low / widen * overhead, rel=1e-12)
        assert row["time_high"] == pytest.approx(samples.high / 32 * step * high * widen * overhead, rel=1e-12)
        assert row["speed_model"] == "transformer" and row["device"] == "B200"
        assert row["samples_source"] == samples.source == "rcp"


def test_another_architecture_corrects_the_compute_by_its_measured_efficiency(gb200_8):
    """GB200 (Blackwell) → B300 (Blackwell Ultra, the same datasheet BF16/FP8 peaks) and → MI355X (CDNA4): the
    compute of the step on the datasheet's fractions divided by efficiency(target) / efficiency(GB200), read from
    the achieved-efficiency table; stderr's notes say so; within one architecture (GB200 → B200) nothing changes.
    The transformer model gives the plan's step itself (one answer, whichever path asks)."""
    from core.speed import transformer_speed_model
    from core.transformer import Overlap, achieved_efficiency, estimate_step, get_accelerator, parse_strategy

    logs, paths = gb200_8
    for target in ("B300", "MI355X", "B200"):
        plan = plan_on_device(logs, paths, target, [8], global_batch=16.0)
        row = plan.table.iloc[0]
        model = plan.model
        same = transformer_speed_model(model.config, get_accelerator(target), seq_len=model.seq_len,
                                       measurements=model.calibration.measurements, global_batch=16.0)
        assert row["step_time_s"] == pytest.approx(same.step_time_s(0, 8), rel=1e-12)
        cal = model.calibration
        sheet = estimate_step(model.config, get_accelerator(target), parse_strategy(row["strategy"]),
                              global_batch=16, seq_len=model.seq_len, eff=cal.efficiency, overlap=Overlap(),
                              check_memory=False, latency=cal.latency).time
        ratio = achieved_efficiency("GB200").efficiency / achieved_efficiency(target).efficiency
        if target == "B200":
            assert ratio == 1.0 and row["step_time_s"] == pytest.approx(sheet, rel=1e-12)
        else:       # only the compute is corrected: the step moves toward sheet × ratio, not past it
            assert (row["step_time_s"] < sheet) == (ratio < 1)
            assert min(sheet, sheet * ratio) <= row["step_time_s"] <= max(sheet, sheet * ratio)
        assert any(f.startswith("achieved efficiency") for f in plan.flags) == (target != "B200")
    assert achieved_efficiency("B300").efficiency > 1 > achieved_efficiency("MI355X").efficiency
    assert achieved_efficiency("B200").efficiency == achieved_efficiency("GB200").efficiency == 1.0
