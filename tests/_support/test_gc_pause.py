"""The cyclic collector's pause: off while any pause runs, in any thread, and back on only
if it was on when the first began."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from codegen._support.gc_pause import paused_gc


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_a_pause_restores_the_collector_even_after_an_error() -> None:
    with pytest.raises(ValueError), paused_gc():
        assert not gc.isenabled()
        raise ValueError
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with paused_gc():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_nested_pauses_end_with_the_outer_one() -> None:
    with paused_gc():
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_overlapping_pauses_in_threads_keep_it_off_until_the_last_ends() -> None:
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with paused_gc():
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    with paused_gc():
        thread.start()
        assert inside.wait(10)
    assert not gc.isenabled()  # the other thread's pause still runs
    release.set()
    thread.join(10)
    assert gc.isenabled()
