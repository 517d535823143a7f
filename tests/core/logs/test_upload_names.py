"""Uploads keep their identity (issue 36): two files of one name and different bytes are two runs with names that
tell them apart; the same bytes twice, under one name or two, are one run; each decision is said."""

from __future__ import annotations

from core.logs import content_digest, name_uploads, parse_run_name, read_log
from core.logs.files import upload_label
from tests.conftest import ROOT

LLM = ROOT / "tests" / "data" / "llm"
EIGHT_B = (LLM / "mlperf_v5.1" / "llama31_8b" / "AMD__MI355X_EPYC_9575F_pytorch" / "result_0.txt").read_bytes()
LORA = (LLM / "mlperf_v5.0" / "llama2_70b_lora" / "Dell__16xXE9712x4GB200" / "result_0.txt").read_bytes()
COURSE = b"epoch,step,loss,acc\n" + b"".join(b"1,%d,%.4f,0.5\n" % (s, 2 / s) for s in range(1, 11))
OTHER = COURSE.replace(b"0.5\n", b"0.6\n")


def test_two_mlperf_result_files_of_one_name_are_two_runs_named_by_benchmark_and_system():
    out = name_uploads([("result_0.txt", EIGHT_B), ("result_0.txt", LORA)])
    assert out.names == ("result_0.txt (llama31_8b, MI355X)", "result_0.txt (llama2_70b_lora, 16xXE9712x4GB200)")
    assert out.notes == ("result_0.txt and result_0.txt differ: loaded as result_0.txt (llama31_8b, MI355X) and "
                         "result_0.txt (llama2_70b_lora, 16xXE9712x4GB200).",)
    runs = [read_log(data, name) for name, data in zip(out.names, (EIGHT_B, LORA))]
    assert [r.meta.model for r in runs] == ["llama31_8b", "llama2_70b_lora"]       # the log says, not the label


def test_one_after_the_other_the_loaded_file_keeps_its_name_and_the_new_one_is_told_apart():
    out = name_uploads([("result_0.txt", LORA)], held={"result_0.txt": content_digest(EIGHT_B)})
    assert out.names == ("result_0.txt (llama2_70b_lora, 16xXE9712x4GB200)",)
    assert out.notes == ("result_0.txt is loaded already and the new result_0.txt differs: loaded as "
                         "result_0.txt (llama2_70b_lora, 16xXE9712x4GB200).",)


def test_csv_files_of_one_name_get_a_short_content_hash_and_keep_their_metadata():
    out = name_uploads([("resnet20_Tesla V100.csv", COURSE), ("resnet20_Tesla V100.csv", OTHER)])
    assert out.names == (f"resnet20_Tesla V100.csv ({content_digest(COURSE)[:8]})",
                         f"resnet20_Tesla V100.csv ({content_digest(OTHER)[:8]})")
    assert len(set(out.names)) == 2
    meta = read_log(COURSE, out.names[0]).meta
    assert (meta.model, meta.depth, meta.gpu) == ("resnet20", 20, "Tesla V100")


def test_the_same_bytes_twice_are_one_run_under_one_name_or_two():
    same_name = name_uploads([("a.csv", COURSE), ("a.csv", COURSE)])
    assert same_name.names == ("a.csv", None)
    assert same_name.notes == ("a.csv was uploaded twice with the same bytes: loaded once.",)
    two_names = name_uploads([("a.csv", COURSE), ("b.csv", COURSE)])
    assert two_names.names == ("a.csv", None)
    assert two_names.notes == ("b.csv has the same bytes as a.csv: loaded once, as a.csv.",)
    again = name_uploads([("copy.csv", COURSE)], held={"a.csv": content_digest(COURSE)})
    assert again.names == (None,) and again.notes == ("copy.csv has the same bytes as a.csv: loaded once, as a.csv.",)


def test_distinct_names_are_left_alone_and_nothing_is_said():
    out = name_uploads([("a.csv", COURSE), ("b.csv", OTHER)], held={"c.csv": content_digest(LORA)})
    assert out == name_uploads([("a.csv", COURSE), ("b.csv", OTHER)], held={"c.csv": "x"})
    assert out.names == ("a.csv", "b.csv") and out.notes == ()


def test_a_label_taken_already_falls_back_to_the_content_hash():
    held = {"result_0.txt": content_digest(b"x"), "result_0.txt (llama31_8b, MI355X)": content_digest(b"y")}
    out = name_uploads([("result_0.txt", EIGHT_B)], held=held)
    assert out.names == (f"result_0.txt ({content_digest(EIGHT_B)[:8]})",)


def test_an_unreadable_mllog_is_labelled_by_its_hash_and_a_label_never_changes_the_metadata():
    bad = b':::MLLOG {"key": "run_start", "time_ms": 1}\n:::MLLOG not json\n'
    assert upload_label("result_0.txt", bad) == f"result_0.txt ({content_digest(bad)[:8]})"
    assert parse_run_name("resnet8_CPU-64_val.csv (1a2b3c4d)") == parse_run_name("resnet8_CPU-64_val.csv")


def test_a_template_platform_placeholder_is_not_a_name_the_content_hash_is():
    """Real v5.1 logs (Cisco's) declare ``submission_platform`` as the template's ``SUBMISSION_PLATFORM_PLACEHOLDER``:
    a label that names nothing; the content's hash tells the file apart instead."""
    platform = read_log(EIGHT_B, "result_0.txt").meta.gpu
    template = EIGHT_B.replace(platform.encode(), b"SUBMISSION_PLATFORM_PLACEHOLDER")
    assert template != EIGHT_B
    assert upload_label("result_0.txt", template) == f"result_0.txt (llama31_8b, {content_digest(template)[:8]})"
