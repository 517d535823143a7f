"""Text that came from a user's file, made safe to show and to export.

* :func:`escape_markdown`: file names, column headers, model and spec names are shown as text,
  never as Markdown: a crafted name cannot add a link, an image (which the browser would fetch
  from another host), bold text or a Streamlit directive (``:red[...]``, ``:material/...:``).
* :func:`spreadsheet_safe`: text cells that a spreadsheet would run as a formula (beginning with
  ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) are prefixed with a single quote, as
  OWASP recommends for CSV exports; numbers stay numbers.  Every CSV the product writes (page
  downloads and every CLI command) goes through it.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

#: Markdown's punctuation (CommonMark escapes any of it with a backslash), plus ":" for
#: Streamlit's directives and emoji shortcodes
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=&\"'])")
#: what makes a spreadsheet treat a cell as a formula
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def escape_markdown(text: object) -> str:
    """``text`` with every Markdown (and Streamlit directive) character escaped: shown as typed.

    >>> escape_markdown("[click](http://x.y/a.png) **bold** :red[x]")
    '\\\\[click\\\\]\\\\(http\\\\:\\\\/\\\\/x\\\\.y\\\\/a\\\\.png\\\\) \\\\*\\\\*bold\\\\*\\\\* \\\\:red\\\\[x\\\\]'
    >>> escape_markdown("resnet20_V100.csv")
    'resnet20\\\\_V100\\\\.csv'
    """
    return _MARKDOWN.sub(r"\\\1", str(text)).replace("/", "\\/").replace("\n", " ")


def neutral_cell(value: object) -> object:
    """One cell: text that starts like a formula gets a leading ``'``; anything else is returned as is.

    >>> neutral_cell("=HYPERLINK(\\"http://x\\")"), neutral_cell("-5"), neutral_cell(-5.0), neutral_cell("resnet20")
    ('\\'=HYPERLINK("http://x")', "'-5", -5.0, 'resnet20')
    """
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def spreadsheet_safe(table: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``table`` whose text cells (and column names) cannot run as spreadsheet formulas.

    Numeric columns are untouched (a negative number is a number, not a formula); text
    columns have :func:`neutral_cell` applied to every cell.

    >>> t = pd.DataFrame({"file": ["=cmd|' /C calc'!A0", "ok.csv"], "b0": [-1.5, 2.0]})
    >>> spreadsheet_safe(t).to_dict("list")
    {'file': ["'=cmd|' /C calc'!A0", 'ok.csv'], 'b0': [-1.5, 2.0]}
    """
    out = table.copy()
    out.columns = [neutral_cell(str(c)) if not isinstance(c, (int, np.integer)) else c for c in out.columns]
    for column in out.columns:
        series = out[column]
        if series.dtype == object or pd.api.types.is_string_dtype(series):
            out[column] = series.map(neutral_cell, na_action="ignore")
    return out
