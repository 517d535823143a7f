"""Write ``checkpoint-60/trainer_state.json``: a real Hugging Face ``Trainer`` run, then ``predict`` results appended.

Provenance of the file beside this script (issue 36, "real files read whole").  A tiny linear
classifier on 768 synthetic points (numpy seed 0; 320 to train, 192 to evaluate, 256 to predict) is
trained by ``transformers.Trainer`` on the CPU for 3 epochs (20 steps an epoch, logging every 5 steps,
evaluating every epoch), so ``log_history`` holds what the Trainer itself writes: ``loss``/``grad_norm``/
``learning_rate`` records, ``eval_*`` records and the final ``train_runtime`` summary.  Then, as training
scripts do to keep the test-set results with the run, the metrics of
``trainer.predict(test, metric_key_prefix="predict")`` (the examples' ``run_glue.py`` calls it so) are
appended to ``log_history`` as they come back (``predict_loss``, ``predict_runtime``,
``predict_samples_per_second``, ... and no ``step``), and the state is saved.  The runtimes are measured,
so a rerun differs in those fields only.

    python tests/data/hf_trainer/make_trainer_state.py     # transformers 5.24.0, accelerate 1.16.0, torch (CPU)
"""

from __future__ import annotations

import shutil
from pathlib import Path

OUT = Path(__file__).resolve().parent / "checkpoint-60"


def main() -> None:
    import numpy as np  # imported here: pytest's doctest collection imports this module, cheaply
    import torch
    from transformers import Trainer, TrainingArguments

    class Points(torch.utils.data.Dataset):
        def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
            self.x, self.y = torch.tensor(x, dtype=torch.float32), torch.tensor(y)

        def __len__(self) -> int:
            return len(self.y)

        def __getitem__(self, i: int) -> dict:
            return {"x": self.x[i], "labels": self.y[i]}

    class Linear(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(8, 2)

        def forward(self, x, labels=None):
            logits = self.layer(x)
            loss = torch.nn.functional.cross_entropy(logits, labels) if labels is not None else None
            return {"loss": loss, "logits": logits}

    def accuracy(pred) -> dict:
        return {"accuracy": float((pred.predictions.argmax(-1) == pred.label_ids).mean())}

    rng = np.random.default_rng(0)
    x = rng.normal(size=(768, 8))
    y = (x[:, :3].sum(axis=1) + 0.5 * rng.normal(size=768) > 0).astype(np.int64)
    torch.manual_seed(0)
    args = TrainingArguments(output_dir=str(OUT.parent / "_run"), per_device_train_batch_size=16,
                             per_device_eval_batch_size=64, num_train_epochs=3, learning_rate=0.05,
                             logging_steps=5, eval_strategy="epoch", save_strategy="no", report_to=[],
                             use_cpu=True, seed=0, disable_tqdm=True)
    trainer = Trainer(model=Linear(), args=args, train_dataset=Points(x[:320], y[:320]),
                      eval_dataset=Points(x[320:512], y[320:512]), compute_metrics=accuracy)
    trainer.train()
    predicted = trainer.predict(Points(x[512:], y[512:]), metric_key_prefix="predict")   # as run_glue.py calls it
    trainer.state.log_history.append(predicted.metrics)
    OUT.mkdir(exist_ok=True)
    trainer.state.save_to_json(str(OUT / "trainer_state.json"))
    shutil.rmtree(OUT.parent / "_run", ignore_errors=True)


if __name__ == "__main__":
    main()
