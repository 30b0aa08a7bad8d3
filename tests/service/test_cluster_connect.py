"""Joining a Ray cluster (scansnap.service.cluster.connect, check_address): the addresses allowed, and Ray
Client's joins tried again when the head could not start its per-client server, and only then.  Ray itself
is replaced by a recorder: what is tested is what ``connect`` asks of it (the real joins: tests/cluster)."""

from __future__ import annotations

import sys
import types

import pytest

from scansnap.service import cluster
from scansnap.service.cluster import CLIENT_SERVER_FAILED, CLIENT_TRIES, check_address, connect

# Ray Client's error when its head answered but its server process for this client exited (seen here)
SERVER_FAILED = (
    f'{CLIENT_SERVER_FAILED}:\nTraceback (most recent call last):\n  File "proxier.py", line 772, in Datapath\n'
    "RuntimeError: Starting Ray client server failed. See ray_client_server_23000.err for detailed logs.\n"
)


@pytest.mark.parametrize("address", ["auto", "10.0.0.1:6379", "head.lab:6379", "ray://10.0.0.1:10001", " auto "])
def test_the_allowed_addresses(address):
    assert check_address(address) == address.strip()


@pytest.mark.parametrize("address", ["", "http://x:1", "ray://head", "head", "10.0.0.1:6379/x", "ray://:10001"])
def test_other_addresses_say_what_is_allowed(address):
    with pytest.raises(ValueError, match=r"expected HOST:6379, ray://HOST:10001 or auto"):
        check_address(address)


class FakeRay(types.ModuleType):
    """``ray`` as connect uses it: init fails with ``errors`` in turn, then joins."""

    def __init__(self, errors: list[Exception]):
        super().__init__("ray")
        self.errors, self.inits, self.shutdowns, self.joined = list(errors), [], 0, False

    def is_initialized(self) -> bool:
        return self.joined

    def init(self, address: str, **kwargs) -> None:
        self.inits.append(address)
        if self.errors:
            raise self.errors.pop(0)
        self.joined = True

    def shutdown(self) -> None:
        self.shutdowns += 1


@pytest.fixture
def fake_ray(monkeypatch):
    def make(*errors: Exception) -> FakeRay:
        ray = FakeRay(list(errors))
        monkeypatch.setitem(sys.modules, "ray", ray)
        return ray

    monkeypatch.setattr(cluster, "CLIENT_RETRY_S", 0.0)
    return make


def test_a_client_join_whose_server_failed_to_start_is_tried_again(fake_ray):
    ray = fake_ray(ConnectionError(SERVER_FAILED))
    connect("ray://10.0.0.1:10001")
    assert ray.inits == ["ray://10.0.0.1:10001"] * 2 and ray.joined and ray.shutdowns == 1


def test_a_client_join_fails_after_its_tries_naming_the_last_line_of_the_error(fake_ray):
    ray = fake_ray(*[ConnectionError(SERVER_FAILED)] * CLIENT_TRIES)
    with pytest.raises(ValueError) as e:
        connect("ray://10.0.0.1:10001")
    assert len(ray.inits) == CLIENT_TRIES and not ray.joined
    assert str(e.value) == (
        "cannot join the Ray cluster at ray://10.0.0.1:10001: RuntimeError: Starting Ray client server failed. "
        "See ray_client_server_23000.err for detailed logs.; start one with `ray start --head` "
        "(docs/operate.md: Beyond one machine)"
    )


@pytest.mark.parametrize(
    ("address", "error"),
    [
        ("ray://10.0.0.1:10001", ConnectionError("ray client connection timeout")),  # nothing answers: ~30 s each
        ("10.0.0.1:6379", ConnectionError(SERVER_FAILED)),  # not Ray Client: Ray's own retries only
    ],
)
def test_other_failures_are_not_tried_again(fake_ray, address, error):
    ray = fake_ray(error)
    with pytest.raises(ValueError, match="cannot join the Ray cluster"):
        connect(address)
    assert ray.inits == [address]


def test_a_joined_process_joins_no_more(fake_ray):
    ray = fake_ray()
    connect("ray://10.0.0.1:10001")
    connect("10.0.0.2:6379")  # a process joins one cluster: the first
    assert ray.inits == ["ray://10.0.0.1:10001"]
