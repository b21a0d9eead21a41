"""The sequences' counters (coordinator/sequences.py): values are never handed out twice,
also after the coordinator stops without warning; setval and RESTART are durable."""

import pytest

from coordinator.catalog import Catalog
from coordinator.sequences import LOG_AHEAD, SequenceCounters
from planner import errors
from planner.sequences import SequenceDef, SequenceOptions


def _seq(**options) -> SequenceDef:
    return SequenceDef(7, "s", SequenceOptions(**options))


def test_values_survive_a_crash_without_repeats(tmp_path):
    seq = _seq()
    counters = SequenceCounters(Catalog(str(tmp_path)))
    given = [counters.nextval(seq) for _ in range(5)]
    assert given == [1, 2, 3, 4, 5]
    # No clean shutdown: a new catalog and counters read what was written durably.
    again = SequenceCounters(Catalog(str(tmp_path)))
    nxt = again.nextval(seq)
    assert nxt > max(given)
    assert nxt == LOG_AHEAD + 1  # the rest of the logged block is skipped, as PostgreSQL does


def test_a_block_is_written_once_per_log_ahead_values(tmp_path):
    catalog = Catalog(str(tmp_path))
    writes = []
    original = catalog.write_sequence_value
    catalog.write_sequence_value = lambda *a: (writes.append(a), original(*a))
    counters = SequenceCounters(catalog)
    for _ in range(LOG_AHEAD * 2 + 1):
        counters.nextval(_seq())
    assert len(writes) == 3


def test_setval_and_restart_are_durable(tmp_path):
    seq = _seq()
    counters = SequenceCounters(Catalog(str(tmp_path)))
    counters.nextval(seq)
    counters.setval(seq, 500, True)
    assert SequenceCounters(Catalog(str(tmp_path))).nextval(seq) == 501
    counters.restart(seq, 42)
    assert SequenceCounters(Catalog(str(tmp_path))).nextval(seq) == 42
    assert counters.state(seq) == (42, False)


def test_bounds(tmp_path):
    seq = _seq(maxvalue=2)
    counters = SequenceCounters(Catalog(str(tmp_path)))
    assert [counters.nextval(seq), counters.nextval(seq)] == [1, 2]
    with pytest.raises(errors.QueryError) as e:
        counters.nextval(seq)
    assert e.value.sqlstate == "2200H"
    with pytest.raises(errors.QueryError) as e:
        counters.setval(seq, 3, True)
    assert e.value.sqlstate == "22003"
    # near the end of the range the logged block stops at MAXVALUE: a restart still errs
    assert SequenceCounters(Catalog(str(tmp_path))).state(seq) == (2, True)


def test_a_committed_restart_is_durable_with_its_commit(tmp_path):
    catalog = Catalog(str(tmp_path))
    seq = _seq()
    catalog.commit_transaction(1, False, [], [], new_sequences=[seq])
    SequenceCounters(catalog).nextval(seq)
    catalog.commit_transaction(2, False, [], [], altered_sequences=[seq],
                               sequence_values={seq.id: (500, False)})
    assert SequenceCounters(Catalog(str(tmp_path))).nextval(seq) == 500
