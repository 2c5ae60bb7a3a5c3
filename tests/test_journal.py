"""The tuning journal: durable appends, and what a crash may leave behind."""

import json
import os

import pytest

from mumbo_jax.run import journal as jr


def _make(tmp_path, n=3):
    path = tmp_path / jr.JOURNAL_NAME
    with jr.Journal.create(path, {"format": 1, "config": {"a": 1}}) as j:
        for i in range(n):
            j.append({"type": "eval", "n": i, "score": i / 3})
    return path


def test_roundtrip_header_first_and_records_in_order(tmp_path):
    path = _make(tmp_path, 4)
    header, records, good = jr.read_journal(path)
    assert header == {"type": "header", "format": 1, "config": {"a": 1}}
    assert [r["n"] for r in records] == [0, 1, 2, 3]
    assert records[1]["score"] == 1 / 3  # floats survive exactly
    assert good == path.stat().st_size
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and all(json.loads(line) for line in lines[:-1])


def test_every_append_is_flushed_and_synced(tmp_path, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(jr.os, "fsync", lambda fd: (synced.append(fd), real(fd)))
    path = tmp_path / jr.JOURNAL_NAME
    j = jr.Journal.create(path, {"format": 1})
    n0 = len(synced)
    assert n0 >= 2  # the header line and the folder entry
    for i in range(3):
        j.append({"type": "eval", "n": i})
        # visible to a fresh reader right away (flushed), one fsync per record
        assert len(jr.read_journal(path)[1]) == i + 1
        assert len(synced) == n0 + i + 1
    j.close()


def test_create_refuses_to_overwrite(tmp_path):
    path = _make(tmp_path)
    with pytest.raises(jr.JournalError, match="already exists"):
        jr.Journal.create(path, {"format": 1})


@pytest.mark.parametrize("tail", [b'{"type": "eval", "n": 3, "sc', b'{"type": "ev', b"\x00\x00\x00\x00\n",
                                  b'{"type": "eval", "n": 3, "score": 1.\n'])
def test_torn_last_line_is_dropped_with_a_warning_and_cut_on_reopen(tmp_path, tail):
    path = _make(tmp_path, 3)
    size = path.stat().st_size
    with open(path, "ab") as fh:
        fh.write(tail)
    with pytest.warns(jr.TornJournalWarning, match="last line"):
        header, records, good = jr.read_journal(path)
    assert [r["n"] for r in records] == [0, 1, 2] and good == size
    with pytest.warns(jr.TornJournalWarning):
        j, _, records = jr.Journal.reopen(path)
    assert path.stat().st_size == size  # the torn bytes are gone
    j.append({"type": "eval", "n": 3})
    j.close()
    _, records, _ = jr.read_journal(path)  # no warning now: the file is clean
    assert [r["n"] for r in records] == [0, 1, 2, 3]


def test_custom_warn_callback(tmp_path):
    path = _make(tmp_path, 1)
    with open(path, "ab") as fh:
        fh.write(b'{"x')
    seen = []
    jr.read_journal(path, warn=seen.append)
    assert len(seen) == 1 and "redone" in seen[0]


def test_corrupt_line_before_the_last_is_an_error(tmp_path):
    path = _make(tmp_path, 3)
    lines = path.read_bytes().split(b"\n")
    lines[2] = b"garbage"
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(jr.JournalError, match="line 3 is corrupt"):
        jr.read_journal(path)


@pytest.mark.parametrize("content", [b"", b'{"type": "hea', b'{"type": "eval", "n": 0}\n', b"[1, 2]\n"])
def test_missing_or_torn_header_is_an_error(tmp_path, content):
    path = tmp_path / jr.JOURNAL_NAME
    path.write_bytes(content)
    with pytest.raises(jr.JournalError, match="no intact header"):
        jr.read_journal(path)


def test_missing_journal(tmp_path):
    with pytest.raises(jr.JournalError, match="no journal"):
        jr.read_journal(tmp_path / "nope.jsonl")


def test_non_finite_numbers_are_refused(tmp_path):
    j = jr.Journal.create(tmp_path / jr.JOURNAL_NAME, {"format": 1})
    with pytest.raises(ValueError):
        j.append({"score": float("nan")})
    j.close()
