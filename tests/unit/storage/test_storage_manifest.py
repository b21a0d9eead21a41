"""Manifests and deltas: atomic replacement, merging and idempotent application."""

from __future__ import annotations

import os
import threading

import pyarrow as pa
import pytest

from planner import errors
from segment.storage import chunk, manifest, stats

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string())])


def info(directory, name: str, rows: int = 1) -> chunk.ChunkInfo:
    return chunk.ChunkInfo(os.path.join(directory, name), rows,
                           {"k": stats.ColumnStats(1, rows, 0),
                            "v": stats.ColumnStats(None, None, rows)}, 10)


def test_manifest_round_trip(tmp_path):
    m = manifest.Manifest(7, SCHEMA, 3, (info(str(tmp_path), "chunk-a.arrow", 5),))
    manifest.write_manifest(str(tmp_path), m)
    assert manifest.read_manifest(str(tmp_path)) == m
    assert os.listdir(tmp_path) == [manifest.MANIFEST]


def test_non_finite_float_stats_survive(tmp_path):
    c = chunk.ChunkInfo(str(tmp_path / "chunk-f.arrow"), 2,
                        {"k": stats.ColumnStats(float("-inf"), float("nan"), 0)})
    manifest.write_manifest(str(tmp_path), manifest.Manifest(1, SCHEMA, 1, (c,)))
    back = manifest.read_manifest(str(tmp_path)).chunks[0].stats["k"]
    assert back.min == float("-inf") and back.max != back.max


def test_apply_merges_and_is_idempotent(tmp_path):
    d = str(tmp_path)
    base = manifest.Manifest(1, SCHEMA, 1, (info(d, "chunk-old.arrow"),))
    t1 = manifest.Delta(10, 1, (info(d, "chunk-t1.arrow"),), frozenset())
    t2 = manifest.Delta(11, 1, (info(d, "chunk-t2.arrow"),), frozenset({"chunk-old.arrow"}))
    one = manifest.apply(manifest.apply(base, t1), t2)
    other = manifest.apply(manifest.apply(base, t2), t1)
    assert one.files == other.files == {"chunk-t1.arrow", "chunk-t2.arrow"}
    assert manifest.apply(one, t1).files == one.files  # a roll-forward repeated
    assert one.version == 3


def test_delta_round_trip_and_names(tmp_path):
    d = str(tmp_path)
    delta = manifest.Delta(42, 3, (info(d, "chunk-x.arrow", 4),), frozenset({"chunk-y.arrow"}))
    manifest.write_delta(d, delta)
    assert manifest.read_delta(os.path.join(d, manifest.delta_name(42))) == delta
    assert manifest.delta_txn_id(manifest.delta_name(42)) == 42
    assert manifest.delta_txn_id("manifest.json") is None
    assert manifest.delta_txn_id("txn-x.delta.json") is None


def test_crash_before_replace_keeps_old_manifest(tmp_path, monkeypatch):
    d = str(tmp_path)
    old = manifest.Manifest(1, SCHEMA, 1, (info(d, "chunk-a.arrow"),))
    manifest.write_manifest(d, old)

    def crash(src, dst):
        raise OSError("simulated crash before rename")

    monkeypatch.setattr(manifest.os, "replace", crash)
    with pytest.raises(OSError):
        manifest.write_manifest(d, manifest.Manifest(1, SCHEMA, 2, ()))
    monkeypatch.undo()
    assert manifest.read_manifest(d) == old
    # A real crash leaves the half-written temporary file: it is never read as the manifest.
    with open(os.path.join(d, manifest.MANIFEST + manifest.TMP_MARK + "dead"), "w") as f:
        f.write('{"format": 1, "chun')
    assert manifest.read_manifest(d) == old


def test_readers_never_see_a_partial_manifest(tmp_path):
    d = str(tmp_path)
    manifest.write_manifest(d, manifest.Manifest(1, SCHEMA, 0, ()))
    stop = threading.Event()
    seen, failures = ([], []), []

    def reader(mine):
        while not stop.is_set():
            try:
                mine.append(manifest.read_manifest(d).version)
            except Exception as exc:  # noqa: BLE001 - any failure is the bug we look for
                failures.append(exc)

    threads = [threading.Thread(target=reader, args=(mine,)) for mine in seen]
    for t in threads:
        t.start()
    chunks = ()
    for v in range(1, 150):
        chunks = chunks + (info(d, f"chunk-{v}.arrow", v),)
        manifest.write_manifest(d, manifest.Manifest(1, SCHEMA, v, chunks), sync=False)
    stop.set()
    for t in threads:
        t.join()
    assert not failures
    for mine in seen:  # each reader sees whole manifests, versions never going back
        assert mine and mine == sorted(mine)


def test_unknown_format_is_an_internal_error(tmp_path):
    with open(tmp_path / manifest.MANIFEST, "w") as f:
        f.write('{"format": 99}')
    with pytest.raises(errors.InternalError):
        manifest.read_manifest(str(tmp_path))


def test_remove_durably_is_quiet_when_missing(tmp_path):
    path = tmp_path / "x"
    path.write_text("1")
    manifest.remove_durably(str(path))
    manifest.remove_durably(str(path))
    assert not path.exists()
