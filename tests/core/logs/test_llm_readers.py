"""The language-model readers on real files (tests/data/llm: MLPerf v5.0/v5.1 LLM result files with their
system descriptions, a NanoGPT speedrun log) and on broken ones; the reader registry; the percent rule."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.errors import InputError, LogFormatError
from core.library.records import log_from_rows, run_row, series_frame
from core.library.sources import collect_sources
from core.logs import benchmark_rule, read_log, read_log_file
from core.logs.reader import reader_for
from core.targets import Target

LLM = Path(__file__).resolve().parents[2] / "data" / "llm"
LLAMA_8B = LLM / "mlperf_v5.1/llama31_8b/NVIDIA__tyche_ngpu512_ngc25.09_nemo/result_0.txt"
LLAMA_8B_AMD = LLM / "mlperf_v5.1/llama31_8b/AMD__MI355X_EPYC_9575F_pytorch/result_0.txt"
LORA = LLM / "mlperf_v5.0/llama2_70b_lora/Dell__16xXE9712x4GB200/result_0.txt"
LLAMA_405B = LLM / "mlperf_v5.0/llama31_405b/NVIDIA__eos-dfw_n64_ngc25.01_nemo/result_0.txt"
SPEEDRUN = next((LLM / "nanogpt_speedrun/track_1_short/2025-01-16_Sub3Min").glob("*.txt"))
ALL = [LLAMA_8B, LLAMA_8B_AMD, LORA, LLAMA_405B, SPEEDRUN]


def _events(path: Path) -> list[dict]:
    """The MLLOG events of a file, parsed here independently of the reader (for hand checks)."""
    out = []
    for line in path.read_text().splitlines():
        if ":::MLLOG" in line:
            out.append(json.loads(line.split(":::MLLOG", 1)[1]))
    return out


@pytest.mark.parametrize("name, direction, value", [
    ("llama31_8b", "<=", 3.3), ("llama31_405b", "<=", 5.6), ("llama2_70b_lora", "<=", 0.925),
    ("resnet", ">=", 0.759), ("bert", ">=", 0.72)])
def test_benchmark_direction_and_target_come_from_mlperf_logging(name, direction, value):
    assert benchmark_rule(name) == (direction, value)


def test_llama_8b_log_perplexity_is_a_loss_never_a_percentage():
    log = read_log_file(LLAMA_8B)
    events = _events(LLAMA_8B)
    evals = [e for e in events if e["key"] == "eval_accuracy"]
    start = next(e["time_ms"] for e in events if e["key"] == "run_start")
    stop = next(e["time_ms"] for e in events if e["key"] == "run_stop")
    assert log.fmt == "mllog" and log.source == "NVIDIA__tyche_ngpu512_ngc25.09_nemo/result_0.txt"
    assert log.frame["loss"].tolist() == [e["value"] for e in evals]           # 6.61 ... 3.29, not divided by 100
    assert log.frame["loss"].iloc[0] == pytest.approx(6.610082, abs=1e-6) and not log.has_acc
    assert not any("percent" in f for f in log.flags)
    assert log.target == Target("eval_accuracy", "<=", 3.3) and log.target.origin == "log"
    assert log.metrics["eval_accuracy"] == "loss" and log.metrics["loss"] == "loss"
    assert log.metric_series("eval_accuracy").tolist() == log.frame["loss"].tolist()
    hit = log.target.first_met(log.metric_series("eval_accuracy"))
    assert hit == len(evals) - 1 and log.frame["samples"].iloc[hit] == evals[-1]["metadata"]["samples_count"] == 221184
    assert log.frame["tokens"].iloc[hit] == 221184 * 8192
    assert log.frame["global_step"].iloc[hit] == 221184 / 64
    assert log.frame["time_s"].iloc[hit] == pytest.approx((evals[-1]["time_ms"] - start) / 1000)
    meta = log.meta
    assert meta.run_time_s == pytest.approx((stop - start) / 1000) and meta.seq_len == 8192
    assert (meta.n_nodes, meta.n_devices) == (128, 512)      # 128 nodes x 4 GPUs: from the system description
    assert meta.accelerator == "NVIDIA Blackwell GPU (GB200)" and meta.global_batch == 64
    assert (meta.warmup_steps, meta.decay_steps, meta.max_steps) == (64, 1199936, 1200000)
    assert meta.schedule.startswith("cosine:")
    # per-step figures (tracked_stats): train loss and step time; the frame keeps the last train loss before each eval
    assert log.steps is not None and {"train_loss", "step_time_s"} <= set(log.steps.columns)
    assert log.metrics["train_loss"] == "train_loss" and np.isfinite(log.frame["train_loss"]).all()


def test_lora_validation_loss_is_a_loss_reached_at_the_fifth_evaluation():
    log = read_log_file(LORA)
    evals = [e for e in _events(LORA) if e["key"] == "eval_accuracy"]
    assert log.frame["loss"].tolist() == [e["value"] for e in evals] and not log.has_acc
    assert log.target.spec == "eval_accuracy<=0.925"
    hit = log.target.first_met(log.metric_series("eval_accuracy"))
    # 0.9436, 0.9318, 0.9373, 0.9256, 0.9245: the first at or below 0.925 is the fifth, at 3,072 samples
    assert hit == 4 and log.frame["samples"].iloc[hit] == 3072 == evals[4]["metadata"]["samples_count"]
    assert (log.meta.n_nodes, log.meta.n_devices, log.meta.max_steps) == (16, 64, 800)
    assert np.isfinite(log.frame["lr"]).all()                 # from the train_loss events' metadata


def test_405b_target_comes_from_the_package_when_the_log_has_none():
    events = _events(LLAMA_405B)
    assert not any(e["key"] == "target_accuracy" for e in events)
    log = read_log_file(LLAMA_405B)
    assert log.target == Target("eval_accuracy", "<=", 5.6)
    assert log.frame["loss"].iloc[-1] == pytest.approx(5.585546, abs=1e-6)
    assert log.target.first_met(log.frame["loss"]) == len(log.frame) - 1
    assert (log.meta.n_nodes, log.meta.n_devices) == (64, 512) and log.meta.accelerator == "NVIDIA H100-SXM5-80GB"


def test_amd_run_without_a_platform_count_takes_nodes_from_the_system_description():
    log = read_log_file(LLAMA_8B_AMD)
    assert log.meta.gpu == "MI355X" and (log.meta.n_nodes, log.meta.n_devices) == (1, 8)
    assert log.meta.accelerator == "AMD Instinct MI355X"
    # the same bytes read without a path: no system description, no device count
    bare = read_log(LLAMA_8B_AMD.read_bytes(), "r.txt")
    assert bare.meta.n_devices is None and bare.meta.accelerator is None and bare.target == log.target


def test_speedrun_log_rows_per_step_val_loss_as_loss_and_tokens_from_the_script():
    log = read_log_file(SPEEDRUN)
    text = SPEEDRUN.read_text()
    assert log.fmt == "speedrun" and log.source == f"2025-01-16_Sub3Min/{SPEEDRUN.name}"
    last = [line for line in text.splitlines() if line.startswith("step:1393/1393 val_loss")][0]
    assert last == "step:1393/1393 val_loss:3.2785 train_time:179527ms step_avg:129.81ms"
    row = log.frame.set_index("global_step").loc[1393.0]
    assert row["loss"] == 3.2785 and row["time_s"] == pytest.approx(179.527)
    assert row["tokens"] == 1393 * 8 * 64 * 1024                # batch_size = 8*64*1024 # batch size in tokens
    assert log.frame["global_step"].tolist() == list(range(0, 1394))
    n_val = sum(1 for line in text.splitlines() if line.startswith("step:") and "val_loss" in line)
    assert log.frame["loss"].notna().sum() == n_val
    assert log.target == Target("val_loss", "<=", 3.28) and log.metrics["val_loss"] == "loss"
    assert log.target.first_met(log.frame["loss"]) == 1393      # 3.2785 at the last step only
    assert log.meta.n_devices == 8 and log.meta.gpu == "NVIDIA H100 80GB HBM3" and log.meta.max_steps == 1393
    assert log.meta.model == "2025-01-16_Sub3Min" and log.meta.run_time_s == pytest.approx(179.527)


def test_speedrun_track_2_targets_2_92(tmp_path):
    text = SPEEDRUN.read_bytes()
    path = tmp_path / "track_2_medium" / "2025-01-01_X" / "run.txt"
    path.parent.mkdir(parents=True)
    path.write_bytes(text)
    assert read_log_file(path).target.value == 2.92
    medium = text.replace(b"model_dim=768", b"model_dim=1024")
    assert medium != text and read_log(medium, "run.txt").target.value == 2.92


def _trainer_state(history, **top) -> bytes:
    return json.dumps({"best_model_checkpoint": None, "global_step": 30, "max_steps": 30, "num_train_epochs": 3,
                       "train_batch_size": 8, "log_history": history, **top}).encode()


HISTORY = [
    {"epoch": 0.5, "step": 5, "loss": 2.5, "learning_rate": 5e-5, "grad_norm": 3.0, "num_input_tokens_seen": 2560},
    {"epoch": 1.0, "step": 10, "loss": 2.0, "learning_rate": 4e-5, "num_input_tokens_seen": 5120},
    {"epoch": 1.0, "step": 10, "eval_loss": 2.2, "eval_accuracy": 61.0, "eval_runtime": 1.5},
    {"epoch": 2.0, "step": 20, "loss": 1.5, "learning_rate": 2e-5, "num_input_tokens_seen": 10240},
    {"epoch": 2.0, "step": 20, "eval_loss": 1.8, "eval_accuracy": 70.0, "eval_runtime": 1.5},
    {"epoch": 3.0, "step": 30, "train_runtime": 100.0, "train_loss": 2.0, "total_flos": 1e12},
]


def test_trainer_state_in_a_checkpoint_folder_reads_as_the_run(tmp_path):
    path = tmp_path / "checkpoint-30" / "trainer_state.json"
    path.parent.mkdir()
    path.write_bytes(_trainer_state(HISTORY))
    log = read_log_file(path)
    assert log.fmt == "hf-trainer" and log.source == "checkpoint-30/trainer_state.json"
    assert read_log_file(path.parent).fingerprint() == log.fingerprint()       # the folder itself
    frame = log.frame
    assert frame["global_step"].tolist() == [5.0, 10.0, 20.0]          # the summary record is left out
    assert frame["loss"].tolist() == [2.5, 2.0, 1.5] and frame["lr"].tolist() == [5e-5, 4e-5, 2e-5]
    assert frame["eval_loss"].tolist()[1:] == [2.2, 1.8] and np.isnan(frame["eval_loss"].iloc[0])
    assert frame["acc"].tolist()[1:] == [0.61, 0.70]                    # percent -> fraction, in acc only
    assert frame["eval_accuracy"].tolist()[1:] == [61.0, 70.0]
    assert frame["tokens"].tolist() == [2560.0, 5120.0, 10240.0] and frame["epoch"].tolist() == [1, 1, 2]
    assert log.steps_per_epoch == 10 and log.meta.max_steps == 30
    assert set(log.metrics) == {"loss", "acc", "eval_loss", "eval_accuracy"}
    assert log.metric_series("eval_loss").tolist()[1:] == [2.2, 1.8]
    with pytest.raises(InputError, match="eval_bleu"):
        log.metric_series("eval_bleu")


def test_a_folder_of_checkpoints_and_speedrun_logs_is_read_like_a_folder_of_csvs(tmp_path):
    for step in (10, 20, 30):
        folder = tmp_path / "hf" / f"checkpoint-{step}"
        folder.mkdir(parents=True)
        (folder / "trainer_state.json").write_bytes(_trainer_state([h for h in HISTORY if h["step"] <= step]))
    (tmp_path / "speed").mkdir()
    (tmp_path / "speed" / "run.txt").write_bytes(SPEEDRUN.read_bytes())
    (tmp_path / "speed" / "README.txt").write_text("a note, not a log\n")
    found = collect_sources([tmp_path])
    assert sorted(s.name for s in found.sources) == ["hf/checkpoint-30/trainer_state.json", "speed/run.txt"]
    llm = collect_sources([LLM])
    assert len(llm.sources) == 5 and not llm.errors


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.parent.name)
def test_every_llm_log_round_trips_through_the_library_records(path):
    log = read_log_file(path)
    back = log_from_rows(run_row(log, digest="x", dataset=None, n_params=None), series_frame(log))
    assert back.fingerprint() == log.fingerprint() and back.meta == log.meta and back.target == log.target
    assert list(back.frame.columns) == list(log.frame.columns) and back.metrics == log.metrics


def test_every_llm_log_round_trips_through_a_library_of_each_kind(db):
    """Each language-model log stored (DuckDB file, PostgreSQL database) and read back: the same run, its
    optional columns, per-step figures, target and metrics, and the same data hash (an export of it is it)."""
    from core.library import Library, data_hash

    lib = Library(db)
    for path in ALL:
        log = read_log_file(path)
        back = lib.get(lib.add(log, data=path.read_bytes()).run_id)
        assert back.fingerprint() == log.fingerprint() and back.meta == log.meta and back.target == log.target
        assert list(back.frame.columns) == list(log.frame.columns) and back.metrics == log.metrics
        assert data_hash(back) == data_hash(log)
        if log.steps is None:
            assert back.steps is None
        else:
            pd.testing.assert_frame_equal(back.steps, log.steps, check_exact=True)
    assert len(lib.runs()) == len(ALL)


# --------------------------------------------------------------------------- broken files
def test_a_truncated_mllog_line_is_named(tmp_path):
    lines = LLAMA_8B.read_bytes().split(b"\n")
    i = next(i for i, line in enumerate(lines) if b'"eval_accuracy"' in line)
    lines[i] = lines[i][:len(lines[i]) // 2]
    with pytest.raises(LogFormatError, match=rf"^r\.txt: line {i + 1}: expected one JSON object"):
        read_log(b"\n".join(lines), "r.txt")


def test_a_speedrun_log_with_no_step_lines_is_refused():
    text = SPEEDRUN.read_bytes()
    head = text[:text.index(b"\nstep:0/") + 1]
    with pytest.raises(LogFormatError, match=r"^run\.txt: expected NanoGPT speedrun lines"):
        read_log(head, "run.txt")
    only_train = b"\n".join(line for line in text.split(b"\n")
                            if b"val_loss" not in line or not line.startswith(b"step"))
    with pytest.raises(LogFormatError, match=r"^run\.txt: expected val_loss at some step"):
        read_log(only_train, "run.txt")


@pytest.mark.parametrize("data, problem", [
    (_trainer_state(None), "expected 'log_history' to be a list"),
    (json.dumps({"best_model_checkpoint": None, "global_step": 3}).encode(), "expected 'log_history' to be a list"),
    (_trainer_state(["loss 2.0"]), r"log_history\[0\]: expected a record"),
    (_trainer_state([{"step": "ten", "loss": 2.0}]), r"log_history\[0\]: expected 'step' as a number"),
    (_trainer_state([]), "expected records in log_history; got none"),
    (_trainer_state([{"step": 1, "grad_norm": 2.0}]), "expected a loss or eval_"),
    (_trainer_state(HISTORY)[:-40], "invalid JSON"),
])
def test_broken_trainer_states_are_refused_in_one_line(data, problem):
    with pytest.raises(LogFormatError, match=r"^trainer_state\.json: .*" + problem) as info:
        read_log(data, "trainer_state.json")
    assert "\n" not in str(info.value)


# --------------------------------------------------------------------------- the percent rule, the registry
def _mllog(benchmark: str, values: list[float], target: float | None = None) -> bytes:
    lines = [f'{{"key": "submission_benchmark", "value": "{benchmark}", "time_ms": 0}}',
             '{"key": "global_batch_size", "value": 10, "time_ms": 0}',
             '{"key": "train_samples", "value": 1000, "time_ms": 0}',
             '{"key": "run_start", "value": null, "time_ms": 0}']
    if target is not None:
        lines.append(f'{{"key": "target_accuracy", "value": {target}, "time_ms": 0}}')
    lines += [f'{{"key": "eval_accuracy", "value": {v}, "time_ms": {1000 * (i + 1)}, '
              f'"metadata": {{"samples_count": {100 * (i + 1)}}}}}' for i, v in enumerate(values)]
    return "".join(f":::MLLOG {line}\n" for line in lines).encode()


def test_the_percent_rule_divides_a_climbing_accuracy_only():
    climbing = read_log(_mllog("resnet", [40.0, 76.0]), "a.txt")
    assert climbing.frame["acc"].tolist() == [0.4, 0.76]
    assert "accuracy given in percent; divided by 100" in climbing.flags
    assert climbing.target == Target("acc", ">=", 0.759)   # the package's target, as a fraction, on the accuracy role
    falling = read_log(_mllog("llama31_8b", [5.6, 3.3]), "b.txt")
    assert falling.frame["loss"].tolist() == [5.6, 3.3] and not falling.has_acc
    # a benchmark the package does not know: a curve that starts above its target falls
    unknown = read_log(_mllog("new_llm", [7.0, 4.0, 2.9], target=3.0), "c.txt")
    assert unknown.frame["loss"].tolist() == [7.0, 4.0, 2.9] and unknown.target.spec == "eval_accuracy<=3"
    assert any("unknown to mlperf-logging" in f for f in unknown.flags)


def test_the_registry_picks_one_reader_per_format():
    assert [reader_for(p.read_bytes()).name for p in ALL] == ["mllog"] * 4 + ["speedrun"]
    assert reader_for(_trainer_state(HISTORY)).name == "hf-trainer"
    assert reader_for(b"epoch,step,loss,acc\n1,1,2.0,0.5\n").name == "csv"


def test_core_logs_has_no_import_cycle_and_one_mllog_marker():
    root = Path(__file__).resolve().parents[3] / "core" / "logs"
    graph = {}
    for path in root.glob("*.py"):
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):        # imports inside functions count too
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("core.logs."):
                deps.add(node.module.split(".")[2])
            elif isinstance(node, ast.ImportFrom) and node.module == "core.logs":
                deps.update(alias.name for alias in node.names)
        graph[path.stem] = deps & {p.stem for p in root.glob("*.py")}

    def reaches(start, goal, seen=()):
        return any(d == goal or (d not in seen and reaches(d, goal, (*seen, d))) for d in graph.get(start, ()))
    assert not [m for m in graph if m != "__init__" and reaches(m, m)]
    core = Path(__file__).resolve().parents[3] / "core"
    typed = [p for p in core.rglob("*.py") if 'b":::MLLOG"' in p.read_text()]
    assert [p.name for p in typed] == ["mllog_events.py"]
