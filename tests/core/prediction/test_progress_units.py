"""Progress is one quantity in several units (issue 34): each run's factors, conversions, and a prior that pools
runs counted in tokens, samples and steps in the predicted run's own unit, naming each run it leaves out."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import InputError
from core.logs import read_log, read_log_file
from core.prediction.progress import predict_progress
from core.prediction.progress_estimates import prior_progress
from core.prediction.progress_measure import progress_to_target
from core.prediction.progress_units import UNITS, ProgressUnits, pooled_value, progress_units
from core.targets import Target
from tests.conftest import ROOT

#: the speedrun scripts' three ways of saying the batch (core/logs/speedrun.py): sequences × length, tokens, none
SAMPLES_8x128 = ("    batch_size : int = 8 # batch size, in sequences, across all devices\n"
                 "    sequence_length : int = 128 # sequence length, in tokens\n")


def tokens_header(per_step: int) -> str:
    return f"    batch_size = {per_step} # batch size in tokens\n"


def speedrun(name: str, header: str, reach: int | None, *, total: int = 400, ms_per_step: float = 100.0):
    """A speedrun log evaluated every 10 steps whose val_loss falls 0.01 an evaluation and is exactly 3.28 (the
    track's target) at step ``reach`` (None: it stops above it)."""
    end = reach if reach is not None else total + 1000
    lines = [f"step:{k}/{total} val_loss:{3.28 + 0.001 * (end - k):.4f} train_time:{k * ms_per_step:.0f}ms "
             f"step_avg:{ms_per_step:.2f}ms\n" for k in range(10, total + 1, 10)]
    return read_log((header + "".join(lines)).encode(), name)


def test_a_runs_factors_convert_between_every_unit_on_hand_values():
    # 8 sequences of 128 tokens a step, 100 ms a step, 50 steps an epoch
    u = ProgressUnits("a.txt", "samples", samples_per_step=8, tokens_per_step=1024, steps_per_epoch=50,
                      seconds_per_step=0.1)
    # 4,000 samples = 500 steps = 512,000 tokens = 10 epochs = 50 s
    assert u.in_all_units(4000) == pytest.approx({"steps": 500, "epochs": 10, "samples": 4000, "tokens": 512_000,
                                                  "time_s": 50})
    assert u.tokens_per_sample == 128


def test_a_conversion_without_its_factor_names_the_factor_and_the_run():
    u = ProgressUnits("rec/soap.txt", "steps")
    with pytest.raises(InputError, match=r"rec/soap\.txt: cannot convert steps to tokens: its tokens per step is "
                                         r"unknown"):
        u.convert(100, "steps", "tokens")
    val = ProgressUnits("resnet8_V100-512_val.csv", "epochs", steps_known=False)
    assert val.in_all_units(3) == {"epochs": 3.0}
    assert val.missing("steps") == "its steps count validation batches, not training steps"


@given(st.sampled_from(UNITS), st.sampled_from(UNITS), st.floats(1e-3, 1e9),
       st.tuples(*[st.floats(1e-3, 1e6)] * 4))
def test_converting_there_and_back_gives_the_value_again(a, b, value, factors):
    samples, tokens, spe, seconds = factors
    u = ProgressUnits("x", "steps", samples_per_step=samples, tokens_per_step=tokens, steps_per_epoch=spe,
                      seconds_per_step=seconds)
    assert u.convert(u.convert(value, a, b), b, a) == pytest.approx(value, rel=1e-9)


def test_the_speedrun_logs_say_their_factors_from_the_script_and_the_logged_times():
    samples = progress_units(speedrun("r/a.txt", SAMPLES_8x128, 200), "samples")
    assert (samples.samples_per_step, samples.tokens_per_step) == (8.0, 1024.0)
    assert samples.seconds_per_step == pytest.approx(0.1)                  # 100 ms a step in train_time
    tokens = progress_units(speedrun("r/b.txt", tokens_header(2048), 200), "tokens")
    assert (tokens.samples_per_step, tokens.tokens_per_step) == (None, 2048.0)
    steps = progress_units(speedrun("r/c.txt", "", 200), "steps")
    assert steps.missing("tokens") == "its tokens per step is unknown"


def test_a_built_in_speedrun_log_knows_its_tokens_per_step():
    # the 2025-09-29 record declares "train_batch_size: int = 2048 * 24 * 8" (tokens a step): 393,216
    path = ROOT / "data/llm/nanogpt_speedrun/track_1_short/2025-09-29_PolarExpress"
    log = read_log_file(path / "0e3f0af5-ad08-47a6-813d-0c709b50d422.txt", source="a.txt")
    u = progress_units(log, "tokens")
    assert u.tokens_per_step == 2048 * 24 * 8
    assert u.samples_per_step is None and u.seconds_per_step > 0


def others_in_three_units():
    """Three runs that reached val_loss<=3.28, counted in tokens (two) and samples (one), one counted in steps
    whose tokens per step are unknown, one that never got there."""
    return [speedrun("rec_a/a.txt", tokens_header(2048), 60),       # 60 × 2,048 = 122,880 tokens
            speedrun("rec_b/b.txt", tokens_header(512), 250),       # 250 × 512 = 128,000 tokens
            speedrun("rec_c/c.txt", SAMPLES_8x128, 130),            # 130 × 8 = 1,040 samples of 128 tokens
            speedrun("rec_d/soap.txt", "", 100),                    # steps only
            speedrun("rec_e/e.txt", tokens_header(2048), None)]     # above 3.28 to the end


def test_the_prior_pools_runs_in_tokens_samples_and_steps_in_the_runs_own_unit():
    others = others_in_three_units()
    target = others[0].target
    assert [progress_to_target(o, target) for o in others] == [122_880, 128_000, 1040, 100, None]
    # the run counts samples of 128 tokens (8 a step): 122,880 / 128 = 960, 128,000 / 128 = 1,000, and 1,040
    new = speedrun("rec_new/new.txt", SAMPLES_8x128, 150)
    p = prior_progress(new, others, target)
    assert p.unit == "samples" and p.value == pytest.approx(1000.0, rel=1e-12)
    assert "median of 3 other runs" in p.description and "2 converted into samples" in p.description
    assert p.left_out == (("rec_d/soap.txt", "counts steps and its tokens per step is unknown"),
                          ("rec_e/e.txt", "did not reach val_loss<=3.28"))
    # the same runs pooled for a run counted in tokens (1,024 a step): 122,880, 128,000 and 1,040 × 128 = 133,120
    p = prior_progress(speedrun("rec_new/t.txt", tokens_header(1024), 150), others, target)
    assert (p.unit, p.value) == ("tokens", pytest.approx(128_000.0, rel=1e-12))


def test_a_run_counted_in_steps_pools_only_runs_counted_in_steps():
    others = others_in_three_units()
    p = prior_progress(speedrun("rec_new/steps.txt", "", 150), others, others[0].target)
    assert (p.unit, p.value) == ("steps", 100.0)                # soap.txt alone: its steps are this run's steps
    assert ("rec_a/a.txt", "counts tokens; this run's tokens per step is unknown") in p.left_out


def test_when_every_run_is_dropped_for_its_unit_the_message_says_so_not_that_none_reached_the_target():
    others = [speedrun(f"rec_{i}/s{i}.txt", "", 100 + 10 * i) for i in range(3)]      # all reached, in steps
    p = prior_progress(speedrun("rec_new/new.txt", SAMPLES_8x128, 150), others, others[0].target)
    assert not p.available
    assert p.description == ("no other run to pool in samples: 3 cannot be converted (rec_0/s0.txt: counts steps "
                             "and its tokens per step is unknown, ...)")
    assert "reached" not in p.description and len(p.left_out) == 3


def test_the_message_counts_each_reason_a_run_was_left_out():
    others = [speedrun("rec_a/s.txt", "", 100), speedrun("rec_b/e.txt", tokens_header(2048), None),
              speedrun("rec_c/f.txt", tokens_header(2048), None)]
    p = prior_progress(speedrun("rec_new/new.txt", SAMPLES_8x128, 150), others, others[0].target)
    assert p.description == ("no other run to pool in samples: 1 cannot be converted (rec_a/s.txt: counts steps and "
                             "its tokens per step is unknown); 2 did not reach the target")


def test_a_forecast_of_a_run_in_samples_uses_the_runs_in_tokens_as_its_prior():
    """Issue 34: a record counted in samples, predicted with records counted in tokens as its prior, got no prior
    ("no other run that reached the target"); now all of them are pooled, converted into its samples."""
    others = [speedrun(f"rec_{i}/t{i}.txt", tokens_header(2048), 200 + 10 * i) for i in range(4)]
    new = speedrun("rec_new/new.txt", SAMPLES_8x128, 300)
    f = predict_progress(new, others, observe=0.25)
    # 200..230 steps × 2,048 tokens / 128 tokens a sample = 3,200..3,680 samples: the median 3,440
    assert f.prior.available and f.prior.value == pytest.approx(math.sqrt(3360 * 3520), rel=1e-12)
    assert f.prior.left_out == () and "4 converted into samples" in f.prior.description


def test_pooling_runs_with_the_same_factors_is_exact():
    mine = ProgressUnits("a", "samples", samples_per_step=512, tokens_per_step=512 * 1024)
    other = ProgressUnits("b", "samples", samples_per_step=512, tokens_per_step=512 * 1024)
    assert pooled_value(0.1 + 0.2, other, mine) == (0.1 + 0.2, "tokens")      # no round trip through tokens


def test_a_validation_log_is_never_pooled_with_a_training_log():
    # a course _val log counts epochs (its steps number validation batches); the training log counts samples
    rows = "".join(f"{e},{s},{2 / e:.4f},{0.5 + 0.04 * e:.4f}\n" for e in range(1, 13) for s in range(1, 11))
    train = read_log(("epoch,step,loss,acc\n" + rows).encode(), "resnet8_V100-512.csv")
    val = read_log(("epoch,step,loss,acc\n" + rows).encode(), "resnet8_V100-512_val.csv")
    p = prior_progress(val, [train], Target("acc", ">=", 0.85))
    assert p.left_out == (("resnet8_V100-512.csv", "counts samples; this run's steps count validation batches, "
                                                   "not training steps"),)


def test_the_runs_at_this_runs_batch_are_pooled_alone_when_two_or_more_are():
    # this run: 8 sequences of 128 tokens a step. Two others at the same batch reach at steps 100 and 120 (800 and
    # 960 samples); one at 16 sequences of 64 tokens (the same 1,024 tokens a step, another batch) and one counted
    # in tokens (its samples a step unknown) are pooled only when fewer than two runs are at this run's batch
    shape_16x64 = SAMPLES_8x128.replace("= 8 #", "= 16 #").replace("= 128 #", "= 64 #")
    others = [speedrun("rec_a/a.txt", SAMPLES_8x128, 100), speedrun("rec_b/b.txt", SAMPLES_8x128, 120),
              speedrun("rec_c/c.txt", shape_16x64, 60), speedrun("rec_d/d.txt", tokens_header(1024), 300)]
    new = speedrun("rec_new/new.txt", SAMPLES_8x128, 150)
    p = prior_progress(new, others, others[0].target)
    assert p.value == pytest.approx(math.sqrt(800 * 960), rel=1e-12)
    assert p.description == "median of 2 other runs at global batch 8 (1,024 tokens a step)"
    # without the second run at this batch all three others are pooled: 800 samples; 60 × 1,024 / 128 = 480;
    # 300 × 1,024 / 128 = 2,400: the median 800
    p = prior_progress(new, [others[0], *others[2:]], others[0].target)
    assert p.value == 800.0
    assert p.description == ("median of 3 other runs (fewer than two at this run's batch) (2 converted into "
                             "samples)")


def test_a_batch_that_grows_over_the_run_gives_no_single_factor_and_says_so():
    from dataclasses import replace

    log = read_log(b"step,loss\n1,3.0\n2,2.8\n3,2.6\n4,2.5\n", "ramp.csv")
    # 1,000 tokens a step for two steps, then 2,000: 1,000 / 1,000 / 1,333 / 1,500 tokens a step on average
    ramp = replace(log, frame=log.frame.assign(tokens=[1000.0, 2000.0, 4000.0, 6000.0]))
    u = progress_units(ramp, "tokens")
    assert u.tokens_per_step is None
    assert u.missing("steps") == "its tokens per step vary over the log (1,000 to 1,500): no single tokens per step"
