"""Part 2 of scripts/test.sh in streams (tests/streams.py): which CPUs a stream takes, which group a test
file joins, and, in a pytest run inside this test, that each stream's process and the processes it starts
keep to CPUs of their own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import streams

ROOT = Path(__file__).resolve().parents[1]
PROBE = "tests/fixtures/streams_probe.py"


def test_each_stream_takes_the_next_cpus_of_those_allowed():
    allowed = {7, 1, 3, 5, 9}  # not 0..n-1: a container's cpuset
    assert streams.stream_cpus("gw0", allowed, 2, 2) == {1, 3}
    assert streams.stream_cpus("gw1", allowed, 2, 2) == {5, 7}
    assert streams.stream_cpus("gw4", allowed, 1, 5) == {9}
    assert streams.stream_cpus("gw2", allowed, 2, 2) == {1, 3}  # a crashed gw0's replacement


def test_too_few_cpus_or_a_bad_setting_says_what_is_allowed():
    with pytest.raises(ValueError, match=r"stream 2 needs CPUs 3-4 .* may use 3 \(\[0, 1, 2\]\)"):
        streams.check_streams(2, 2, {0, 1, 2})
    streams.check_streams(2, 2, {0, 1, 2, 3})
    with pytest.raises(ValueError, match=r"stream 3 needs CPU 3 of 1 per stream"):
        streams.check_streams(3, 1, {0, 1})
    with pytest.raises(ValueError, match="not a pytest-xdist worker"):
        streams.stream_cpus("master", {0, 1}, 1, 1)
    assert streams.cpus_per_stream(None) == 2 and streams.cpus_per_stream("3") == 3
    for bad in ("0", "-1", "two", "1.5"):
        with pytest.raises(ValueError, match=r"TEST_STREAM_CPUS=.*1 or more"):
            streams.cpus_per_stream(bad)


def test_the_files_sharing_the_quick_reproduction_are_one_group():
    assert streams.group_of("/ci/repo/tests/paper/test_reproduce.py") == streams.SHARED_GROUP
    assert streams.group_of("/ci/repo/tests/cluster/test_ray_cluster.py") == streams.SHARED_GROUP
    assert streams.group_of("/ci/repo/tests/e2e/test_hall.py") == "e2e/test_hall.py"


def _run_probe(tmp_path: Path, per_stream: str) -> subprocess.CompletedProcess:
    env = {**os.environ, streams.STREAMS_ENV: "2", streams.CPUS_ENV: per_stream, "STREAMS_PROBE_OUT": str(tmp_path)}
    args = ["-n", "2", "--dist", "loadgroup", "-m", "alone", "-p", "no:cacheprovider", PROBE]
    return subprocess.run(
        [sys.executable, "-m", "pytest", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="two streams of one CPU need two CPUs")
def test_two_streams_keep_to_cpus_of_their_own_and_so_do_their_children(tmp_path):
    first, second = sorted(os.sched_getaffinity(0))[:2]
    r = _run_probe(tmp_path, "1")
    assert r.returncode == 0, r.stdout[-3000:]
    seen = sorted((json.loads((tmp_path / f"{g}.json").read_text()) for g in "ab"), key=lambda s: s["worker"])
    assert [s["worker"] for s in seen] == ["gw0", "gw1"]  # a stream each
    assert [s["cpus"] for s in seen] == [[first], [second]]
    assert [s["child"] for s in seen] == [[first], [second]]  # a process a test starts keeps its stream's CPU


def test_streams_asking_for_more_cpus_than_there_are_stop_and_say_so(tmp_path):
    many = str(len(os.sched_getaffinity(0)))  # two streams of all the CPUs: the second has none
    r = _run_probe(tmp_path, many)
    assert r.returncode == pytest.ExitCode.USAGE_ERROR, (r.stdout + r.stderr)[-3000:]
    assert "stream 2 needs CPUs" in r.stderr, r.stderr[-3000:]
    assert not any(tmp_path.iterdir())  # no test ran
