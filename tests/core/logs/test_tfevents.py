"""TensorBoard event files → RunLog with tensorboard's own reader: both scalar encodings, roles, hostile files."""

from __future__ import annotations

import pytest

from core.errors import LogFormatError
from core.logs.tfevents import files_digest, read_event_scalars, read_tfevents, read_tfevents_dir
from tests.core.library.helpers import write_events


def test_legacy_simple_values_become_a_course_like_log(tmp_path):
    rows = [{"step": k, "loss/train": 1.0 / (0.01 * k + 1) + 0.1, "epoch": (k - 1) // 10, "lr": 0.1}
            for k in range(1, 31)]
    rows += [{"step": k, "acc": 0.5 + k / 100} for k in (10, 20, 30)]      # accuracy once an epoch
    write_events(tmp_path / "resnet20_Tesla V100", rows, start=1000.0)
    log = read_tfevents_dir(tmp_path / "resnet20_Tesla V100")
    assert (log.source, log.fmt, log.meta.model, log.meta.gpu) == ("resnet20_Tesla V100", "tfevents", "resnet20",
                                                                   "Tesla V100")
    assert log.roles.to_dict() == {"epoch": "epoch", "step": "step", "loss": "loss/train", "acc": "acc",
                                   "time": "time_s", "lr": "lr"}
    frame = log.frame
    assert frame["global_step"].tolist() == list(range(1, 31))
    assert frame["epoch"].tolist() == [1] * 10 + [2] * 10 + [3] * 10       # 0-based epochs, read as 1-based
    assert frame["loss"].tolist() == pytest.approx([1.0 / (0.01 * k + 1) + 0.1 for k in range(1, 31)], rel=1e-6)
    assert frame["acc"].dropna().tolist() == pytest.approx([0.6, 0.7, 0.8], rel=1e-6)
    assert frame["time_s"].tolist() == [float(k - 1) for k in range(1, 31)]   # wall time k + 1000, from the first
    assert log.steps_per_epoch == 10


def test_tensor_scalars_of_tensorflow_2_are_read(tmp_path):
    from tensorboard.summary import Writer

    writer = Writer(str(tmp_path / "keras_run"))
    for epoch in range(4):
        writer.add_scalar("epoch_loss", 2.0 - 0.25 * epoch, step=epoch)
        writer.add_scalar("epoch_accuracy", 0.2 * epoch, step=epoch)
    writer.close()
    log = read_tfevents_dir(tmp_path / "keras_run")
    assert (log.roles.loss, log.roles.acc) == ("epoch_loss", "epoch_accuracy")
    assert log.frame["loss"].tolist() == [2.0, 1.75, 1.5, 1.25]
    assert log.frame["acc"].tolist() == pytest.approx([0.0, 0.2, 0.4, 0.6], rel=1e-6)


def test_histograms_are_skipped_and_a_later_write_of_a_step_wins(tmp_path):
    import numpy as np
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    writer = EventFileWriter(str(tmp_path / "run"))
    histo = summary_pb2.HistogramProto(min=0, max=1, num=3, sum=1.5, sum_squares=1.0, bucket_limit=[1.0],
                                       bucket=[3.0])
    for step, loss in ((1, 3.0), (2, 2.0), (2, 1.5), (3, 1.0)):      # step 2 logged twice (a restart)
        values = [summary_pb2.Summary.Value(tag="loss", simple_value=loss),
                  summary_pb2.Summary.Value(tag="weights", histo=histo)]
        writer.add_event(event_pb2.Event(wall_time=100.0 + step, step=step, summary=summary_pb2.Summary(value=values)))
    writer.close()
    scalars = read_event_scalars(next((tmp_path / "run").iterdir()))
    assert scalars["tag"].tolist() == ["loss"] * 4 and np.isfinite(scalars["value"]).all()
    log = read_tfevents_dir(tmp_path / "run")
    assert log.frame["loss"].tolist() == [3.0, 1.5, 1.0]


def test_a_run_cut_off_in_its_last_record_keeps_the_complete_ones(tmp_path):
    path = write_events(tmp_path / "run", [{"step": k, "loss": 1.0 / k} for k in range(1, 11)])
    data = path.read_bytes()
    path.write_bytes(data[:-7])                                            # the last record half-written
    log = read_tfevents_dir(tmp_path / "run")
    assert log.frame["global_step"].tolist() == list(range(1, 10))
    last = _record_starts(data)[-1]                                         # where the cut record begins
    assert log.flags[0] == (f"{path.name}: event records stop at byte {last:,} of {len(data) - 7:,} (a record cut "
                            "short or corrupted); read up to there")


def _record_starts(data: bytes) -> list[int]:
    """Where each TFRecord begins: an 8-byte little-endian length, its 4-byte CRC, the data, the data's CRC."""
    import struct

    starts, pos = [], 0
    while pos < len(data):
        starts.append(pos)
        pos += 16 + struct.unpack("<Q", data[pos:pos + 8])[0]
    return starts


def test_a_whole_run_has_no_damage_flag_and_a_corrupted_record_is_flagged(tmp_path):
    path = write_events(tmp_path / "run", [{"step": k, "loss": 1.0 / k} for k in range(1, 11)])
    assert not any("event records stop" in f for f in read_tfevents_dir(tmp_path / "run").flags)
    data = bytearray(path.read_bytes())
    starts = _record_starts(bytes(data))
    assert len(starts) == 11                                  # the file-version record, then one per step
    data[starts[6] + 14] ^= 0xFF                              # a byte inside step 6's data: its CRC fails
    path.write_bytes(bytes(data))
    log = read_tfevents_dir(tmp_path / "run")
    assert log.frame["global_step"].tolist() == [1, 2, 3, 4, 5]
    assert log.flags[0] == (f"{path.name}: event records stop at byte {starts[6]:,} of {len(data):,} (a record cut "
                            "short or corrupted); read up to there")


@pytest.mark.parametrize(("content", "message"), [
    (b"", "found none"), (b"\x00" * 5000, "found none"), (b"epoch,step,loss\n1,1,2.0\n", "found none"),
    (bytes(range(256)) * 40, "found none")])
def test_empty_or_garbled_event_files_are_refused_by_name(tmp_path, content, message):
    folder = tmp_path / "broken_run"
    folder.mkdir()
    (folder / "events.out.tfevents.1.host").write_bytes(content)
    with pytest.raises(LogFormatError, match=f"broken_run: .*{message}"):
        read_tfevents_dir(folder)


def test_a_run_without_loss_or_accuracy_says_which_tags_it_has(tmp_path):
    write_events(tmp_path / "run", [{"step": k, "grad_norm": 1.0, "throughput": 100.0} for k in range(1, 4)])
    with pytest.raises(LogFormatError, match="expected a loss or accuracy scalar .* got tags grad_norm, throughput"):
        read_tfevents_dir(tmp_path / "run")


def test_an_oversized_event_file_is_refused_before_it_is_read(tmp_path):
    path = write_events(tmp_path / "run", [{"step": k, "loss": 1.0 / k} for k in range(1, 200)])
    with pytest.raises(LogFormatError, match="expected at most 0 MB per event file"):
        read_tfevents([path], "run", max_bytes=1000)
    with pytest.raises(LogFormatError, match="grew past it|at most"):
        files_digest([path], max_bytes=1000)


def test_a_validation_folder_is_the_validation_split_of_its_run(tmp_path):
    write_events(tmp_path / "resnet8_Tesla V100" / "validation", [{"step": k, "epoch_loss": 1.0 / k,
                                                                   "epoch_accuracy": 0.1 * k} for k in range(1, 4)])
    log = read_tfevents_dir(tmp_path / "resnet8_Tesla V100" / "validation")
    assert (log.source, log.meta.split, log.meta.model) == ("resnet8_Tesla V100_val", "val", "resnet8")


def test_the_content_hash_of_a_run_changes_with_its_bytes(tmp_path):
    path = write_events(tmp_path / "run", [{"step": 1, "loss": 1.0}])
    first = files_digest([path])
    assert first == files_digest([path]) and len(first) == 64
    write_events(tmp_path / "run", [{"step": 2, "loss": 0.5}], start=2000.0)   # a second file (a restart)
    assert files_digest(sorted((tmp_path / "run").iterdir())) != first
