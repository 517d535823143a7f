"""Which runs of the library to use: ``FILTER`` text such as ``model=resnet20,gpu=V100,tag=baseline``.

Syntax: comma-separated ``key=value`` terms.  Terms with different keys must all hold; the
same key given twice means either value (``model=resnet20,model=resnet32``).  An empty filter
matches every run.  Keys:

=================  ==================================================================
``model``          the model name, exactly (case ignored): ``resnet20``
``gpu``            a part of the device name (case ignored): ``V100`` matches
                   ``Tesla V100-SXM2-16GB``
``tag``            a tag of the run, exactly
``batch``          the global batch, a whole number
``dataset``        the data set recorded when the run was added (``cifar10``, ``mnist1d``)
``split``          ``train`` or ``val``
``source``         a part of the file or run name (case ignored)
``id``             the run's id in the library
``metric``         a metric the run logs, exactly: ``val_loss``, ``eval_accuracy``, ``acc``
``target``         the run's own target (an MLLOG or speedrun log's), as ``METRIC<=VALUE`` or
                   ``METRIC>=VALUE``: ``val_loss<=3.28``
=================  ==================================================================
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pandas as pd

from core.errors import InputError
from core.targets import parse_target
from core.validation import check_option

#: filter keys and what each matches (``FILTER_KEYS[key]`` is its help text)
FILTER_KEYS: dict[str, str] = {
    "model": "model name, exactly (case ignored)",
    "gpu": "part of the device name (case ignored)",
    "tag": "a tag, exactly",
    "batch": "global batch (a whole number)",
    "dataset": "data set recorded when the run was added",
    "split": "train or val",
    "source": "part of the file or run name (case ignored)",
    "id": "run id",
    "metric": "a metric the run logs, exactly",
    "target": "the run's own target, METRIC<=VALUE or METRIC>=VALUE",
}
_INTEGER_KEYS = ("batch", "id")


@dataclass(frozen=True)
class RunFilter:
    """Accepted values per key (all keys must match; any value of a key may).

    >>> RunFilter.parse("model=resnet20,gpu=V100,model=resnet32").terms
    (('gpu', ('V100',)), ('model', ('resnet20', 'resnet32')))
    >>> RunFilter.parse("").is_empty
    True
    """

    terms: tuple[tuple[str, tuple[str, ...]], ...] = field(default=())

    @classmethod
    def parse(cls, text: str | None) -> RunFilter:
        """Read ``FILTER`` text; an unknown key or a term without ``=`` raises ``InputError``.

        >>> RunFilter.parse("modle=resnet20")
        Traceback (most recent call last):
        ...
        core.errors.InputError: FILTER: expected key=value terms with keys model, gpu, tag, batch, dataset, \
split, source, id, metric, target; got 'modle=resnet20'. Write e.g. model=resnet20,gpu=V100.
        """
        values: dict[str, list[str]] = {}
        for term in (text or "").split(","):
            term = term.strip()
            if not term:
                continue
            key, sep, value = term.partition("=")
            key, value = key.strip().lower(), value.strip()
            if not sep or key not in FILTER_KEYS or not value:
                raise InputError(f"FILTER: expected key=value terms with keys {', '.join(FILTER_KEYS)}; got "
                                 f"{term!r}. Write e.g. model=resnet20,gpu=V100.")
            if key in _INTEGER_KEYS:
                try:
                    value = str(int(value))
                except ValueError:
                    raise InputError(f"FILTER: expected a whole number for {key}; got {value!r}. Write e.g. "
                                     f"{key}=128.") from None
            if key == "target":
                value = parse_target(value).spec          # one spelling: "val_loss <= 3.280" is val_loss<=3.28
            values.setdefault(key, []).append(value)
        return cls(tuple(sorted((k, tuple(v)) for k, v in values.items())))

    @classmethod
    def of(cls, **values) -> RunFilter:
        """A filter from keyword arguments, each a value or a list of values (None or empty: no condition).

        >>> RunFilter.of(model="resnet20", tag=["a", "b"], gpu=None).terms
        (('model', ('resnet20',)), ('tag', ('a', 'b')))
        """
        terms = []
        for key, value in values.items():
            check_option(key, "RunFilter: key", FILTER_KEYS)
            items = [value] if isinstance(value, (str, int)) else list(value or [])
            items = [str(v) for v in items if v is not None and str(v) != ""]
            if items:
                terms.append((key, tuple(items)))
        return cls(tuple(sorted(terms)))

    @property
    def is_empty(self) -> bool:
        return not self.terms

    def describe(self) -> str:
        """The filter as ``FILTER`` text (``all runs`` when empty).

        >>> RunFilter.parse("gpu=V100, model=resnet20").describe()
        'gpu=V100,model=resnet20'
        """
        if self.is_empty:
            return "all runs"
        return ",".join(f"{k}={v}" for k, values in self.terms for v in values)

    def where(self) -> tuple[str, list]:
        """A SQL condition on ``runs r`` and its parameters (``TRUE`` when empty)."""
        clauses, params = [], []
        for key, values in self.terms:
            marks = ", ".join("?" for _ in values)
            if key == "model":
                clauses.append(f"lower(r.model) IN ({marks})")
                params += [v.lower() for v in values]
            elif key in ("gpu", "source"):
                clauses.append("(" + " OR ".join(f"strpos(lower(r.{key}), ?) > 0" for _ in values) + ")")
                params += [v.lower() for v in values]
            elif key == "tag":
                clauses.append(f"r.run_id IN (SELECT run_id FROM run_tags WHERE tag IN ({marks}))")
                params += list(values)
            elif key == "batch":
                clauses.append(f"r.global_batch IN ({marks})")
                params += [int(v) for v in values]
            elif key == "metric":     # runs.metrics is the JSON object {name: role}
                clauses.append("(" + " OR ".join("strpos(r.metrics, ?) > 0" for _ in values) + ")")
                params += [json.dumps(v) + ":" for v in values]
            elif key == "target":     # runs.target is the JSON object {"metric", "direction", "value", "origin"}
                clauses.append("(" + " OR ".join("strpos(r.target, ?) > 0" for _ in values) + ")")
                params += [_target_json_prefix(v) for v in values]
            elif key == "id":
                clauses.append(f"r.run_id IN ({marks})")
                params += [int(v) for v in values]
            else:   # dataset, split
                clauses.append(f"r.{key} IN ({marks})")
                params += list(values)
        return (" AND ".join(clauses) if clauses else "TRUE"), params


def _target_json_prefix(spec: str) -> str:
    """How ``runs.target`` begins for a run whose own target is ``spec`` (as ``core.library.records`` writes it).

    >>> _target_json_prefix("val_loss<=3.28")
    '{"metric": "val_loss", "direction": "<=", "value": 3.28,'
    """
    t = parse_target(spec)
    return json.dumps({"metric": t.metric, "direction": t.direction, "value": t.value})[:-1] + ","


def target_spec_of(stored: str) -> str:
    """A run's own target as ``core.library.records`` stores it (JSON) → ``METRIC<=VALUE`` text.

    >>> target_spec_of('{"metric": "val_loss", "direction": "<=", "value": 3.28, "origin": "log"}')
    'val_loss<=3.28'
    """
    t = json.loads(stored)
    return parse_target(f"{t['metric']}{t['direction']}{t['value']}").spec


def metric_options(table: pd.DataFrame) -> dict[str, list[str]]:
    """The metrics logged and the runs' own targets a filter can take in a table of runs (``Library.runs``).

    >>> metric_options(pd.DataFrame({"metrics": ["val_loss", None, "loss,acc"], "target": ["val_loss<=3.28", None,
    ...                                                                                   None]}))
    {'metric': ['acc', 'loss', 'val_loss'], 'target': ['val_loss<=3.28']}
    """
    metrics = {m for cell in table["metrics"].dropna() for m in str(cell).split(",") if m}
    return {"metric": sorted(metrics), "target": sorted(set(table["target"].dropna().astype(str)))}
