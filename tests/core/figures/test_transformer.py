"""The transformer step split and memory charts, on core.transformer's own rows."""

from __future__ import annotations

import pandas as pd
import pytest

from core.figures.transformer import STEP_PARTS, USABLE_MEMORY, memory_figure, step_split_figure
from core.transformer import get_accelerator, load_config, step_table


def test_the_stacked_parts_add_up_to_each_step_and_memory_meets_the_usable_line():
    h100 = get_accelerator("H100")
    rows, _ = step_table(load_config("llama31_8b"), h100, [8, 16], global_batch=32, seq_len=8192)
    rows = pd.DataFrame(rows)
    fig = step_split_figure(rows)
    assert [t.name for t in fig.data] == [name for _, name in STEP_PARTS] and fig.layout.barmode == "stack"
    for i, step in enumerate(rows["step_s"]):
        assert sum(t.y[i] for t in fig.data) == pytest.approx(step, rel=1e-12)
    assert list(fig.data[0].x) == ["8", "16"]
    mem = memory_figure(rows)
    assert list(mem.data[0].y) == pytest.approx(rows["memory_gb_per_gpu"].tolist())
    assert mem.data[1].name == USABLE_MEMORY and list(mem.data[1].y) == pytest.approx([72.0, 72.0])  # 0.9 × 80 GB
    assert all(y <= 72.0 for y in mem.data[0].y)            # the searched strategies fit


def test_no_rows_give_a_note_not_an_error():
    fig = step_split_figure(pd.DataFrame())
    assert fig.layout.annotations[0].text.startswith("No GPU count")
