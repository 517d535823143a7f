"""Measured scaling: table formats, speed-up, efficiency, the split, all-reduce bandwidth."""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pandas as pd
import pytest

from core.errors import InputError, LogFormatError
from core.scaling import allreduce_bytes, filter_rows, scaling_analysis
from core.scaling.allreduce import bandwidth_gb_per_s
from core.scaling.measured import RESULT_COLUMNS
from core.scaling.table import (
    POLLUX_DIR,
    TABLE_COLUMNS,
    parse_scaling_table,
    pollux_jobs,
    read_pollux_trace,
    read_scaling_table,
)
from tests.conftest import DATA, ROOT, TEST_DATA

POLLUX = DATA / "pollux_traces"   # unmodified copies of the Pollux traces (NOTICE.md there)
JOBS = ("bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3")

# 1 GPU at batch 128: 100 s an epoch. 2 GPUs at 64 each (same global batch 128: strong):
# 60 s. 2 GPUs at 128 each (same per-GPU batch: weak): 55 s. 4 GPUs at 32 each: 40 s.
EPOCHS = b"gpus,batch_per_gpu,epoch_time_s\n1,128,100\n2,64,60\n2,128,55\n4,32,40\n"


def analysis(csv: bytes = EPOCHS, **kw):
    n_samples = kw.pop("n_samples", None)
    return scaling_analysis(parse_scaling_table(csv, source="t.csv", n_samples=n_samples), **kw)


def row(result, scaling: str, gpus: int, batch_per_gpu: int) -> pd.Series:
    rows = result.rows
    hit = rows[(rows.scaling == scaling) & (rows.gpus == gpus)
               & (rows.batch_per_gpu == batch_per_gpu)]
    assert len(hit) == 1
    return hit.iloc[0]


# --------------------------------------------------------------------------- formulas

def test_allreduce_lower_bound_by_hand():
    # 2 * (4 - 1)/4 * 1e6 * 4 bytes = 6e6
    assert allreduce_bytes(1_000_000, 4) == 6e6
    # 2 * 1/2 * 1e6 * 2 bytes (float16) = 2e6
    assert allreduce_bytes(1_000_000, 2, itemsize=2) == 2e6
    # one process sends nothing
    assert allreduce_bytes(1_000_000, 1) == 0.0


def test_allreduce_bound_tends_to_twice_the_model():
    # 2 (N-1)/N -> 2 as N grows: 2 * 999/1000 * 10 * 4 = 79.92
    assert allreduce_bytes(10, 1000) == pytest.approx(79.92)


def test_bandwidth_uses_decimal_gigabytes():
    assert bandwidth_gb_per_s(6e6, 0.003) == 2.0           # 6e6 / 0.003 / 1e9
    assert math.isnan(bandwidth_gb_per_s(6e6, 0.0))


def test_strong_scaling_by_hand():
    r = row(analysis(), "strong", 2, 64)
    # speed-up 100 / 60 = 1.6667; efficiency 1.6667 / 2 = 0.8333
    assert r.speedup == pytest.approx(100 / 60) and r.efficiency == pytest.approx(100 / 120)
    # compute = T1 / N = 100 / 2 = 50 s; communication = 60 - 50 = 10 s (per epoch)
    assert r.compute_est_epoch_s == 50 and r.communication_est_epoch_s == 10
    assert (r.baseline_gpus, r.baseline_batch_per_gpu, r.basis) == (1, 128, "epoch")


def test_weak_scaling_by_hand():
    r = row(analysis(), "weak", 2, 128)
    # an epoch is the same data: speed-up 100 / 55 = 1.818; efficiency 0.909
    assert r.speedup == pytest.approx(100 / 55) and r.efficiency == pytest.approx(50 / 55)
    # each GPU does what the 1-GPU run does per step, over half the steps: 100 / 2 = 50 s
    assert r.compute_est_epoch_s == 50 and r.communication_est_epoch_s == 5


def test_strong_and_weak_detected_from_the_batches():
    r = analysis()
    # 2 x 64 and 4 x 32 share the global batch 128 of the 1-GPU row; 2 x 128 shares its
    # per-GPU batch; 4 x 32 has no 1-GPU row at 32 per GPU, so no weak comparison
    assert sorted(zip(r.rows.scaling, r.rows.gpus, r.rows.batch_per_gpu)) == [
        ("strong", 2, 64), ("strong", 4, 32), ("weak", 2, 128)]
    assert (r.n_strong, r.n_weak) == (2, 1)
    assert r.notes[0].startswith("Strong scaling (same global batch): 2 comparisons")


def test_only_weak_scaling_when_every_row_has_the_same_per_gpu_batch():
    r = analysis(b"gpus,batch_per_gpu,step_time_s\n1,64,0.1\n2,64,0.12\n4,64,0.15\n")
    assert set(r.rows.scaling) == {"weak"}
    assert any(n.startswith("No strong-scaling comparison") for n in r.notes)
    # step times: throughput ratio (4*64/0.15) / (64/0.1) = 4 * 0.1/0.15 = 2.6667
    assert row(r, "weak", 4, 64).speedup == pytest.approx(4 * 0.1 / 0.15)
    # weak compute per step = T1 = 0.1 s; communication 0.15 - 0.1 = 0.05 s
    assert row(r, "weak", 4, 64).communication_est_s == pytest.approx(0.05)


def test_step_times_with_dataset_size_give_epochs_and_bandwidth():
    csv = b"gpus,batch_per_gpu,step_time_s\n1,128,0.2\n4,32,0.08\n"
    r = analysis(csv, n_samples=1280, n_params=1_000_000, link_gbps=10)
    s = row(r, "strong", 4, 32)
    # compute per step 0.2 / 4 = 0.05 s; communication 0.08 - 0.05 = 0.03 s
    assert s.compute_est_s == pytest.approx(0.05) and s.communication_est_s == pytest.approx(0.03)
    # steps per epoch ceil(1280 / 128) = 10: epoch 0.8 s, communication 0.3 s an epoch
    assert (s.steps_per_epoch, s.epoch_time_s) == (10, pytest.approx(0.8))
    # bytes 2 * 3/4 * 1e6 * 4 = 6e6 per step, 6e7 per epoch; 6e6 / 0.03 s = 0.2 GB/s
    assert (s.allreduce_bytes_per_step, s.allreduce_bytes_per_epoch) == (6e6, 6e7)
    assert s.achieved_GB_per_s == pytest.approx(0.2)
    # nominal 10 Gbit/s = 1.25 GB/s; 0.2 / 1.25 = 16 % used
    assert s.link_GB_per_s == 1.25 and s.link_utilisation == pytest.approx(0.16)


def test_slower_than_one_machine_is_reported_not_refused():
    # 4 GPUs share the 1-GPU batch but take 500 s against 100 s
    r = analysis(b"gpus,batch_per_gpu,epoch_time_s\n1,128,100\n4,32,500\n",
                 n_samples=12_800, n_params=10_000_000, link_gbps=10)
    s = row(r, "strong", 4, 32)
    # speed-up 100/500 = 0.2; efficiency 0.2 / 4 = 0.05, well under 1/N = 0.25
    assert s.speedup == pytest.approx(0.2) and s.efficiency == pytest.approx(0.05)
    # compute 100/4 = 25 s, communication 475 s an epoch (100 steps of 4.75 s)
    assert s.communication_est_epoch_s == pytest.approx(475)
    # bytes 2 * 3/4 * 1e7 * 4 = 6e7 per step / 4.75 s = 0.01263 GB/s
    assert s.achieved_GB_per_s == pytest.approx(6e7 / 4.75 / 1e9)
    assert "slower than the 1-GPU baseline" in s["flags"]
    assert any("slower than the baseline" in n for n in r.notes)


def test_super_linear_speedup_leaves_no_time_for_communication():
    r = analysis(b"gpus,batch_per_gpu,step_time_s\n1,128,1.0\n2,64,0.4\n", n_params=1000)
    s = row(r, "strong", 2, 64)
    # compute 1.0 / 2 = 0.5 s > 0.4 s measured: communication -0.1 s
    assert s.communication_est_s == pytest.approx(-0.1)
    assert math.isnan(s.achieved_GB_per_s) and "super-linear" in s["flags"]


def test_baseline_above_one_gpu_is_said():
    r = analysis(b"gpus,batch_per_gpu,step_time_s\n2,64,0.1\n4,64,0.12\n")
    s = row(r, "weak", 4, 64)
    # ideal 4/2 = 2; speed-up (256/0.12)/(128/0.1) = 1.6667; efficiency 0.8333
    assert (r.baseline_gpus, s.ideal_speedup) == (2, 2.0)
    assert s.speedup == pytest.approx(2 * 0.1 / 0.12)
    assert any("No 1-GPU row: speed-ups are relative to 2 GPUs" in n for n in r.notes)


def test_seconds_or_minutes_only_rescale():
    seconds = b"gpus,batch_per_gpu,epoch_time_s\n1,128,360\n2,64,216\n2,128,198\n4,32,144\n"
    a, b = analysis(), analysis(seconds)               # every time x 3.6
    assert np.allclose(a.rows.speedup, b.rows.speedup)
    assert np.allclose(a.rows.communication_est_epoch_s * 3.6, b.rows.communication_est_epoch_s)


def test_shuffled_rows_give_the_same_comparisons():
    lines = EPOCHS.splitlines()
    shuffled = b"\n".join([lines[0]] + lines[:0:-1]) + b"\n"
    key = ["scaling", "gpus", "batch_per_gpu"]
    a = analysis().rows.sort_values(key).reset_index(drop=True)
    b = analysis(shuffled).rows.sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)


def test_without_parameter_count_the_bandwidth_is_nan_and_said():
    r = analysis()
    assert r.rows.allreduce_bytes_per_step.isna().all()
    assert any("parameter count" in n for n in r.notes)
    assert list(r.rows.columns) == list(RESULT_COLUMNS)


def test_to_dict_is_plain_json():
    d = analysis(n_params=1000).to_dict()
    back = json.loads(json.dumps(d))
    assert back["baseline_gpus"] == 1 and len(back["rows"]) == 3


def test_filter_rows():
    r = analysis()
    assert filter_rows(r, scaling="strong").rows.gpus.tolist() == [2, 4]
    assert filter_rows(r, batch_per_gpu=128).rows.scaling.tolist() == ["weak"]
    with pytest.raises(InputError, match="scaling: expected one of strong, weak; got"):
        filter_rows(r, scaling="both")


def test_nothing_to_compare_is_refused():
    with pytest.raises(InputError, match=r"two or more GPU counts .* got GPU counts \[1, 2\] "
                                         r"with per-GPU batches \[64, 100\]"):
        analysis(b"gpus,batch_per_gpu,step_time_s\n1,100,0.1\n2,64,0.12\n")


# --------------------------------------------------------------------------- table formats

def test_generic_header_with_spaces_and_aliases():
    t = parse_scaling_table(b"GPUs, batch_per_gpu, step_time, nodes\n1, 32, 0.5, 1\n"
                            b"8, 32, 0.7, 2\n", source="s.csv")
    assert list(t.columns) == list(TABLE_COLUMNS)
    assert t.config.tolist() == ["1 GPU on 1 node", "8 GPUs on 2 nodes"]
    assert t.measured.unique().tolist() == ["step"] and t.global_batch.tolist() == [32, 256]


def test_epoch_times_convert_to_step_times_with_the_dataset_size():
    t = parse_scaling_table(EPOCHS, n_samples=1000)
    # global batch 128: ceil(1000/128) = 8 steps; 100 s / 8 = 12.5 s a step
    assert t.steps_per_epoch.tolist()[:2] == [8, 8] and t.step_time_s.iloc[0] == 12.5


def test_an_edited_frame_is_accepted():
    frame = pd.DataFrame({"gpus": [1, 2], "batch_per_gpu": [64, 32], "step_time_s": [1.0, 0.6]})
    r = scaling_analysis(parse_scaling_table(frame))
    assert row(r, "strong", 2, 32).speedup == pytest.approx(1 / 0.6)


def test_an_edited_frame_drops_its_blank_last_rows_only():
    blank = {"gpus": None, "batch_per_gpu": None, "step_time_s": None}
    frame = pd.DataFrame([{"gpus": 1, "batch_per_gpu": 64, "step_time_s": 1.0}, blank,
                          {"gpus": 2, "batch_per_gpu": 32, "step_time_s": 0.6}, blank, blank])
    with pytest.raises(LogFormatError, match=r"edited: expected gpus .* got nan in data row 2"):
        parse_scaling_table(frame, source="edited")            # a gap in the middle is named
    table = parse_scaling_table(frame.drop(index=1), source="edited")
    assert table.gpus.tolist() == [1, 2]                       # the two blank last rows dropped
    with pytest.raises(LogFormatError, match="edited: expected at least one row"):
        parse_scaling_table(pd.DataFrame([blank]), source="edited")


@pytest.mark.parametrize("csv, message", [
    (b"gpu,batch,time\n1,2,3\n", r"t\.csv: expected columns gpus, batch_per_gpu and "
                                 r"epoch_time_s or step_time_s .* got gpu, batch, time"),
    (b"gpus,batch_per_gpu,epoch_time_s\n1,128,100\n2,64,fast\n",
     r"t\.csv: expected epoch_time_s to be a number > 0 in every row; got 'fast' in data row 2"),
    (b"gpus,batch_per_gpu,epoch_time_s\n1.5,128,100\n",
     r"expected gpus to be a whole number >= 1 .* got 1\.5 in data row 1"),
    (b"gpus,batch_per_gpu,epoch_time_s\n1,128,0\n", r"epoch_time_s to be a number > 0"),
    (b"gpus,batch_per_gpu,epoch_time_s\n1,128,100\n1,128,101\n",
     r"expected one row per configuration; got data rows 1 and 2 for 1 GPU at "
     r"batch_per_gpu 128"),
    (b"gpus,batch_per_gpu,epoch_time_s\n", r"expected at least one row of measurements"),
    (b"gpus,batch_per_gpu,nodes,epoch_time_s\n2,64,3,10\n", r"expected nodes <= gpus"),
    (b"placement,local_bsz,step_time,sync_time\n1x2,32,0.1,0.01\n",
     r"expected placement digits .* got '1x2' in data row 1"),
    (b"", r"t\.csv: the file is empty"),
])
def test_bad_tables_name_the_file_and_the_problem(csv, message):
    with pytest.raises(LogFormatError, match=message) as info:
        parse_scaling_table(csv, source="t.csv")
    assert info.value.source == "t.csv"


def test_missing_file_is_a_log_format_error(tmp_path):
    with pytest.raises(LogFormatError, match="nope.csv: cannot be read: No such file or directory"):
        read_scaling_table(tmp_path / "nope.csv")


def test_data_of_the_wrong_kind():
    with pytest.raises(InputError, match="data: expected CSV bytes or a pandas DataFrame"):
        parse_scaling_table("gpus,batch_per_gpu\n")


# --------------------------------------------------------------------------- Pollux traces

@pytest.mark.parametrize("job", JOBS)
def test_pollux_traces_parse(job):
    folder = POLLUX / job
    t = read_pollux_trace(folder)
    placements = pd.read_csv(folder / "placements.csv", dtype={"placement": str})
    scalability = pd.read_csv(folder / "scalability.csv")
    assert len(t) == len(placements) + len(scalability)
    from_placements = t[t.source == "placements.csv"]
    # placement digits: GPUs per node, e.g. "1122" -> 6 GPUs on 4 nodes
    expected_gpus = placements.placement.map(lambda p: sum(int(c) for c in p))
    assert from_placements.gpus.tolist() == expected_gpus.astype(float).tolist()
    assert from_placements.nodes.tolist() == placements.placement.str.len().astype(float).tolist()
    from_scal = t[t.source == "scalability.csv"]
    assert from_scal.gpus.tolist() == scalability.num_replicas.astype(float).tolist()
    assert np.allclose(from_scal.step_time_s, scalability.step_time)
    assert t.gpus.min() == 1                          # placements.csv holds the 1-GPU rows


@pytest.mark.slow
def test_pollux_cifar10_strong_scaling_slower_than_one_gpu():
    folder = POLLUX / "cifar10"
    p = pd.read_csv(folder / "placements.csv", dtype={"placement": str})
    t1 = p[(p.placement == "1") & (p.local_bsz == 64)].step_time.item()
    t2 = p[(p.placement == "11") & (p.local_bsz == 32)].step_time.item()
    r = scaling_analysis(read_pollux_trace(folder), n_params=11_173_962)
    rows = r.rows
    s = rows[(rows.scaling == "strong") & (rows.placement == "11")
             & (rows.batch_per_gpu == 32)].iloc[0]
    # same global batch 64 on 2 GPUs on 2 nodes: speed-up t1/t2 = 0.0598/0.1038 = 0.58 < 1
    assert s.speedup == pytest.approx(t1 / t2) and s.speedup < 1
    assert s.efficiency < 0.5 and "slower" in s["flags"]
    # CIFAR-10: 50,000 samples / 64 = 782 steps an epoch
    assert s.steps_per_epoch == 782


@pytest.mark.slow
def test_pollux_strong_comparisons_match_an_independent_merge():
    folder = POLLUX / "cifar10"
    p = pd.read_csv(folder / "placements.csv", dtype={"placement": str})
    s = pd.read_csv(folder / "scalability.csv")
    p["gpus"] = p.placement.map(lambda x: sum(map(int, x)))
    both = pd.concat([p[["gpus", "local_bsz"]],
                      s.rename(columns={"num_replicas": "gpus"})[["gpus", "local_bsz"]]])
    both["global"] = both.gpus * both.local_bsz
    one_gpu = set(p.loc[p.gpus == 1, "local_bsz"])
    expected_strong = int(((both.gpus > 1) & both["global"].isin(one_gpu)).sum())
    expected_weak = int(((both.gpus > 1) & both.local_bsz.isin(one_gpu)).sum())
    r = scaling_analysis(read_pollux_trace(folder))
    assert (r.n_strong, r.n_weak) == (expected_strong, expected_weak)


@pytest.mark.slow
def test_pollux_sync_time_gives_a_second_bandwidth():
    r = scaling_analysis(read_pollux_trace(POLLUX / "imagenet"), n_params=25_557_032)
    s = r.rows.iloc[0]
    assert s.achieved_GB_per_s_sync == pytest.approx(
        allreduce_bytes(25_557_032, int(s.gpus)) / s.sync_time_s / 1e9)


def test_product_copy_of_the_traces_is_the_original_byte_for_byte():
    # SHA-256 of each original file, recorded when the copy was made (tests/data/NOTICE.md)
    sums = pd.read_csv(TEST_DATA / "reference_sha256.csv")
    sums = sums[sums.reference_path.str.startswith("pollux_traces/")]
    assert len(sums) == 52 and set(sums.reference_path.str.split("/").str[1]) == set(JOBS)
    for rec in sums.itertuples():
        assert rec.sha256_in_repository == rec.sha256_original            # an unmodified copy
        assert hashlib.sha256((ROOT / rec.repository_path).read_bytes()).hexdigest() == rec.sha256_original


def test_single_node_rows_are_told_the_network_link_does_not_apply():
    csv = b"gpus,nodes,batch_per_gpu,step_time_s\n1,1,128,0.2\n4,1,32,0.08\n4,2,32,0.09\n"
    r = analysis(csv, n_params=1_000_000, link_gbps=10)
    one, two = r.rows.sort_values("nodes")["flags"].tolist()
    assert "all GPUs on one node" in one and "all GPUs on one node" not in two


def test_bandwidth_above_the_nominal_link_is_flagged():
    # 6e6 bytes in 0.08 - 0.05 = 0.03 s = 0.2 GB/s against a 1 Gbit/s = 0.125 GB/s link
    r = analysis(b"gpus,batch_per_gpu,step_time_s\n1,128,0.2\n4,32,0.08\n",
                 n_params=1_000_000, link_gbps=1)
    s = row(r, "strong", 4, 32)
    assert s.link_utilisation == pytest.approx(1.6) and "above the nominal link" in s["flags"]


def test_pollux_jobs_lists_the_product_copy(tmp_path):
    assert pollux_jobs() == JOBS and POLLUX_DIR == ROOT / "data" / "pollux_traces"
    (tmp_path / "empty").mkdir()
    assert pollux_jobs(tmp_path) == () and pollux_jobs(tmp_path / "missing") == ()


# Two GPUs on one node (50 s an epoch) and on two nodes (80 s), 4 GPUs on 2 nodes (30 s),
# all at 128 per GPU against 1 GPU at 128 (100 s): weak scaling only.
PLACEMENTS = (b"gpus,nodes,batch_per_gpu,epoch_time_s\n1,1,128,100\n2,1,128,50\n2,2,128,80\n"
              b"4,2,128,30\n")


def test_fastest_only_keeps_the_best_placement_per_gpu_count():
    r = analysis(PLACEMENTS)
    assert r.rows.config.tolist() == ["2 GPUs on 1 node", "2 GPUs on 2 nodes", "4 GPUs on 2 nodes"]
    fast = filter_rows(r, fastest_only=True).rows
    # 2 GPUs: 100/50 = 2 beats 100/80 = 1.25; 4 GPUs: one placement, 100/30
    assert fast.config.tolist() == ["2 GPUs on 1 node", "4 GPUs on 2 nodes"]
    assert fast.speedup.tolist() == pytest.approx([2.0, 100 / 30])
    # the other filters apply first: without single-node rows the 2-node placement is best
    assert filter_rows(r, max_nodes=1, fastest_only=True).rows.config.tolist() == ["2 GPUs on 1 node"]
    assert filter_rows(filter_rows(r, scaling="weak"), fastest_only=True).rows.equals(fast)


def test_fastest_only_keeps_strong_and_weak_apart():
    r = analysis()                         # 2 GPUs at 64 (strong) and at 128 (weak)
    fast = filter_rows(r, fastest_only=True).rows
    assert list(zip(fast.scaling, fast.gpus, fast.batch_per_gpu)) == [
        ("strong", 2, 64), ("weak", 2, 128), ("strong", 4, 32)]


def test_link_presets_state_their_rate_in_the_name():
    from core.scaling import LINK_PRESETS_GBPS

    for name, gbps in LINK_PRESETS_GBPS.items():
        assert f"{gbps:g}" in name and gbps > 0
    assert LINK_PRESETS_GBPS["25 GbE"] / 8 == 3.125          # GB/s shown beside the achieved rate


def test_the_default_parameter_count_is_the_default_model_s():
    """The Scaling page opens on ResNet-18 for CIFAR-10: its count is the model's, not typed."""
    from core.models import parameter_count
    from core.scaling import DEFAULT_PARAMS
    from core.scaling.allreduce import DEFAULT_MODEL

    assert parameter_count(DEFAULT_MODEL) == DEFAULT_PARAMS == 11_173_962
