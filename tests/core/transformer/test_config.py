"""The built-in transformer configurations: what transformers reads from each file, without importing it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from core.transformer.config import BUILTIN, BUILTIN_READ, CONFIG_DIR, from_hf, load_config

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("name", BUILTIN)
def test_the_table_is_what_transformers_reads_from_the_file(name):
    from transformers import AutoConfig

    read = from_hf(AutoConfig.from_pretrained(str(CONFIG_DIR / BUILTIN[name]), local_files_only=True),
                   name=name, source=f"builtin:{name}")
    assert set(BUILTIN_READ) == set(BUILTIN)
    assert load_config(name) == read


def test_a_built_in_model_needs_no_transformers_import_and_a_file_still_goes_through_it(tmp_path):
    code = ("import sys\nfrom core.transformer.config import load_config\n"
            "c = load_config('llama31_8b')\nprint(c.layers, c.kv_heads, 'transformers' in sys.modules)\n"
            f"load_config({str(CONFIG_DIR / BUILTIN['nanogpt_speedrun'])!r})\nprint('transformers' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["32", "8", "False", "True"]
