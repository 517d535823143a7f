"""Language-model step time: calibrate on one measured run, predict others (issue 19), measured vs predicted.

Reads the MLPerf Training v5.0/v5.1 LLM logs and the NanoGPT speedrun logs in ../shared/reference
(a minimal MLLOG reader here; the product's readers are core.logs).  Prints, for each pair, the
measured and predicted step time and their ratio, and for the cross-device pairs the ratio of the
datasheet peaks beside the model's.

Step time of an MLLOG run: the median of ``tracked_stats.train_step_time`` where the log has it,
else (run_stop − run_start − evaluation time) / steps, steps = samples at run_stop / global batch.

    python bench/transformer.py
"""

from __future__ import annotations

import glob
import json
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.reference import SHARED, require_shared  # noqa: E402
from core.logs import read_log_file  # noqa: E402
from core.plan import measured_configurations, samples_at_batch  # noqa: E402
from core.transformer.calibrate import Measurement, calibrate, predict  # noqa: E402
from core.transformer.config import load_config  # noqa: E402
from core.transformer.devices import get_accelerator, system_from_json  # noqa: E402
from core.transformer.parallel import Efficiency, Latency  # noqa: E402
from core.transformer.strategy import parse_strategy  # noqa: E402

REF = SHARED
#: the model before the collective-latency term (Latency.zero()) and after (NCCL's ring latencies)
BEFORE, AFTER = Latency.zero(), Latency()
LLM = REF / "mlperf_v5_llm"


def read_mllog(path: Path) -> dict:
    ev: dict = {"steps_t": [], "evals": []}
    eval_open = None
    for line in path.read_text(errors="replace").splitlines():
        if ":::MLLOG" not in line:
            continue
        try:
            e = json.loads(line.split(":::MLLOG", 1)[1])
        except json.JSONDecodeError:
            continue
        k, t = e.get("key"), e.get("time_ms")
        if k == "tracked_stats":
            v = e.get("value") or {}
            if "train_step_time" in v:
                ev["steps_t"].append(float(v["train_step_time"]))
        elif k in ("run_start", "run_stop"):
            ev[k] = t
            if k == "run_stop":
                ev["samples"] = (e.get("metadata") or {}).get("samples_count")
        elif k == "eval_start":
            eval_open = t
        elif k == "eval_stop" and eval_open is not None:
            ev["evals"].append(t - eval_open)
            eval_open = None
        elif k in ("global_batch_size", "max_sequence_length", "gradient_accumulation_steps"):
            ev.setdefault(k, e.get("value"))
    return ev


def run_summary(folder: Path) -> dict:
    """Median step time over a system's runs, steps, time to train, GPUs and device (systems JSON)."""
    bench_round = folder.parents[1]
    system = json.loads((bench_round / "systems" / f"{folder.name}.json").read_text())
    info = system_from_json(system, folder.name)
    steps_t, ttt, steps, how = [], [], [], ""
    for f in sorted(folder.glob("result_*.txt")):
        ev = read_mllog(f)
        if "run_start" not in ev or "run_stop" not in ev or not ev.get("samples"):
            continue
        gbs = ev["global_batch_size"]
        n = ev["samples"] / gbs
        run_s = (ev["run_stop"] - ev["run_start"]) / 1000
        ttt.append(run_s)
        steps.append(n)
        if ev["steps_t"]:
            steps_t.append(statistics.median(ev["steps_t"]))
            how = "median tracked_stats.train_step_time"
        else:
            steps_t.append((run_s - sum(ev["evals"]) / 1000) / n)
            how = "(run_stop - run_start - evaluation) / steps"
    return {"step": statistics.median(steps_t), "ttt": statistics.median(ttt), "steps": statistics.median(steps),
            "gbs": gbs, "seq": ev.get("max_sequence_length") or 8192, "ga": ev.get("gradient_accumulation_steps"),
            "info": info, "how": how, "runs": len(steps_t), "name": folder.name}


def line(label: str, measured: float, pred, extra: str = "") -> float:
    ratio = pred.time / measured
    print(f"  {label:<46} measured {measured:9.4g} s  predicted {pred.time:9.4g} s "
          f"[{pred.low:.4g}, {pred.high:.4g}]  ratio {ratio:6.3f}  {extra}")
    return ratio


def scale_study(title: str, cfg_name: str, folders: list[str], strategies: list[str], precision: str) -> None:
    print(f"\n== {title}")
    cfg = load_config(cfg_name)
    runs = [run_summary(LLM / f) for f in folders]
    base = runs[0]
    base_measured = measured_configurations([read_log_file(f, source=str(f))
                                             for f in sorted((LLM / folders[0]).glob("result_*.txt"))])[0]
    s0 = parse_strategy(strategies[0])
    cal = calibrate(cfg, [Measurement(base["step"], base["info"].accelerator, base["info"].gpus, base["gbs"],
                                      base["seq"], s0, base["info"].domain, f"{base['name']}: {base['how']}")],
                    prior=Efficiency(precision=precision), latency=AFTER)
    cal0 = calibrate(cfg, [Measurement(base["step"], base["info"].accelerator, base["info"].gpus, base["gbs"],
                                       base["seq"], s0, base["info"].domain, base["name"])],
                     prior=Efficiency(precision=precision), latency=BEFORE)
    print(f"  calibrated on {base['info'].gpus} GPUs ({base['name']}, {base['runs']} runs, {base['how']}): "
          f"{base['step']:.4g} s/step; {cal.notes[0]}")
    eval_share = base["ttt"] / (base["step"] * base["steps"])  # time to train / pure step time at the base
    for r, s in zip(runs, strategies):
        p = predict(cfg, r["info"].accelerator, r["info"].gpus, global_batch=r["gbs"], seq_len=r["seq"],
                    calibration=cal, strategy=parse_strategy(s), domain=r["info"].domain)
        mfu = p.estimate.model_flops / (p.time * r["info"].gpus * r["info"].accelerator.peak_flops(precision))
        p0 = predict(cfg, r["info"].accelerator, r["info"].gpus, global_batch=r["gbs"], seq_len=r["seq"],
                     calibration=cal0, strategy=parse_strategy(s), domain=r["info"].domain)
        line(f"{r['info'].gpus} × {r['info'].accelerator.name} GBS {r['gbs']} ({s})", r["step"], p,
             f"MFU({precision}) {mfu:.2f}; before (no latency) ratio {p0.time / r['step']:.3f}")
        ttt_step_only = p.time * r["steps"] * eval_share
        samples = samples_at_batch(base_measured, r["gbs"], benchmark=cfg_name)
        ttt_pred = p.time * samples.samples / r["gbs"] * eval_share
        print(f"  {'':<46} time to train, step time alone predicted (the scored run's own steps): measured "
              f"{r['ttt'] / 60:7.1f} min  predicted {ttt_step_only / 60:7.1f} min  "
              f"ratio {ttt_step_only / r['ttt']:.3f}")
        print(f"  {'':<46} time to train, steps predicted too (samples: {samples.source}, as plan --from-logs takes "
              f"them from the calibration run's logs): predicted {ttt_pred / 60:7.1f} min  ratio "
              f"{ttt_pred / r['ttt']:.3f}")


def device_study(title: str, cfg, source: str, s_source: str, targets: list[tuple[str, str]],
                 precision: str) -> None:
    print(f"\n== {title}")
    base = run_summary(LLM / source)
    acc0 = base["info"].accelerator
    cal = calibrate(cfg, [Measurement(base["step"], acc0, base["info"].gpus, base["gbs"], base["seq"],
                                      parse_strategy(s_source), base["info"].domain, base["how"])],
                    prior=Efficiency(precision=precision), latency=AFTER)
    cal0 = calibrate(cfg, [Measurement(base["step"], acc0, base["info"].gpus, base["gbs"], base["seq"],
                                       parse_strategy(s_source), base["info"].domain, base["how"])],
                     prior=Efficiency(precision=precision), latency=BEFORE)
    print(f"  source {base['info'].gpus} × {acc0.name} ({base['name']}): {base['step']:.4g} s/step "
          f"GBS {base['gbs']} ({base['how']})")
    for folder, s in targets:
        r = run_summary(LLM / folder)
        acc = r["info"].accelerator
        p = predict(cfg, acc, r["info"].gpus, global_batch=r["gbs"], seq_len=r["seq"], calibration=cal,
                    strategy=parse_strategy(s), domain=r["info"].domain)
        p0 = predict(cfg, acc, r["info"].gpus, global_batch=r["gbs"], seq_len=r["seq"], calibration=cal0,
                     strategy=parse_strategy(s), domain=r["info"].domain)
        # the naive transfer: per-GPU work scaled by the ratio of dense peaks
        work = r["gbs"] / base["gbs"] * base["info"].gpus / r["info"].gpus
        naive = base["step"] * work * acc0.peak_flops(precision) / acc.peak_flops(precision)
        print(f"  {r['info'].gpus} × {acc.name:<9} ({folder}, {r['how']}): measured {r['step']:.4g} s  model "
              f"{p.time:.4g} s (ratio {p0.time / r['step']:.3f} -> {p.time / r['step']:.3f})  "
              f"datasheet-peak ratio {naive:.4g} s "
              f"(ratio {naive / r['step']:.3f})")


SCRIPT_DIMS = re.compile(r"num_layers\s*=\s*(\d+)|n_layer\s*=\s*(\d+)")


def speedrun() -> None:
    print("\n== NanoGPT speedrun (8 × H100): calibrate on 2024-10-18_PyTorch25 (plain AdamW/Muon GPT-2 small), "
          "predict the others' step_avg (2024-10-20_ScaleUp1B is a 1.5B model: not this config)")
    cfg = load_config("nanogpt_speedrun")
    h100 = get_accelerator("H100")
    rows = []
    for folder in sorted(glob.glob(str(REF / "nanogpt_speedrun/track_1_short/*"))):
        logs = sorted(Path(folder).glob("*.txt"))
        if not logs:
            continue
        text = logs[0].read_text(errors="replace")
        last = re.findall(r"step:(\d+)/(\d+) .*?step_avg:([\d.]+)ms", text)
        if not last:
            continue
        step_avg = float(last[-1][2]) / 1000
        # tokens per step: batch_size×sequence_length (2024 scripts) or train_seq_len×world (2025 scripts)
        m_b = re.search(r"batch_size\s*:\s*int\s*=\s*([\d*]+)", text)
        m_s = re.search(r"sequence_length\s*:\s*int\s*=\s*([\d*]+)", text)
        m_t = re.search(r"train_seq_len\s*(?::\s*int)?\s*=\s*([\d*]+)", text)
        if m_b and m_s:
            tokens = eval(m_b.group(1)) * eval(m_s.group(1))  # digits and * only (regex)
        elif m_t:
            tokens = eval(m_t.group(1)) * 8
        else:
            continue
        rows.append((Path(folder).name, step_avg, tokens))
    seq = 1024  # attention per document: 1,024-token documents (the speedrun's sequence/window)
    first = next(r for r in rows if r[0] == "2024-10-18_PyTorch25")
    s = parse_strategy("dp=8")
    cal = calibrate(cfg, [Measurement(first[1], h100, 8, first[2] // seq, seq, s, 8, f"{first[0]} step_avg")])
    ratios = []
    for name, t, tokens in rows:
        gbs = tokens // seq
        if gbs % 8:
            continue
        p = predict(cfg, h100, 8, global_batch=gbs, seq_len=seq, calibration=cal, strategy=s, domain=8)
        if name != first[0]:         # the calibration record reproduces itself: not a prediction
            ratios.append(p.time / t)
        print(f"  {name:<42} tokens/step {tokens:>7}  step_avg {t * 1e3:7.2f} ms  predicted {p.time * 1e3:7.2f} ms"
              f"  ratio {p.time / t:.3f}")
    within = sum(1 for x in ratios if abs(x - 1) <= 0.15)
    print(f"  {within} of {len(ratios)} other records within 15 % (out of sample: the calibration record, exact by "
          "construction, is not counted); the outliers are recipes that change the work per "
          "step beyond this config (SOAP and FP4-quantised optimizers, the 1.5B ScaleUp1B, the first Muon, "
          "extra optimizer or embedding work)")
    print(f"  spread of predicted/measured over {len(ratios)} records: min {min(ratios):.3f}, median "
          f"{statistics.median(ratios):.3f}, max {max(ratios):.3f} (the recipe, not the hardware, moves step_avg)")


def two_point() -> None:
    """(2b) what a second measurement buys: calibrate on 8 and 72 GB200 (compute and communication), predict 512."""
    cfg = load_config("llama31_8b")
    folders = ["NVIDIA__tyche_ngpu8_ngc25.09_nemo", "NVIDIA__tyche_ngpu72_ngc25.09_nemo",
               "NVIDIA__tyche_ngpu512_ngc25.09_nemo"]
    runs = [run_summary(LLM / "mlperf_v5.1/llama31_8b" / f) for f in folders]
    strategies = ["dp=8,mb=2", "dp=36,cp=2", "dp=64,tp=2,cp=4"]
    ms = [Measurement(r["step"], r["info"].accelerator, r["info"].gpus, r["gbs"], r["seq"], parse_strategy(s),
                      r["info"].domain, r["how"]) for r, s in zip(runs[:2], strategies[:2])]
    cal = calibrate(cfg, ms, prior=Efficiency(precision="fp8"), latency=AFTER)
    cal0 = calibrate(cfg, ms, prior=Efficiency(precision="fp8"), latency=BEFORE)
    r = runs[2]
    p0 = predict(cfg, r["info"].accelerator, r["info"].gpus, global_batch=r["gbs"], seq_len=r["seq"],
                 calibration=cal0, strategy=parse_strategy(strategies[2]), domain=r["info"].domain)
    p = predict(cfg, r["info"].accelerator, r["info"].gpus, global_batch=r["gbs"], seq_len=r["seq"], calibration=cal,
                strategy=parse_strategy(strategies[2]), domain=r["info"].domain)
    print(f"\n== (2b) Llama 3.1 8B, GB200: calibrate on 8 and 72 (compute factor {cal.compute_factor:.3f}, "
          f"communication factor {cal.comm_factor:.3f}; {cal.spread_source}), predict 512")
    line(f"512 × GB200 GBS {r['gbs']} ({strategies[2]})", r["step"], p,
         f"before (no latency) ratio {p0.time / r['step']:.3f}")


def main() -> None:
    require_shared("mlperf_v5_llm", bench="bench/transformer.py")
    scale_study("(1) Llama 3.1 405B, H100, MLPerf v5.0: calibrate at 512, predict 2,048 and 8,192", "llama31_405b",
                ["mlperf_v5.0/llama31_405b/NVIDIA__eos-dfw_n64_ngc25.01_nemo",
                 "mlperf_v5.0/llama31_405b/NVIDIA__eos-dfw_n256_ngc25.01_nemo",
                 "mlperf_v5.0/llama31_405b/NVIDIA__eos-dfw_n1024_ngc25.01_nemo"],
                ["dp=4,tp=8,pp=8,cp=2,vp=8", "dp=16,tp=8,pp=8,cp=2,vp=8", "dp=64,tp=8,pp=8,cp=2,vp=8"], "fp8")
    # strategies of NVIDIA's GB200 8B configs (config_GB200_2x4x2xtp1pp1cp1_8b, 18x4x1xtp1pp1cp2_8b,
    # 128x4x1xtp2pp1cp4_8b: TP/PP/CP/MBS as named in NVIDIA's submission config files)
    scale_study("(2) Llama 3.1 8B, GB200, MLPerf v5.1: calibrate at 8, predict 72 and 512", "llama31_8b",
                ["mlperf_v5.1/llama31_8b/NVIDIA__tyche_ngpu8_ngc25.09_nemo",
                 "mlperf_v5.1/llama31_8b/NVIDIA__tyche_ngpu72_ngc25.09_nemo",
                 "mlperf_v5.1/llama31_8b/NVIDIA__tyche_ngpu512_ngc25.09_nemo"],
                ["dp=8,mb=2", "dp=36,cp=2", "dp=64,tp=2,cp=4"], "fp8")
    two_point()
    c8 = load_config("llama31_8b")
    device_study("(3a) Llama 3.1 8B across devices (v5.1): from H200 (64 GPUs: the only H200 run)", c8,
                 "mlperf_v5.1/llama31_8b/HPE__HPE-Cray-XD670-H200-SXM5-141GB_n8_25.09", "dp=32,cp=2",
                 [("mlperf_v5.1/llama31_8b/Dell__1xXE9680Lx8B200-SXM-180GB", "dp=8,mb=2"),
                  ("mlperf_v5.1/llama31_8b/Lenovo__SR680aV4-8xB300_SXM", "dp=8,mb=2"),
                  ("mlperf_v5.1/llama31_8b/Nebius__nebius_b300_n1", "dp=8,mb=2"),
                  ("mlperf_v5.1/llama31_8b/AMD__MI355X_EPYC_9575F_pytorch", "dp=8,mb=4")], "fp8")
    lora = load_config("llama2_70b").with_lora(16)
    device_study("(3b) Llama 2 70B LoRA across devices at 8 GPUs (v5.0): from H200 (the H100 run has 64 GPUs)", lora,
                 "mlperf_v5.0/llama2_70b_lora/Dell__XE9680x8H200-SXM-141GB", "dp=1,tp=4,cp=2",
                 [("mlperf_v5.0/llama2_70b_lora/SCITIX__scitix_n8_ngc24.09_nemo", "dp=8,tp=4,cp=2"),
                  ("mlperf_v5.0/llama2_70b_lora/NVIDIA__nyx_n1_ngc25.04_nemo", "dp=1,tp=4,cp=2"),
                  ("mlperf_v5.0/llama2_70b_lora/NVIDIA__tyche_ngpu8_ngc25.04_nemo", "dp=1,tp=4,cp=2"),
                  ("mlperf_v5.0/llama2_70b_lora/AMD__MI300X_EPYC_9575F_pytorch", "dp=8,recompute=1"),
                  ("mlperf_v5.0/llama2_70b_lora/AMD__MI325X_EPYC_9575F_pytorch", "dp=8,recompute=1")], "fp8")
    speedrun()


if __name__ == "__main__":
    main()
