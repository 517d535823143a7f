"""Calibration of the roofline on measured steps (core.paleo.transfer): known efficiencies are recovered."""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import InputError
from core.paleo import (
    DEFAULT_EFFICIENCIES,
    Efficiencies,
    Measurement,
    Op,
    Roof,
    Workload,
    calibrate_transfer,
    predict_step,
)
from core.paleo.roofline import roofline_step
from core.paleo.workload import KINDS

# toy devices of different compute/bandwidth balance (TFLOP/s tensor, CUDA cores, GB/s)
R1 = Roof("R1", "fp16", 100, 10, 1000, "hand")
R2 = Roof("R2", "fp16", 300, 30, 1500, "hand")
R3 = Roof("R3", "fp16", 50, 5, 2000, "hand")


def _w(name: str, *ops: Op) -> Workload:
    return Workload(name, "hand", ops, 0, "hand")


CONV = Op("conv", "convolution", "conv", "forward", 0, 1e11, 0, 1e7)        # compute-bound everywhere
NORM = Op("bn", "native_batch_norm", "norm", "forward", 0, 1e6, 0, 1e9)     # memory-bound everywhere
MIXED = _w("mixed", CONV, NORM)
PURE = {k: _w(k, Op(k, k, k, "forward", 0, 1e11, 0, 1e9)) for k in KINDS}


def _measure(truth: Efficiencies, workload: Workload, roof: Roof, batch: int = 8, noise: float = 0.0) -> Measurement:
    seconds = roofline_step(workload, roof, precision="fp16", batch_size=batch, efficiencies=truth).total_s
    return Measurement(workload, roof, "fp16", batch, seconds * (1 + noise), label=f"{workload.name} on {roof.name}")


def _close(a: Efficiencies, b: Efficiencies, rel: float = 1e-6) -> None:
    assert a.compute == pytest.approx(b.compute, rel=rel) and a.memory == pytest.approx(b.memory, rel=rel)


def test_one_measurement_recovers_a_common_factor_exactly():
    truth = DEFAULT_EFFICIENCIES.scaled(0.7, 0.7)
    cal = calibrate_transfer([_measure(truth, MIXED, R1)])
    assert cal.fit == "common" and dict(cal.factors)["all"] == pytest.approx(0.7)
    _close(cal.efficiencies, truth)
    assert cal.measurements[0].error_pct == pytest.approx(0, abs=1e-9) and cal.dof == 0
    # the prediction on another device is the truth's, inside the interval
    want = roofline_step(MIXED, R2, precision="fp16", batch_size=8, efficiencies=truth).total_s
    p = predict_step(cal, MIXED, R2, precision="fp16", batch_size=8)
    assert p.time_s == pytest.approx(want) and p.low_s <= want <= p.high_s


def test_several_devices_recover_compute_and_memory_factors():
    truth = DEFAULT_EFFICIENCIES.scaled(0.8, 1.1)          # slower tensor cores, faster memory than the prior
    cal = calibrate_transfer([_measure(truth, MIXED, r) for r in (R1, R2, R3)])
    assert cal.fit == "compute-memory" and cal.dof == 1
    assert dict(cal.factors) == pytest.approx({"compute": 0.8, "memory": 1.1}, rel=1e-6)
    _close(cal.efficiencies, truth)
    assert cal.rms_log_residual == pytest.approx(0, abs=1e-9) and cal.band == pytest.approx(1)


def test_per_kind_factors_are_recovered_from_enough_measurements():
    factors = {"conv": 0.9, "matmul": 1.2, "norm": 0.7, "elementwise": 1.1, "pool": 0.6}
    truth = Efficiencies(tuple(c * factors[k] for c, k in zip(DEFAULT_EFFICIENCIES.compute, KINDS)),
                         tuple(m * factors[k] for m, k in zip(DEFAULT_EFFICIENCIES.memory, KINDS)))
    measurements = [_measure(truth, PURE[k], r) for k in KINDS for r in (R1, R2)] + [_measure(truth, MIXED, R3)]
    cal = calibrate_transfer(measurements, fit="per-kind")
    assert cal.fit == "per-kind" and cal.dof == len(measurements) - len(KINDS)
    assert dict(cal.factors) == pytest.approx(factors, rel=1e-6)
    _close(cal.efficiencies, truth)


def test_one_measurement_s_interval_covers_a_different_split():
    # the truth has slow compute and fast memory; one measurement cannot see that, the interval can
    truth = DEFAULT_EFFICIENCIES.scaled(0.5, 1.2)
    cal = calibrate_transfer([_measure(truth, MIXED, R1)])
    assert cal.fit == "common" and len(cal.alternatives) == 2 and "split" in cal.interval_note
    for roof in (R2, R3):
        want = roofline_step(MIXED, roof, precision="fp16", batch_size=8, efficiencies=truth).total_s
        p = predict_step(cal, MIXED, roof, precision="fp16", batch_size=8)
        assert p.time_s != pytest.approx(want, rel=1e-3)          # the point is off ...
        assert p.low_s <= want * (1 + 1e-9) and want <= p.high_s * (1 + 1e-9)   # ... the interval is not
    # both extremes still reproduce the measurement
    for alt in cal.alternatives:
        assert roofline_step(MIXED, R1, precision="fp16", batch_size=8, efficiencies=alt).total_s == pytest.approx(
            cal.measurements[0].measured_s)


def test_noisy_measurements_give_a_residual_band():
    truth = DEFAULT_EFFICIENCIES.scaled(0.8, 1.1)
    for seed in range(10):
        rng = np.random.default_rng(seed)
        ms = [_measure(truth, MIXED, r, batch=b, noise=rng.normal(0, 0.02)) for r in (R1, R2, R3) for b in (4, 16)]
        cal = calibrate_transfer(ms)
        assert cal.fit == "compute-memory" and cal.dof == 4, seed
        assert 0 < cal.rms_log_residual < 0.06 and cal.band > 1, seed
        # 2 % noise on 6 steps whose compute-bound shares differ by ~20 points: the factor within 15 %
        assert dict(cal.factors)["compute"] == pytest.approx(0.8, rel=0.15), seed


def test_fixed_time_is_subtracted_before_calibrating():
    truth = DEFAULT_EFFICIENCIES.scaled(0.7, 0.7)
    m = _measure(truth, MIXED, R1)
    with_comm = Measurement(m.workload, m.device, m.precision, m.batch_size, m.step_time_s + 0.010, fixed_s=0.010)
    assert dict(calibrate_transfer([with_comm]).factors)["all"] == pytest.approx(0.7)


def test_flags_for_faster_than_peak():
    m = _measure(DEFAULT_EFFICIENCIES.scaled(2.0, 2.0), MIXED, R1)     # efficiencies 1.2-1.6
    cal = calibrate_transfer([m])
    assert any("above 1" in f for f in cal.flags)


@pytest.mark.parametrize("measurements, kwargs, pattern", [
    ([], {}, r"measurements: expected at least one measured step time; got none"),
    ([Measurement(MIXED, R1, "fp16", 8, -1.0)], {}, r"step_time_s: expected a finite number > 0; got -1.0"),
    ([Measurement(MIXED, R1, "fp16", 8, 0.01, fixed_s=0.02)], {}, r"expected a step time above its fixed part"),
    ([Measurement(MIXED, "V100_SXM2", "bf16", 8, 0.01)], {}, r"expected one of fp32, fp16 for V100_SXM2"),
    ([Measurement(MIXED, R1, "fp16", 8, 0.01)], {"fit": "per-kind"},
     r"fit: expected at most as many factors as measurements \(1\); got 'per-kind' with 2 factors"),
    ([Measurement(MIXED, R1, "fp16", 8, 0.01)], {"fit": "best"}, r"fit: expected one of auto, common"),
])
def test_bad_input_is_refused(measurements, kwargs, pattern):
    with pytest.raises(InputError, match=pattern):
        calibrate_transfer(measurements, **kwargs)


def test_two_factors_on_two_measurements_interval_from_the_leave_one_out_refits():
    truth = DEFAULT_EFFICIENCIES.scaled(0.8, 1.1)
    cal = calibrate_transfer([_measure(truth, MIXED, R1), _measure(truth, MIXED, R2)], fit="compute-memory")
    assert cal.dof == 0 and dict(cal.factors) == pytest.approx({"compute": 0.8, "memory": 1.1}, rel=1e-6)
    # each refit on one measurement is a common factor; the exact fit sits between them on the third device
    assert len(cal.alternatives) == 2 and cal.interval_note == "Interval from the leave-one-out refits."
    p = predict_step(cal, MIXED, R3, precision="fp16", batch_size=8)
    assert p.low_s <= p.time_s <= p.high_s and p.low_s < p.high_s
