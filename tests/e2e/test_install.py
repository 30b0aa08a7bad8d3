"""The package as a user installs it: a fresh venv, ``pip install -c requirements.txt .`` (the pinned lock as
constraints), then ``scansnap`` from a folder outside the checkout with nothing of it on ``PYTHONPATH``: the
presets, the dashboard's ``/healthz``, the quick reproduction; and ``pip wheel --no-deps .`` builds one wheel
that holds the presets, the CSS and the server's settings."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

from bench.webserver import free_port
from scansnap.paper.presets import load_presets

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
HEALTH_WAIT_S = 180  # a guard: a fresh venv's first start compiles the bytecode of what it imports


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the venv's ``scansnap`` script, a folder outside the checkout, an environment without the checkout)."""
    base = tmp_path_factory.mktemp("install")
    src = base / "src"  # a copy of the tracked files: what a fresh clone holds
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    for f in files:
        if (ROOT / f).is_file():
            (src / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / f, src / f)
    venv = base / "v"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, "-c", str(src / "requirements.txt"), str(src)], check=True, timeout=1200)
    away = base / "elsewhere"
    away.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SCANSNAP_DATA_DIR")}
    return venv / "bin" / "scansnap", away, env, src


def test_the_installed_script_lists_every_preset(installed):
    script, away, env, _ = installed
    out = subprocess.run([str(script), "presets"], cwd=away, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    listed = {line.split()[0] for line in out.stdout.splitlines() if line and not line[0].isspace() and line[0] != "#"}
    expected = set(load_presets()) | set(load_presets("text"))
    assert listed == expected, listed ^ expected


def test_scansnap_lab_serves_the_dashboard_from_any_folder(installed):
    """``scansnap lab --server.port P`` answers /healthz 200, its store in the folder it was started in."""
    script, away, env, _ = installed
    port = free_port()
    log = open(away / "lab.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [str(script), "lab", "--server.port", str(port), "--server.address", "127.0.0.1"],
        cwd=away,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        answer = _health(f"http://127.0.0.1:{port}/healthz", proc)
        assert answer["ok"] is True, answer
        assert (away / "data" / "runs.sqlite").is_file()
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()


def _health(url: str, proc: subprocess.Popen) -> dict:
    end = time.monotonic() + HEALTH_WAIT_S
    while time.monotonic() < end:
        assert proc.poll() is None, "the dashboard's server exited"
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return json.loads(r.read())
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"no answer from {url} in {HEALTH_WAIT_S} s")


def test_the_installed_quick_reproduction_passes(installed):
    script, away, env, _ = installed
    out = subprocess.run(
        [str(script), "reproduce", "--quick", "--out", str(away / "report")],
        cwd=away,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert (away / "report" / "report.html").is_file()
    assert json.loads((away / "report" / "verdicts.json").read_text())


def test_one_wheel_holds_the_presets_the_css_and_the_server_settings(installed, tmp_path):
    _, _, env, src = installed
    python = installed[0].with_name("python")
    wheels = tmp_path / "wheels"
    subprocess.run(
        [str(python), "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels), str(src)],
        env=env,
        check=True,
        timeout=600,
    )
    (wheel,) = wheels.glob("scansnap-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {f"scansnap/assets/presets/{p.relative_to(src / 'scansnap/assets/presets')}" for p in _presets(src)}
    assert shipped and shipped <= names, shipped - names
    assert {"scansnap/assets/style.css", "scansnap/assets/live.css", "scansnap/.streamlit/config.toml"} <= names
    assert not any(n.startswith(("tests/", "bench/")) for n in names)


def _presets(src: Path) -> list[Path]:
    return sorted((src / "scansnap" / "assets" / "presets").rglob("*.json"))
