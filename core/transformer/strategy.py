"""How the GPUs split the work: a Strategy (data, tensor, pipeline, context degrees, micro-batch,
virtual stages, ZeRO stage, recomputation), its text form, and the candidates a search tries.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.errors import InputError
from core.transformer.config import TransformerConfig


@dataclass(frozen=True)
class Strategy:
    """How the GPUs split the work.

    Attributes
    ----------
    dp, tp, pp, cp : int
        Data, tensor, pipeline and context (sequence) parallel degrees.
    micro_batch : int
        Sequences per micro-batch.
    vp : int
        Virtual pipeline stages per GPU (interleaved 1F1B).
    zero : int
        0 (replicated Adam state), 1 (distributed optimizer), 2 (+ gradients), 3 (+ weights).
    recompute : bool
        Full activation recomputation.
    """

    dp: int = 1
    tp: int = 1
    pp: int = 1
    cp: int = 1
    micro_batch: int = 1
    vp: int = 1
    zero: int = 1
    recompute: bool = False

    @property
    def gpus(self) -> int:
        return self.dp * self.tp * self.pp * self.cp

    def text(self) -> str:
        """``"dp=4,tp=8,pp=8,cp=2,mb=1,vp=1,zero=1,recompute=0"``, the form :func:`parse_strategy` reads."""
        return (f"dp={self.dp},tp={self.tp},pp={self.pp},cp={self.cp},mb={self.micro_batch},vp={self.vp},"
                f"zero={self.zero},recompute={int(self.recompute)}")


def parse_strategy(text: str) -> Strategy:
    """``dp=..,tp=..,pp=..[,cp=..][,mb=..][,vp=..][,zero=..][,recompute=0|1]``; omitted degrees are 1.

    >>> parse_strategy("dp=4,tp=8,pp=8,cp=2").gpus
    512
    >>> parse_strategy("dp=4,ep=2")
    Traceback (most recent call last):
    ...
    core.errors.InputError: --parallel: expected keys among dp, tp, pp, cp, mb, vp, zero, recompute; got 'ep'. \
Write e.g. dp=4,tp=8,pp=8.
    """
    names = {"dp": "dp", "tp": "tp", "pp": "pp", "cp": "cp", "mb": "micro_batch", "vp": "vp", "zero": "zero",
             "recompute": "recompute"}
    values: dict[str, int | bool] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, _, value = part.partition("=")
        key = key.strip().lower()
        if key not in names:
            raise InputError(f"--parallel: expected keys among {', '.join(names)}; got {key!r}. "
                             "Write e.g. dp=4,tp=8,pp=8.")
        try:
            number = int(value)
        except ValueError:
            raise InputError(f"--parallel: expected {key}=<whole number>; got {part!r}. Write e.g. tp=8.") from None
        if number < (0 if key in ("zero", "recompute") else 1):
            raise InputError(f"--parallel: expected {key} >= 1; got {number}.")
        values[names[key]] = bool(number) if key == "recompute" else number
    return Strategy(**values)


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def candidates(cfg: TransformerConfig, gpus: int, *, global_batch: int, seq_len: int, domain: int,
               max_micro_batch: int = 8) -> list[Strategy]:
    """Every strategy worth trying on ``gpus`` GPUs: tp within the scale-up domain and dividing the
    heads, cp up to 16 (for sequences of 8k tokens and more), pp up to the layers, dp dividing the batch."""
    out = []
    for tp in _divisors(gpus):
        if tp > domain or cfg.heads % tp or tp > 16:
            continue
        for cp in (1, 2, 4, 8, 16):
            if gpus % (tp * cp) or seq_len % (2 * cp) or (cp > 1 and seq_len < 4096 * cp // 2):
                continue
            for pp in _divisors(gpus // (tp * cp)):
                if pp > cfg.layers // 2 and pp > 1:
                    continue
                dp = gpus // (tp * cp * pp)
                if global_batch % dp:
                    continue
                per_dp = global_batch // dp
                for mb in (1, 2, 4, 8):
                    if mb > max_micro_batch or per_dp % mb:
                        continue
                    for recompute in (False, True):
                        vp = 1
                        if pp > 1:
                            vp = max(v for v in (1, 2, 4, 8) if pp * v <= cfg.layers and cfg.layers // (pp * v) >= 1)
                        out.append(Strategy(dp, tp, pp, cp, mb, vp, 1, recompute))
    return out


def with_dp(s: Strategy, gpus: int) -> Strategy:
    """``s`` with dp set so that the product is ``gpus`` (model split kept), or an ``InputError``."""
    rest = s.tp * s.pp * s.cp
    if gpus % rest:
        raise InputError(f"--gpus: expected multiples of tp×pp×cp = {rest}; got {gpus}.")
    return replace(s, dp=gpus // rest)
