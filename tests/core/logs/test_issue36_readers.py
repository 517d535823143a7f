"""Issue 36: a real Trainer checkpoint is read whole (records without a step are skipped with a note), and
TensorBoard event files go through the one reader registry wherever a log is read (bytes, a file, a folder)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from core.errors import LogFormatError
from core.logs import read_log, read_log_file
from core.logs.reader import reader_for, upload_types
from core.logs.tfevents import is_event_data, read_tfevents, read_tfevents_dir

DATA = Path(__file__).resolve().parents[2] / "data"
CHECKPOINT = DATA / "hf_trainer" / "checkpoint-60"
RUN = DATA / "sweep" / "tensorboard" / "resnet8_CPU-16"
EVENTS = RUN / "events.out.tfevents.0.sweep.0"
PREDICT_NOTE = ("log_history[16] has no step: skipped (predict_accuracy, predict_loss, predict_runtime, "
                "predict_samples_per_second, predict_steps_per_second)")


def _history() -> list[dict]:
    return json.loads((CHECKPOINT / "trainer_state.json").read_text())["log_history"]


# ------------------------------------------------------------------ Trainer records without a step
def test_a_real_checkpoint_with_predict_results_is_read_whole_with_a_note():
    history = _history()
    assert "step" not in history[-1] and "predict_loss" in history[-1]      # what made the file refused before
    log = read_log_file(CHECKPOINT)
    losses = {r["step"]: r["loss"] for r in history if "loss" in r}
    evals = {r["step"]: r["eval_accuracy"] for r in history if "eval_accuracy" in r}
    assert log.source == "checkpoint-60/trainer_state.json" and log.fmt == "hf-trainer"
    assert log.frame["global_step"].tolist() == sorted(losses)              # 5, 10, ..., 60: every training record
    assert log.frame["loss"].tolist() == [losses[s] for s in sorted(losses)]
    assert log.frame.set_index("global_step")["eval_accuracy"].dropna().to_dict() == evals   # steps 20, 40, 60
    assert sorted(evals) == [20, 40, 60]
    assert PREDICT_NOTE in log.flags
    assert not [c for c in log.frame.columns if c.startswith("predict")]


def test_a_loss_or_eval_record_without_a_step_is_skipped_and_the_note_says_it_is_not_on_the_curve():
    history = [{"step": 5, "loss": 2.0}, {"loss": 1.7}, {"step": 10, "loss": 1.5},
               {"eval_loss": 1.6, "epoch": 1.0}, {"step": 10, "eval_loss": 1.8}]
    log = read_log(json.dumps({"log_history": history}).encode(), "trainer_state.json")
    assert log.frame["global_step"].tolist() == [5.0, 10.0]                 # no step guessed for [1] or [3]
    assert log.frame["loss"].tolist() == [2.0, 1.5] and log.frame["eval_loss"].tolist()[-1] == 1.8
    assert ("log_history[1], [3] have no step: skipped (loss, eval_loss, epoch); their loss, eval_loss are not on "
            "the curve") in log.flags


def test_a_file_whose_records_all_lack_a_step_is_refused_by_name():
    data = json.dumps({"log_history": [{"loss": 2.0}, {"predict_loss": 1.0}]}).encode()
    with pytest.raises(LogFormatError, match=r"^trainer_state\.json: expected records with a 'step' in "
                                             r"log_history; none of its 2 records has one \(a step is never "
                                             r"guessed\)"):
        read_log(data, "trainer_state.json")


@pytest.mark.parametrize("step", [-1, "ten", [3]])
def test_a_step_that_is_there_but_wrong_is_still_refused(step):
    data = json.dumps({"log_history": [{"step": 5, "loss": 2.0}, {"step": step, "loss": 1.0}]}).encode()
    with pytest.raises(LogFormatError, match=r"log_history\[1\]: expected 'step' as a number >= 0; got "):
        read_log(data, "trainer_state.json")


# ------------------------------------------------------------------ TensorBoard through the registry
def test_event_files_are_told_by_their_content():
    data = EVENTS.read_bytes()
    assert is_event_data(data) and reader_for(data).name == "tfevents"
    assert reader_for(data, "upload.bin").name == "tfevents"                  # whatever the name
    for other in (b"epoch,step,loss\n1,1,2.0\n", (CHECKPOINT / "trainer_state.json").read_bytes(), b"", b"\0" * 64):
        assert not is_event_data(other)
    assert reader_for((CHECKPOINT / "trainer_state.json").read_bytes()).name == "hf-trainer"


def test_bytes_a_file_and_its_folder_read_the_run_as_library_add_does():
    library = read_tfevents([EVENTS], RUN.name)                              # what `library add` calls
    uploaded = read_log(EVENTS.read_bytes(), EVENTS.name)
    on_disk = read_log_file(EVENTS, source="runs/x/events.out.tfevents.0.sweep.0")
    folder = read_log_file(RUN)
    assert library.fmt == uploaded.fmt == on_disk.fmt == folder.fmt == "tfevents"
    assert len(library.frame) == 500 and library.steps_per_epoch == 250
    for log in (on_disk, folder):
        assert log.frame.equals(library.frame) and log.steps_per_epoch == library.steps_per_epoch
    # an upload has only its file name: no batch in it (``CPU-16``), so no samples; the rest is the same
    assert uploaded.frame.equals(library.frame.drop(columns="samples")) and uploaded.steps_per_epoch == 250
    assert library.frame["samples"].iloc[-1] == 5000 * 16
    assert uploaded.source == EVENTS.name and on_disk.source == "runs/x/events.out.tfevents.0.sweep.0"
    # the model and device come from the run's folder on disk, as library add names the run
    assert (on_disk.meta.model, on_disk.meta.gpu) == (folder.meta.model, folder.meta.gpu) == ("resnet8", "CPU")
    assert folder.frame.equals(read_tfevents_dir(RUN).frame)


def test_a_damaged_event_file_gets_the_tensorboard_message_not_the_csv_one(tmp_path):
    name = "events.out.tfevents.1700000000.host.123.0"
    with pytest.raises(LogFormatError) as caught:
        read_log(b"\x07garbage that is no TFRecord", name)
    assert str(caught.value) == (f"{name}: expected scalar summaries in the event files; found none (an empty, "
                                 "garbled or histogram-only run).")
    cut = EVENTS.read_bytes()[:-7]                                             # a run still writing
    log = read_log(cut, name)
    assert log.flags[0].startswith(f"{name}: event records stop at byte ")
    path = tmp_path / "resnet8_CPU-16" / name
    path.parent.mkdir()
    path.write_bytes(b"\x07garbage")
    with pytest.raises(LogFormatError, match=rf"^resnet8_CPU-16/{name}: expected scalar summaries"):
        read_log_file(path, source=f"resnet8_CPU-16/{name}")


@pytest.mark.parametrize("corpus", ["png_image.csv", "windows_exe.csv", "gzipped.csv"])
def test_other_binary_data_is_still_refused_by_name(corpus):
    data = (DATA / "bad_inputs" / corpus).read_bytes()
    assert reader_for(data, "photo.png").name == "csv"
    with pytest.raises(LogFormatError, match=r"^photo\.png: expected a CSV text file; got binary data"):
        read_log(data, "photo.png")


def test_a_bad_steps_per_epoch_is_refused_for_event_files_too():
    with pytest.raises(LogFormatError, match=r"expected steps per epoch to be an integer >= 1; got 0"):
        read_tfevents([EVENTS], "run", steps_per_epoch=0)
    assert read_log(EVENTS.read_bytes(), EVENTS.name, steps_per_epoch=100).steps_per_epoch == 100


def test_the_uploader_admits_every_name_because_event_file_names_have_no_fixed_ending():
    # streamlit's type filter compares the name's ending: events.out.tfevents.1700000000.host.123.0 ends in
    # ".0", a TensorFlow 2 file in ".v2", a TensorFlow 1 file in its host name; so the content decides
    from core.logs import READERS

    assert upload_types() is None
    assert "tfevents" in [r.name for r in READERS if r.extensions is None]
    fixed = tuple(r for r in READERS if r.extensions is not None)      # every other reader's endings, once each
    assert upload_types(fixed) == sorted({ext for r in fixed for ext in r.extensions})
    assert {"csv", "json", "txt"} <= set(upload_types(fixed))


def test_the_content_check_reads_the_length_crc_with_tensorboards_function():
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

    data = EVENTS.read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    assert struct.unpack("<I", data[8:12])[0] == masked_crc32c(data[:8]) and 0 < length < len(data)
    assert not is_event_data(data[:8] + bytes(4) + data[12:])                 # a wrong CRC: not a TFRecord
