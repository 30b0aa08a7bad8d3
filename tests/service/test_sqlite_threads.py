"""SqliteDB opens one connection per thread; a thread that has ended must not leave its connection
open (a web server runs each page script in a fresh thread: issue 12, memory after load)."""

from __future__ import annotations

import threading

from scansnap.service.sqlite import SqliteDB


def _read_in_threads(db: SqliteDB, n: int) -> None:
    for _ in range(n):
        t = threading.Thread(target=db._read, args=("SELECT 1",))
        t.start()
        t.join()


def test_connections_of_ended_threads_are_closed(tmp_path):
    db = SqliteDB(tmp_path / "t.sqlite")
    _read_in_threads(db, 50)
    db._read("SELECT 1")  # this thread's connection: opening it closes those of the 50 ended threads
    assert len(db._all) == 1, "one open connection per live thread that used the store"
    _read_in_threads(db, 5)
    db.close()
    assert db._all == []


def test_a_live_threads_connection_stays_open(tmp_path):
    db = SqliteDB(tmp_path / "t.sqlite")
    started, done = threading.Event(), threading.Event()
    later: list = []

    def reader() -> None:
        db._read("SELECT 1")
        started.set()
        done.wait(10)
        later.append(db._read("SELECT 2"))  # still usable after another thread opened one

    t = threading.Thread(target=reader)
    t.start()
    started.wait(10)
    db._read("SELECT 1")
    done.set()
    t.join()
    assert len(db._all) == 2 and [tuple(r) for r in later[0]] == [(2,)]
    db.close()
