"""A decoder-only transformer's shape, read from a Hugging Face ``config.json`` (a local file only).

The step-time model needs the shape, not the weights: layers, hidden size, attention heads and
key-value heads (grouped-query attention), feed-forward size and whether the MLP is gated (Llama's
SwiGLU: three matrices; GPT-2: two), vocabulary, and for fine-tuning the LoRA rank and which
projections carry adapters.  :func:`load_config` reads a file with ``transformers.AutoConfig``
(``local_files_only=True``: nothing is downloaded); :data:`BUILTIN` names the configs shipped in
``data/transformer_configs/`` (see its README for provenance).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from core.errors import InputError

#: data/transformer_configs/ in the repository
CONFIG_DIR = Path(__file__).resolve().parents[2] / "data" / "transformer_configs"
#: built-in model name -> file in CONFIG_DIR
BUILTIN: dict[str, str] = {
    "llama31_405b": "llama31_405b.json",
    "llama31_8b": "llama31_8b.json",
    "llama2_70b": "llama2_70b.json",
    "nanogpt_speedrun": "nanogpt_speedrun.json",
}
#: what ``transformers`` reads from each built-in file, as ``(layers, hidden, heads, kv_heads, ffn, vocab,
#: gated_mlp, tied_embeddings)``: a built-in model needs no ``transformers`` import (3-9 s in a fresh process,
#: the Throughput page's first run paid it). ``tests/core/transformer`` re-reads every file through
#: ``AutoConfig`` and compares, so the table cannot drift from the files.
BUILTIN_READ: dict[str, tuple[int, int, int, int, int, int, bool, bool]] = {
    "llama31_405b": (126, 16384, 128, 8, 53248, 128256, True, False),
    "llama31_8b": (32, 4096, 32, 8, 14336, 128256, True, False),
    "llama2_70b": (80, 8192, 64, 8, 28672, 32000, True, False),
    "nanogpt_speedrun": (12, 768, 6, 6, 3072, 50304, False, False),
}
#: the projections of one layer, in the names LoRA adapters are given
PROJECTIONS = ("q", "k", "v", "o", "gate", "up", "down")
#: MLPerf's Llama 2 70B LoRA: rank 16 on the attention projections (its logs' ``lora_rank``)
ATTENTION = ("q", "k", "v", "o")
_UNGATED = {"gpt2", "gpt_neox", "gptj", "opt", "bloom", "falcon", "gpt_bigcode"}


@dataclass(frozen=True)
class TransformerConfig:
    """The shape of a decoder-only transformer.

    Attributes
    ----------
    name : str
    layers, hidden, heads, kv_heads, ffn, vocab : int
    gated_mlp : bool
        Three feed-forward matrices (gate, up, down) if true, two (up, down) if not.
    tied_embeddings : bool
        The output head shares the input embedding's weights (parameter count only).
    lora_rank : int
        0 for full training; else every weight is frozen but rank-``lora_rank`` adapters on
        ``lora_targets``.
    lora_targets : tuple of str
        Which of :data:`PROJECTIONS` carry adapters.
    source : str
        The file (or built-in name) it was read from.
    """

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    vocab: int
    gated_mlp: bool = True
    tied_embeddings: bool = False
    lora_rank: int = 0
    lora_targets: tuple[str, ...] = ()
    source: str = "given"

    def __post_init__(self) -> None:
        for field in ("layers", "hidden", "heads", "kv_heads", "ffn", "vocab"):
            value = getattr(self, field)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InputError(f"{self.source}: expected {field} a whole number >= 1; got {value!r}. "
                                 "Fix the model description.")
        if self.hidden % self.heads:
            raise InputError(f"{self.source}: expected hidden ({self.hidden}) divisible by heads ({self.heads}); "
                             "got a remainder. Fix the model description.")
        if self.heads % self.kv_heads:
            raise InputError(f"{self.source}: expected heads ({self.heads}) divisible by key-value heads "
                             f"({self.kv_heads}); got a remainder. Fix the model description.")
        if self.lora_rank < 0:
            raise InputError(f"{self.source}: expected lora_rank >= 0; got {self.lora_rank}.")
        bad = [t for t in self.lora_targets if t not in PROJECTIONS]
        if bad:
            raise InputError(f"{self.source}: expected LoRA targets among {', '.join(PROJECTIONS)}; got {bad}.")
        if self.lora_rank and not self.lora_targets:
            raise InputError(f"{self.source}: expected LoRA targets with lora_rank {self.lora_rank}; got none. "
                             "Name the projections, e.g. q,k,v,o.")

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def kv_dim(self) -> int:
        """Width of the key (and of the value) projection: key-value heads × head size."""
        return self.kv_heads * self.head_dim

    def projection_shapes(self) -> dict[str, tuple[int, int]]:
        """``{projection: (in_features, out_features)}`` of one layer's weight matrices.

        >>> TransformerConfig("t", 2, 64, 4, 2, 128, 100).projection_shapes()["k"]
        (64, 32)
        """
        h, f = self.hidden, self.ffn
        shapes = {"q": (h, h), "k": (h, self.kv_dim), "v": (h, self.kv_dim), "o": (h, h)}
        if self.gated_mlp:
            shapes["gate"] = (h, f)
        shapes.update({"up": (h, f), "down": (f, h)})
        return shapes

    @property
    def layer_params(self) -> int:
        """Matrix parameters of one layer (norm weights and biases are left out: < 0.1 %)."""
        return sum(i * o for i, o in self.projection_shapes().values())

    @property
    def embedding_params(self) -> int:
        """Input embedding plus output head (one of them if tied)."""
        return self.vocab * self.hidden * (1 if self.tied_embeddings else 2)

    @property
    def params(self) -> int:
        """All parameters (matrices and embeddings).

        >>> round(load_config("llama31_8b").params / 1e9, 2)
        8.03
        """
        return self.layers * self.layer_params + self.embedding_params

    @property
    def lora_params(self) -> int:
        """Adapter parameters: ``rank × (in + out)`` per adapted projection per layer."""
        shapes = self.projection_shapes()
        return self.layers * sum(self.lora_rank * (shapes[t][0] + shapes[t][1])
                                 for t in self.lora_targets if t in shapes)

    @property
    def trainable_params(self) -> int:
        return self.lora_params if self.lora_rank else self.params

    def with_lora(self, rank: int, targets: tuple[str, ...] = ATTENTION) -> TransformerConfig:
        """The same model with every weight frozen and rank-``rank`` adapters on ``targets``."""
        return replace(self, lora_rank=rank, lora_targets=tuple(targets) if rank else ())


def _get(cfg: object, *names: str) -> object:
    for n in names:
        value = getattr(cfg, n, None)
        if value is not None:
            return value
    return None


def from_hf(cfg: object, *, name: str, source: str) -> TransformerConfig:
    """A :class:`TransformerConfig` from a ``transformers`` configuration object."""
    model_type = getattr(cfg, "model_type", "") or ""
    layers = _get(cfg, "num_hidden_layers", "n_layer")
    hidden = _get(cfg, "hidden_size", "n_embd")
    heads = _get(cfg, "num_attention_heads", "n_head")
    kv_heads = _get(cfg, "num_key_value_heads", "multi_query_group_num") or heads
    ffn = _get(cfg, "intermediate_size", "n_inner", "ffn_dim")
    if ffn is None and hidden is not None:
        ffn = 4 * hidden
    missing = [k for k, v in (("layers", layers), ("hidden size", hidden), ("heads", heads)) if v is None]
    if missing:
        raise InputError(f"{source}: expected a decoder transformer config with {', '.join(missing)}; got "
                         f"model_type {model_type!r} without them. Give a Llama- or GPT-2-style config.json.")
    return TransformerConfig(
        name=name, layers=int(layers), hidden=int(hidden), heads=int(heads), kv_heads=int(kv_heads),
        ffn=int(ffn), vocab=int(cfg.vocab_size), gated_mlp=model_type not in _UNGATED,
        tied_embeddings=bool(getattr(cfg, "tie_word_embeddings", False)), source=source)


def load_config(spec: str | Path) -> TransformerConfig:
    """A built-in name (:data:`BUILTIN`), or a local ``config.json`` file or folder holding one.

    Read with ``transformers.AutoConfig.from_pretrained(..., local_files_only=True)``; a built-in name
    from :data:`BUILTIN_READ`, what that read gives for its file.

    Examples
    --------
    >>> c = load_config("llama31_405b")
    >>> c.layers, c.hidden, c.heads, c.kv_heads, c.ffn, c.vocab, c.gated_mlp
    (126, 16384, 128, 8, 53248, 128256, True)
    >>> load_config("nanogpt_speedrun").gated_mlp
    False
    >>> load_config("no_such_model")
    Traceback (most recent call last):
    ...
    core.errors.InputError: --config: expected a config.json file, a folder holding one, or one of llama31_405b, \
llama31_8b, llama2_70b, nanogpt_speedrun; got 'no_such_model'. Give a local path or a built-in name.
    """
    text = str(spec)
    if text in BUILTIN_READ:
        layers, hidden, heads, kv_heads, ffn, vocab, gated, tied = BUILTIN_READ[text]
        return TransformerConfig(name=text, layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads, ffn=ffn,
                                 vocab=vocab, gated_mlp=gated, tied_embeddings=tied, source=f"builtin:{text}")
    if text in BUILTIN:
        path, name = CONFIG_DIR / BUILTIN[text], text
    else:
        path = Path(text)
        name = path.stem if path.is_file() else path.name
        if not path.exists():
            raise InputError(f"--config: expected a config.json file, a folder holding one, or one of "
                             f"{', '.join(BUILTIN)}; got {text!r}. Give a local path or a built-in name.")
    if path.is_dir() and not (path / "config.json").is_file():
        raise InputError(f"{path}: expected a folder holding config.json; got none. Point at the file itself.")
    try:
        if path.is_file():
            json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InputError(f"{path}: expected a JSON model configuration; got unreadable text ({err}).") from None
    from transformers import AutoConfig

    try:
        cfg = AutoConfig.from_pretrained(str(path), local_files_only=True)
    except (OSError, ValueError, KeyError) as err:
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise InputError(f"{path}: expected a Hugging Face config.json with a known model_type; got an error "
                         f"({first[:200]}). Add \"model_type\" (e.g. \"llama\" or \"gpt2\").") from None
    return from_hf(cfg, name=name, source=str(path) if text not in BUILTIN else f"builtin:{text}")
