"""Write the bad-input corpus: files a user might drop on the Logs page that are not usable logs.

``python tests/data/bad_inputs/make_corpus.py`` rewrites every file; ``CORPUS`` maps each file
to the start of the problem its message must name (after ``<file>: ``); ``UNFIT`` the same for files
refused where a run is read to be fitted (too few points, issue 36); ``READABLE`` holds good runs
with another separator (semicolon, tab, a decimal comma) and the loss they must read as.  The tests in
tests/core/logs/test_bad_inputs.py, tests/cli/test_bad_inputs_cli.py and
tests/e2e/test_bad_inputs_e2e.py read this table.  Files that would be large (a row of two
million fields, /dev/zero) are made by those tests, not stored.
"""

from __future__ import annotations

import gzip
from pathlib import Path

HERE = Path(__file__).resolve().parent
GOOD_ROWS = "".join(f"1,{s},{2.0 / s:.4f},0.5\n" for s in range(1, 11))

#: file -> (bytes, regular expression the message must match after "<file>: ")
CORPUS: dict[str, tuple[bytes, str]] = {
    "empty.csv": (b"", r"the file is empty"),
    "whitespace.csv": (b"  \n\t\n\n", r"the file is empty"),
    "bom_only.csv": (b"\xef\xbb\xbf", r"the file is empty"),
    "png_image.csv": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", r"expected a CSV text file; got binary data"),
    "excel.xlsx.csv": (b"PK\x03\x04\x14\x00\x06\x00\x08\x00", r"expected a CSV text file; got a ZIP archive"),
    "gzipped.csv": (gzip.compress(b"epoch,step,loss\n1,1,2.0\n" * 50, mtime=0), r"expected .*(binary data|UTF-8)"),
    "windows_exe.csv": (b"MZ\x90\x00\x03\x00\x00\x00\x04\x00", r"expected a CSV text file; got binary data"),
    "pdf.csv": (b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n", r"expected UTF-8 text; got the byte"),
    "utf16_no_bom.csv": ("epoch,step,loss\n1,1,0.5\n".encode("utf-16-le"),
                         r"expected UTF-8 text; got UTF-16 text without a byte-order mark"),
    "latin1.csv": (b"epoch,step,loss,acc\n1,1,\xe9t\xe9,0.5\n", r"expected UTF-8 text; got the byte 0xe9"),
    "metrics.json.csv": (b'{"epoch": 1, "loss": 0.5}\n', r"expected a CSV with a header row; got JSON"),
    "page.html.csv": (b"<html><body>not a log</body></html>\n", r"expected a CSV with a header row; got HTML"),
    "one_column.csv": (b"loss\n0.5\n0.4\n", r"expected a CSV with at least a step and a loss column"),
    "no_loss_column.csv": (b"epoch,step,acc\n1,1,0.5\n1,2,0.6\n", r"expected a loss column"),
    "header_only.csv": (b"epoch,step,loss,acc\n", r"the file has a header but no data rows"),
    "text_loss.csv": (b"epoch,step,loss,acc\n1,1,abc,0.5\n1,2,def,0.6\n", r"expected numbers in column 'loss'"),
    "nan_loss.csv": (b"epoch,step,loss,acc\n1,1,nan,0.5\n1,2,nan,0.6\n", r"expected numbers in column 'loss'"),
    "mostly_inf.csv": (b"epoch,step,loss,acc\n1,1,inf,0.5\n1,2,inf,0.6\n1,3,1.0,0.6\n",
                       r"expected mostly finite numbers; 2 of 3"),
    "negative_loss.csv": (b"epoch,step,loss,acc\n1,1,-0.5,0.5\n1,2,0.4,0.6\n", r"expected loss >= 0"),
    "negative_step.csv": (b"epoch,step,loss,acc\n1,-1,0.5,0.5\n1,2,0.4,0.6\n", r"expected step >= 0"),
    "accuracy_300.csv": (b"epoch,step,loss,acc\n1,1,0.5,150\n1,2,0.4,300\n", r"expected accuracy in \[0, 1\]"),
    "text_epoch.csv": (b"epoch,step,loss\nx,y,z\n", r"expected numbers in column 'epoch'"),
    "wide_row.csv": (b"epoch,step,loss,acc\n" + b",".join([b"1"] * 5000) + b"\n" + GOOD_ROWS.encode(),
                     r"expected 4 fields per row as in the header; line 2 has 5,000"),
    "wide_row_at_the_end.csv": (b"epoch,step,loss,acc\n" + GOOD_ROWS.encode() + b"1,2,3,4,5,6\n",
                                r"expected 4 fields per row as in the header; line 12 has 6"),
    "too_many_columns.csv": ((",".join(f"c{i}" for i in range(1500)) + "\n" + ",".join("1" * 1500) + "\n").encode(),
                             r"expected at most 1000 columns; the header has 1,500"),
    "short_rows.csv": (b"epoch,step,loss,acc\n" + b"1,2\n" * 20 + b"1,1,0.5,0.5\n",
                       r"expected 4 fields per row as in the header; 20 row\(s\) have fewer"),
    "unclosed_quote.csv": (b'epoch,step,loss,acc\n1,1,"0.5,0.5\n1,2,0.4,0.6\n', r"expected .*fields|well-formed"),
    "step_1e20.csv": (b"epoch,step,loss,acc\n1,1,0.5,0.5\n1,100000000000000000000,0.4,0.6\n",
                      r"expected step numbers below 1e15"),
    "semicolons_and_text.csv": (b"a;b\nx;y\nz;w\n", r"expected a loss column"),
    "spaces_only_header.csv": (b" , , \n1,2,3\n", r"expected a loss column"),
    "loss_is_a_date.csv": (b"epoch,step,loss\n1,1,2024-01-01\n1,2,2024-01-02\n", r"expected numbers in column 'loss'"),
    "role_of_text.csv": (b"step,loss\nfirst,0.5\nsecond,0.4\n", r"expected numbers in column 'step'"),
    # issue 36: a semicolon file whose numbers mix a decimal comma and a point (1.234,5 is not 1.234 nor 1234.5)
    "decimal_comma_and_point.csv": (b"epoch;step;loss;acc\n" + "".join(
        f"1;{s};{2.0 / s:.4f};0,5\n".replace(".", ",") if s % 2 else f"1;{s};1.{s}00,5;0,5\n"
        for s in range(1, 11)).encode(), r"expected the numbers in column 'loss' written with one decimal separator"),
}

#: issue 36: files that read as tables but hold too few points for a curve: refused by name wherever a run is read to
#: be fitted (``python -m core fit`` and ``predict``, the Logs page; ``core.logs.MIN_FIT_POINTS``), and never a
#: loaded run. (``core.logs.read_log`` with its default ``min_points=1`` loads them as the tables they are.)
UNFIT: dict[str, tuple[bytes, str]] = {
    "single_row.csv": (b"epoch,step,loss,acc\n1,1,2.0,0.5\n", r"expected at least 4 points .*; got one data row"),
    "zero_steps.csv": (b"epoch,step,loss,acc\n" + "".join(f"1,0,{2.0 / s:.4f},0.5\n" for s in range(1, 11)).encode(),
                       r"expected at least 4 points .*; every row is at step 0 \(column 'step'\)"),
    "two_points.csv": (b"epoch,step,loss,acc\n1,1,2.0,0.5\n1,2,1.0,0.6\n",
                       r"expected at least 4 points at different steps to fit a curve; got 2 \('loss'\)"),
}

#: issue 36: good runs written with another separator, read as the comma file they match:
#: file -> (bytes, the loss column read)
READABLE: dict[str, tuple[bytes, list[float]]] = {
    "semicolon.csv": (("epoch;step;loss;acc\n" + GOOD_ROWS.replace(",", ";")).encode(),
                      [round(2.0 / s, 4) for s in range(1, 11)]),
    "semicolon_decimal_comma.csv": (("epoch;step;loss;acc\n" + GOOD_ROWS.replace(",", ";").replace(".", ",")).encode(),
                                    [round(2.0 / s, 4) for s in range(1, 11)]),
    "tab.csv": (("epoch\tstep\tloss\tacc\n" + GOOD_ROWS.replace(",", "\t")).encode(),
                [round(2.0 / s, 4) for s in range(1, 11)]),
}


def main() -> None:
    files = {**CORPUS, **UNFIT, **READABLE}
    for name, (data, _) in files.items():
        (HERE / name).write_bytes(data)
    print(f"wrote {len(files)} files to {HERE}")


if __name__ == "__main__":
    main()
