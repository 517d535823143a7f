"""Batch size: the linear learning-rate scaling rule with gradual warm-up, and steps per epoch.

Goyal et al., "Accurate, Large Minibatch SGD: Training ImageNet in 1 Hour" (2017,
arXiv:1706.02677), Sec. 2: when the minibatch is multiplied by ``k = B / B0``, multiply the
learning rate by ``k`` (linear scaling rule); start from the small-batch rate ``η`` and raise
it by a constant amount every step so that it reaches ``k·η`` after 5 epochs (gradual
warm-up), because the large rate is unstable at the start of training.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from core.errors import InputError
from core.validation import check_scalar

#: what larger batches do to accuracy per epoch (shown beside the helper)
LARGE_BATCH_TEXT = (
    "A larger batch means fewer steps per epoch (ceil(N/B)), so at the same number of epochs "
    "the model gets fewer updates: with the linear scaling rule and warm-up, Goyal et al. "
    "(2017) kept ResNet-50's ImageNet accuracy up to batch 8192, but beyond a problem-"
    "dependent critical batch size each extra sample per step buys less progress, so "
    "reaching the same accuracy takes more epochs (Shallue et al., JMLR 2019; McCandlish et "
    "al., 2018) and large batches can also generalise worse (Keskar et al., ICLR 2017). "
    "Check the accuracy per epoch at the new batch size; do not assume it."
)


@dataclass(frozen=True)
class BatchSizePlan:
    """Learning rate and step counts for a batch size (see :func:`batch_size_plan`)."""

    batch: int
    base_batch: int
    base_lr: float
    scale: float              # k = batch / base_batch
    lr: float                 # k * base_lr, reached at the end of warm-up
    n_samples: int
    steps_per_epoch: int      # ceil(n_samples / batch)
    warmup_epochs: float
    warmup_steps: int         # round(warmup_epochs * steps_per_epoch); 0 when k <= 1

    def to_dict(self) -> dict:
        return asdict(self)


def steps_per_epoch(n_samples: int, batch: int) -> int:
    """``ceil(n_samples / batch)``: the last, partial batch is one more step.

    Examples
    --------
    >>> steps_per_epoch(50_000, 128)   # 390 full batches + one of 80 samples
    391
    """
    n = check_scalar(n_samples, "n_samples", int, min_val=1)
    b = check_scalar(batch, "batch", int, min_val=1)
    return -(-n // b)


def batch_size_plan(batch: int, *, n_samples: int, base_batch: int = 256,
                    base_lr: float = 0.1, warmup_epochs: float = 5.0) -> BatchSizePlan:
    """The linear scaling rule and gradual warm-up for a batch size.

    Parameters
    ----------
    batch : int
        The new global batch B.
    n_samples : int
        Samples per epoch N.
    base_batch : int, default=256
        B0, the batch the base learning rate was tuned for (Goyal et al.: 256).
    base_lr : float, default=0.1
        η, the learning rate at ``base_batch`` (Goyal et al.: 0.1 for ResNet-50).
    warmup_epochs : float, default=5.0
        Epochs of linear warm-up from η to ``k·η`` (no warm-up when ``k <= 1``).

    Returns
    -------
    BatchSizePlan

    Examples
    --------
    Batch 1024 on CIFAR-10 (50,000 samples) from 0.1 at 256: k = 4, lr = 0.4,
    ceil(50000/1024) = 49 steps an epoch, 5 * 49 = 245 warm-up steps:

    >>> p = batch_size_plan(1024, n_samples=50_000)
    >>> p.scale, p.lr, p.steps_per_epoch, p.warmup_steps
    (4.0, 0.4, 49, 245)
    """
    b = check_scalar(batch, "batch", int, min_val=1)
    b0 = check_scalar(base_batch, "base_batch", int, min_val=1)
    eta = check_scalar(base_lr, "base_lr", float, min_val=0, include_boundaries="neither")
    warmup_epochs = check_scalar(warmup_epochs, "warmup_epochs", float, min_val=0, fix="Use 0 for no warm-up")
    spe = steps_per_epoch(n_samples, b)
    k = b / b0
    warm = int(round(warmup_epochs * spe)) if k > 1 else 0
    return BatchSizePlan(batch=b, base_batch=b0, base_lr=eta, scale=k, lr=k * eta,
                         n_samples=int(n_samples), steps_per_epoch=spe,
                         warmup_epochs=float(warmup_epochs), warmup_steps=warm)


def lr_at_step(plan: BatchSizePlan, step: int | np.ndarray) -> float | np.ndarray:
    """Learning rate at (0-based) step ``step`` under the plan's warm-up.

    ``η + (k·η − η) · step / W`` for ``step < W`` (``W = warmup_steps``), then ``k·η``.

    Examples
    --------
    >>> p = batch_size_plan(1024, n_samples=50_000)   # 0.1 -> 0.4 over 245 steps
    >>> round(lr_at_step(p, 0), 6), round(lr_at_step(p, 245), 6)
    (0.1, 0.4)
    >>> lr_at_step(p, np.array([49, 1000])).round(6).tolist()   # 0.1 + 0.3*49/245
    [0.16, 0.4]
    """
    s = np.asarray(step, dtype=float)
    if np.any(s < 0) or not np.all(np.isfinite(s)):
        raise InputError(f"step: expected steps >= 0; got {step!r}. Steps count from 0.")
    if plan.warmup_steps == 0:
        out = np.full_like(s, plan.lr)
    else:
        frac = np.minimum(s / plan.warmup_steps, 1.0)
        out = plan.base_lr + (plan.lr - plan.base_lr) * frac
    return float(out) if out.ndim == 0 else out
