"""segment/heap.py: long-lived objects are frozen out of the cyclic collector's walk."""

import gc

from segment import heap


class _Cycle:
    def __init__(self):
        self.me = self


def test_settle_freezes_survivors_and_collects_young_garbage():
    gc.unfreeze()
    try:
        survivor = [object() for _ in range(100)]
        garbage = _Cycle()
        del garbage
        heap.settle()
        assert gc.get_freeze_count() >= len(survivor)
        # The cycle was young: collected before the freeze, not frozen with the survivors.
        assert not any(isinstance(o, _Cycle) for o in gc.get_objects())
    finally:
        gc.unfreeze()


def test_at_idle_freezes_only_after_kernels_were_loaded():
    gc.unfreeze()
    try:
        heap.settle()
        gc.unfreeze()
        heap.at_idle()  # nothing loaded since the last settle: no freeze
        assert gc.get_freeze_count() == 0
        heap.kernels_loaded()
        heap.at_idle()
        assert gc.get_freeze_count() > 0
        gc.unfreeze()
        heap.at_idle()  # the flag was cleared by that freeze
        assert gc.get_freeze_count() == 0
    finally:
        gc.unfreeze()
