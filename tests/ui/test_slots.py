"""Server-wide render slots (ui/slots.py): bounded, re-entrant per thread."""

import threading
import time

from ui.live.slots import RenderSlots


def test_at_most_size_blocks_run_at_once():
    slots, inside, peak, lock = RenderSlots(2), [0], [0], threading.Lock()

    def work() -> None:
        with slots.slot():
            with lock:
                inside[0] += 1
                peak[0] = max(peak[0], inside[0])
            time.sleep(0.02)
            with lock:
                inside[0] -= 1

    threads = [threading.Thread(target=work, daemon=True) for _ in range(8)]  # a leaked slot must not hang pytest
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    assert peak[0] == 2 and inside[0] == 0


def test_a_thread_holding_a_slot_may_enter_again_and_releases_on_errors():
    slots = RenderSlots(1)
    with slots.slot(), slots.slot():  # a full page run that renders its fragment inline
        pass
    try:
        with slots.slot():
            raise RuntimeError("st.rerun() raises through the block")
    except RuntimeError:
        pass
    done = threading.Event()
    t = threading.Thread(target=lambda: (slots.slot().__enter__(), done.set()), daemon=True)
    t.start()
    assert done.wait(2)  # the slot was given back
