"""Server-wide render slots (scansnap/ui/slots.py): bounded, re-entrant per thread."""

import threading

from scansnap.ui.live.slots import RenderSlots

DEADLINE = 20.0  # generous: the CI machine may be busy


def test_at_most_size_blocks_run_at_once():
    """8 threads want one of 2 slots and hold it until the test lets them go, one at a time: two must get
    in together (else the wait for them runs out), and a third must never join them."""
    slots, changed = RenderSlots(2), threading.Condition()
    holding: set[int] = set()
    peak = [0]
    release = [threading.Event() for _ in range(8)]

    def work(i: int) -> None:
        with slots.slot():
            with changed:
                holding.add(i)
                peak[0] = max(peak[0], len(holding))
                changed.notify_all()
            release[i].wait(DEADLINE)  # hold the slot until the test lets this thread go
            with changed:
                holding.discard(i)
                changed.notify_all()

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(8)]  # a leak must not hang
    for t in threads:
        t.start()
    for left in range(len(threads), 0, -1):  # threads that have not finished
        with changed:
            assert changed.wait_for(lambda left=left: len(holding) >= min(2, left), DEADLINE), holding
            assert len(holding) == min(2, left), holding
            chosen = min(holding)
        release[chosen].set()
        with changed:
            assert changed.wait_for(lambda chosen=chosen: chosen not in holding, DEADLINE)
    for t in threads:
        t.join(DEADLINE)
    assert peak[0] == 2 and not holding and not any(t.is_alive() for t in threads)


def test_a_thread_holding_a_slot_may_enter_again_and_releases_on_errors():
    slots = RenderSlots(1)

    def page_run() -> None:  # in a thread of its own: a slot not given back must fail the test, not hang it
        with slots.slot(), slots.slot():  # a full page run that renders its fragment inline
            pass
        try:
            with slots.slot():
                raise RuntimeError("st.rerun() raises through the block")
        except RuntimeError:
            pass

    page = threading.Thread(target=page_run, daemon=True)
    page.start()
    page.join(DEADLINE)
    assert not page.is_alive(), "the page run blocked on its own slot"
    done = threading.Event()
    t = threading.Thread(target=lambda: (slots.slot().__enter__(), done.set()), daemon=True)
    t.start()
    assert done.wait(DEADLINE)  # the slot was given back
