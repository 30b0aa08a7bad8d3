"""A cluster node's run host (scansnap/service/cluster_node.py: RunHost, without Ray): the server's long
poll (``take``) gets a run's messages in order with END last, and an error the run's messages raised on
the node after the messages before it (the server's Ray call then fails: the run is lost there).  A host
sets torch to one thread, as on a node: ``one_torch_thread`` restores this process's count after."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scansnap.service.cluster_node import END, IDLE, RunHost


class _Run:
    """A stand-in for NodeRun: ``messages`` yields ``msgs``, then raises ``error`` if one is given."""

    def __init__(self, msgs: list[tuple], error: Exception | None = None):
        self.msgs, self.error = msgs, error

    def messages(self) -> Iterator[tuple]:
        yield from self.msgs
        if self.error is not None:
            raise self.error


def _drain(host: RunHost) -> list[tuple]:
    """Every batch's messages until END, as the server takes them."""
    got: list[tuple] = []
    while not got or got[-1] != END:
        got += host.take(wait_s=1.0)
    return got


def test_a_runs_messages_come_in_order_with_end_last_and_free_the_host(one_torch_thread):
    host = RunHost()
    msgs = [("progress", 1, 0.1), ("status", "finished", None)]
    host._pump(_Run(msgs))
    assert _drain(host) == [*msgs, END]
    assert host.run is None and host.state == IDLE
    assert host.take(wait_s=0.01) == []  # nothing more


def test_an_error_on_the_node_reaches_the_server_after_the_messages_before_it(one_torch_thread):
    host = RunHost()
    msgs = [("progress", 3, 0.1), ("rows", "…")]
    host._pump(_Run(msgs, OSError("no space left on the node's disk")))
    assert host.take(wait_s=1.0) == msgs
    with pytest.raises(OSError, match="no space left"):
        host.take(wait_s=1.0)
    with pytest.raises(OSError):  # and on every take after it: the run's end is never reported as a clean one
        host.take(wait_s=1.0)


def test_an_error_before_any_message_is_raised_by_the_first_take(one_torch_thread):
    host = RunHost()
    host._pump(_Run([], RuntimeError("the scratch store could not be written")))
    with pytest.raises(RuntimeError, match="scratch store"):
        host.take(wait_s=1.0)
