"""Paleo's time to target beside Optimus: steps × Paleo's per-iteration time."""

from __future__ import annotations

import pytest

from core.errors import InputError
from core.paleo import load_net, simulate
from core.plan import measured_step_time
from core.plan.paleo_time import paleo_net_for, paleo_time_to_target


@pytest.fixture(scope="module")
def net():
    return load_net("alex_v2")


def test_time_is_steps_times_paleo_step_time(net):
    frame = paleo_time_to_target(net, 10_000, workers=[1, 2, 4], ps=[2, 4], global_batch=128, device="V100",
                                 network="ethernet", ppp_comp=0.62, ppp_comm=0.72)
    ref = simulate(net, device="V100", network="ethernet", batch_size=128, workers=(1, 2, 4), scaling="strong",
                   ppp_comp=0.62, ppp_comm=0.72, n_ps=(2, 4))
    p2 = frame[frame["p"] == 2].sort_values("w")
    # time_s = 10,000 steps × ms / 1000
    assert p2["time_s"].tolist() == pytest.approx([10_000 * ms / 1000 for ms in ref.total_ms("ParameterServer_p2")])
    assert (frame["time_h"] == frame["time_s"] / 3600).all()
    assert set(frame["label"]) == {"Paleo p = 2 (V100, ethernet)", "Paleo p = 4 (V100, ethernet)"}


def test_no_servers_means_ring_all_reduce(net):
    frame = paleo_time_to_target(net, 100, workers=[1, 8], ps=[], global_batch=256)
    ref = simulate(net, batch_size=256, workers=(1, 8), scaling="strong")
    assert (frame["p"] == 0).all() and frame["label"].iloc[0].startswith("Paleo ring all-reduce")
    assert frame["step_ms"].tolist() == pytest.approx(list(ref.total_ms("RingAllReduce")))


def test_doubling_steps_doubles_time(net):
    a = paleo_time_to_target(net, 100, workers=[2], ps=[2], global_batch=128)
    b = paleo_time_to_target(net, 200, workers=[2], ps=[2], global_batch=128)
    assert b["time_s"].iloc[0] == pytest.approx(2 * a["time_s"].iloc[0])


def test_bad_input(net):
    with pytest.raises(InputError, match="steps_to_target must be a positive number"):
        paleo_time_to_target(net, 0, workers=[1], ps=[2], global_batch=128)
    with pytest.raises(InputError, match="workers must be integers >= 1"):
        paleo_time_to_target(net, 10, workers=[0], ps=[2], global_batch=128)


def test_net_for_a_run():
    assert paleo_net_for("resnet32", "mnist1d") == "torch:resnet32_1d"
    assert paleo_net_for("bert") == "torch:resnet50_cifar"


def test_paleo_draws_the_device_the_run_was_measured_on():
    from core.plan import paleo_device_for

    # a name that contains a Paleo device gets it (the longest match: K20X, not K20)
    assert paleo_device_for("Tesla K20X")[0] == "K20X"
    assert paleo_device_for("NVIDIA A100-SXM4-80GB") == ("A100", "the run's device, NVIDIA A100-SXM4-80GB")
    # a processor: Paleo's one CPU stands in, and says so
    for cpu in ("Intel Xeon Processor", "AMD EPYC 7B13", "CPU"):
        device, why = paleo_device_for(cpu)
        assert device == "CPU_I7" and cpu in why and "stands in" in why
    # unknown to Paleo: the fallback, with the reason; an AMD or Intel accelerator is no CPU
    assert paleo_device_for("MI355X") == ("V100", "MI355X is not among Paleo's devices: V100")
    for gpu in ("AMD Instinct MI300X", "Intel Gaudi 2", "Intel Data Center GPU Max 1550", "AMD Radeon RX 7900"):
        assert paleo_device_for(gpu)[0] == "V100"


# ---------------------------------------------------------------- calibrated on the measured step (issue 33, measure 4)
def _builtin_runs():
    from core.datasets import builtin_log_files
    from core.logs import read_log_file

    return [read_log_file(p, source=n) for n, p in builtin_log_files("mnist1d") if not n.endswith("_val.csv")]


@pytest.mark.parametrize("at", [(2, 1), (2, 4)])
def test_paleo_and_optimus_meet_at_the_measured_step_on_the_builtin_runs(at):
    """Both curves within 1 % of the run's measured step where it was measured (w = 1: the runs ran on one CPU;
    and the page's example point, p = 2, w = 4), Paleo calibrated by PPP, Optimus by scale_to_step_time."""
    from core.logs import parse_run_name
    from core.plan import paleo_device_for, plan_grid
    from core.speed import PAPER_GLOBAL_BATCH, paper_speed_model, scale_to_step_time

    p, w = at
    steps = 1000.0
    for log in _builtin_runs():
        measured = measured_step_time(log)    # the median wall-clock step
        name = parse_run_name(log.source)
        net = load_net(paleo_net_for(name.model, "mnist1d"))
        device = paleo_device_for(name.gpu)[0]
        optimus = plan_grid(scale_to_step_time(paper_speed_model("sync"), measured, p, w), steps,
                            workers=range(1, 9), ps=[p])
        paleo = paleo_time_to_target(net, steps, workers=range(1, 9), ps=[p], global_batch=PAPER_GLOBAL_BATCH,
                                     device=device, calibrate_to=(measured, p, w))
        at_w = (optimus[optimus["w"] == w]["time_s"].iloc[0] / steps, paleo[paleo["w"] == w]["time_s"].iloc[0] / steps)
        assert at_w == pytest.approx((measured, measured), rel=0.01), log.source
        uncalibrated = paleo_time_to_target(net, steps, workers=[w], ps=[p], global_batch=PAPER_GLOBAL_BATCH,
                                            device=device, ppp_comp=0.62, ppp_comm=0.72)
        assert uncalibrated["time_s"].iloc[0] / steps < 0.5 * measured, log.source   # what the headline drew


def test_calibrated_and_uncalibrated_labels_and_ppp(net):
    cal = paleo_time_to_target(net, 100, workers=[1, 2], ps=[2], global_batch=128, device="K80",
                               calibrate_to=(1.5, 2, 1))
    assert set(cal["label"]) == {"Paleo p = 2 (K80, ethernet; calibrated)"}
    assert cal[cal["w"] == 1]["step_ms"].iloc[0] == pytest.approx(1500.0)
    assert cal["ppp_comp"].nunique() == 1 and cal["ppp_comp"].iloc[0] != 1.0
    raw = paleo_time_to_target(net, 100, workers=[1, 2], ps=[2], global_batch=128, device="K80", ppp_comp=0.62)
    assert set(raw["ppp_comp"]) == {0.62}


def test_calibration_below_the_communication_is_refused(net):
    from core.plan.paleo_time import calibrate_paleo_step

    with pytest.raises(InputError, match="no compute PPP shortens"):
        calibrate_paleo_step(net, 0.5, p=2, w=4, global_batch=128, device="K80")
    with pytest.raises(InputError, match="step_s must be a positive number"):
        calibrate_paleo_step(net, 0.0, p=2, w=4, global_batch=128)
