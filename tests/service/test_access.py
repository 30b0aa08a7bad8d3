"""Access control (scansnap.service.access): runs belong to the browser that started them, the operator key,
stable owner ids from the XSRF cookie; recovery of interrupted runs; safety of URL/UI input (paths, Markdown)."""

from __future__ import annotations

import binascii
import json
import os
import re
import sqlite3
import subprocess
import tempfile
import zipfile
from io import BytesIO
from pathlib import Path

import pytest

from scansnap.kinds.synthetic.ui.exports import html_report
from scansnap.paper.presets import get_preset
from scansnap.service import access
from scansnap.service.access import browser_owner, can_manage, operator_configured, operator_ok, owner_salt, xsrf_token
from scansnap.service.export import zipped_export
from scansnap.service.jobs import get_manager
from scansnap.service.runner import RunJob
from scansnap.service.store import RunStore
from scansnap.ui.text import WORD_JOINER, plain
from tests.apphelp import run_app as app
from tests.guards import GUARD_S

QUICK = get_preset("syn-small").config.with_overrides({"optim.steps": "20"})


# ------------------------------------------------------------------------------ policy
def test_owner_or_operator_manages():
    assert can_manage("browser-a", "browser-a", operator=False)
    assert not can_manage("browser-a", "browser-b", operator=False)
    assert can_manage("browser-a", "browser-b", operator=True)
    assert not can_manage(None, "browser-a", operator=False)  # CLI runs: the operator only
    assert can_manage(None, "browser-a", operator=True)
    assert not can_manage("", "", operator=False)


def test_operator_key(monkeypatch):
    monkeypatch.delenv(access.OPERATOR_ENV, raising=False)
    assert not operator_configured() and not operator_ok("") and not operator_ok("anything")
    monkeypatch.setenv(access.OPERATOR_ENV, "")
    assert not operator_configured() and not operator_ok("")
    monkeypatch.setenv(access.OPERATOR_ENV, "letmein")
    assert operator_configured() and operator_ok("letmein")
    for wrong in ("", "letmei", "letmein ", "LETMEIN", "letmeinletmein", "lètmein"):
        assert not operator_ok(wrong), wrong


def _cookie(token: bytes, mask: bytes, ts: int = 1700000000) -> str:
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(token))
    return f"2|{binascii.b2a_hex(mask).decode()}|{binascii.b2a_hex(masked).decode()}|{ts}"


def test_browser_owner_is_stable_across_remasking_and_hides_the_cookie():
    token, salt = os.urandom(16), os.urandom(32)
    a, b = _cookie(token, b"\x01\x02\x03\x04"), _cookie(token, b"\xff\x00\xaa\x55", 1700000001)
    assert a != b and xsrf_token(a) == xsrf_token(b) == token
    owner = browser_owner(a, salt)
    assert owner == browser_owner(b, salt) and owner.startswith("browser-")
    assert token.hex() not in owner and binascii.b2a_hex(token).decode() not in owner
    assert browser_owner(_cookie(os.urandom(16), b"abcd"), salt) != owner  # another browser
    assert browser_owner(a, os.urandom(32)) != owner  # another server secret
    assert browser_owner(None, salt) is None and browser_owner("", salt) is None
    assert xsrf_token("2|zz|11|1") is None and xsrf_token("2|0102|") is None
    assert xsrf_token("abc") == b"abc"  # an unmasked (version 1) token is used as it is


def test_owner_salt_is_created_once_per_data_dir(tmp_path):
    owner_salt.cache_clear()
    salt = owner_salt(str(tmp_path))
    path = tmp_path / access.SALT_FILE
    assert len(salt) == 32 and path.read_bytes() == salt and (path.stat().st_mode & 0o777) == 0o600
    owner_salt.cache_clear()
    assert owner_salt(str(tmp_path)) == salt  # a restarted server keeps its owners
    assert owner_salt(str(tmp_path / "other")) != salt
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left behind


# ------------------------------------------------------------------------------ helpers
def _owner_of(at) -> str:
    at.switch_page("app_pages/runs.py").run()  # the Runs page asks for this session's owner id
    return at.session_state["owner"]


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _interrupted(store: RunStore, owner: str | None) -> str:
    """A run whose writer died (a stored run with a dead pid), marked interrupted as on restart."""
    rid = RunJob(QUICK, store, name="crashed", owner=owner).run_id
    con = sqlite3.connect(store.path)
    con.execute("UPDATE runs SET pid = ? WHERE id = ?", (_dead_pid(), rid))
    con.commit()
    con.close()
    assert rid in store.recover_interrupted()
    return rid


def _finished(store: RunStore, owner: str | None, name: str = "done") -> str:
    job = RunJob(QUICK, store, name=name, owner=owner)
    assert job.run() == "finished"
    return job.run_id


def _runs_page(at, rid: str):
    """``at`` on the Runs page with run ``rid`` picked."""
    at.switch_page("app_pages/runs.py").run()
    at.selectbox(key="runs.pick").set_value(rid).run()
    assert not at.exception
    return at


def _disabled(at, key: str) -> bool:
    return at.button(key=key).disabled


# ------------------------------------------------------------------------------ dashboard
def test_only_the_owner_manages_a_run(data_dir):
    store = get_manager(data_dir).store
    alice, bob = app(), app()
    mine, crashed = _finished(store, _owner_of(alice)), _interrupted(store, _owner_of(alice))
    assert _owner_of(alice) != _owner_of(bob)  # another session: another owner
    for at, allowed in ((alice, True), (bob, False)):
        _runs_page(at, mine)
        assert _disabled(at, "runs.rename") is not allowed
        assert at.checkbox(key="runs.sure").disabled is not allowed
        if allowed:
            at.checkbox(key="runs.sure").check().run()
            assert not _disabled(at, "runs.delete")
            at.checkbox(key="runs.sure").uncheck().run()
        assert _disabled(at, "runs.delete")
        assert at.get("download_button")  # everyone may export
        _runs_page(at, crashed)
        assert _disabled(at, "runs.ckpt") is not allowed
        assert not _disabled(at, "runs.rerun")  # re-running creates the viewer's own run
    assert any("Read-only" in c.value for c in bob.caption)
    assert store.get_run(mine) is not None and store.get_run(crashed)["status"] == "interrupted"


def test_operator_key_manages_every_run(data_dir, monkeypatch, operator_gate):
    store = get_manager(data_dir).store
    cli_run = _finished(store, None, name="from the CLI")
    monkeypatch.delenv(access.OPERATOR_ENV, raising=False)
    at = _runs_page(app(), cli_run)
    key = at.text_input(key="runs.opkey")
    assert key.disabled and "does not exist" in key.help
    assert _disabled(at, "runs.rename")
    monkeypatch.setenv(access.OPERATOR_ENV, "letmein")
    at.run()
    at.text_input(key="runs.opkey").input("wrong").run()
    assert _disabled(at, "runs.rename") and any("not the operator key" in e.value for e in at.sidebar.error)
    operator_gate[0] += 1.0  # the 1 s wait after a wrong key has passed (tests/ui/test_safety.py)
    at.text_input(key="runs.opkey").input("letmein").run()
    assert not _disabled(at, "runs.rename") and not at.checkbox(key="runs.sure").disabled
    assert any("Operator mode" in s.value for s in at.sidebar.success)
    at.text_input(key="runs.newname").input("renamed by the operator").run()
    at.button(key="runs.rename").click().run()
    assert store.get_run(cli_run)["name"] == "renamed by the operator"
    at.button(key="runs.opleave").click().run()
    _runs_page(at, cli_run)
    assert _disabled(at, "runs.rename") and not at.sidebar.error


def test_resume_an_interrupted_run_from_the_runs_page(data_dir):
    mgr = get_manager(data_dir)
    at = app()
    rid = _interrupted(mgr.store, _owner_of(at))
    _runs_page(at, rid)
    assert any("interrupted" in w.value for w in at.warning)
    at.button(key="runs.ckpt").click().run()
    assert not at.exception
    assert any(s.value.startswith("Resumed 'crashed' from step") for s in at.success), at.success
    assert at.session_state["runs.pick"] == rid  # still on screen, with "Open in the Lab"
    assert mgr.wait(rid, GUARD_S) == "finished"
    assert mgr.store.steps(rid)[-1] == QUICK.optim.steps


def test_rerun_from_scratch_is_a_new_run_of_ones_own(data_dir):
    mgr = get_manager(data_dir)
    rid = _interrupted(mgr.store, "browser-somebody-else")
    at = _runs_page(app(), rid)
    assert _disabled(at, "runs.ckpt")
    at.button(key="runs.rerun").click().run()
    new = at.session_state["runs.pick"]  # the new run is the one on screen
    assert new != rid and mgr.wait(new, GUARD_S) == "finished"
    assert mgr.store.get_run(new)["owner"] == at.session_state["owner"]
    assert mgr.store.get_run(new)["config_json"] == mgr.store.get_run(rid)["config_json"]
    assert mgr.store.get_run(rid)["status"] == "interrupted"  # the other browser's run is untouched


def test_lab_offers_recovery_of_the_interrupted_run_on_screen(data_dir):
    mgr = get_manager(data_dir)
    at = app()
    rid = _interrupted(mgr.store, _owner_of(at))
    at.switch_page("kinds/synthetic/ui/page.py")
    at.query_params["run"] = rid
    at.run()
    assert any("was interrupted" in w.value for w in at.warning)
    viewer = app({"run": rid})
    assert any("was interrupted" in w.value for w in viewer.warning)
    assert _disabled(viewer, "lab.resume") and not _disabled(viewer, "lab.rerun")
    assert not _disabled(at, "lab.resume")
    at.button(key="lab.resume").click().run()
    assert not at.exception and at.session_state["lab.run"] == rid
    assert mgr.wait(rid, GUARD_S) == "finished"
    at.run()
    assert not any("was interrupted" in w.value for w in at.warning)


def test_lab_controls_of_an_unpublished_run_belong_to_its_owner(data_dir):
    mgr = get_manager(data_dir)
    owner = app({"preset": "lecture", "speed": "5"})
    owner.button(key="btn.start").click().run()
    rid = owner.session_state["lab.run"]
    try:
        viewer = app({"run": rid})
        assert viewer.session_state["lab.run"] == rid and not mgr.store.get_run(rid)["published"]
        for key in ("btn.pause", "btn.stop", "btn.step"):
            assert _disabled(viewer, key), key
        assert not [t for t in viewer.toggle if t.label.startswith("📡 Publish")]
        assert not _disabled(owner, "btn.pause") and not _disabled(owner, "btn.stop")
        assert mgr.status(rid).status == "running"
    finally:
        mgr.stop(rid)
        mgr.wait(rid, GUARD_S)


# ------------------------------------------------------------------------------ path safety
@pytest.mark.parametrize("run", ["../../etc/passwd", "%2Fetc", "/etc", "..\\..\\x", "x'; DROP TABLE runs; --"])
def test_run_ids_from_the_url_never_reach_the_filesystem(data_dir, run):
    at = app({"run": run})
    assert not at.exception
    assert any("not in the run store" in w.value and plain(repr(run)) in w.value for w in at.warning)
    assert at.session_state["lab.run"] is None
    assert get_manager(data_dir).store.list_runs() is not None  # the store is intact
    sweep = app()
    sweep.switch_page("app_pages/sweep.py")
    sweep.query_params["run"] = run
    sweep.run()
    assert not sweep.exception and any("not in the run store" in w.value for w in sweep.warning)


def test_url_text_is_shown_as_typed_never_as_markdown(data_dir):
    evil = "![x](http://127.0.0.1:9/p.png)[click](http://127.0.0.1:9)"
    at = app({"preset": evil, "run": evil})
    assert not at.exception
    shown = " ".join(w.value for w in at.warning)
    assert "unknown preset" in shown and "not in the run store" in shown
    assert re.search(r"(?<!\\)[\[\]()!]", shown) is None  # every bracket is escaped: no link, no image
    assert r"\!\[x\]\(http://127.0.0.1:9/p.png\)" in shown.replace(WORD_JOINER, "")  # joiners: invisible
    assert "http://" not in shown  # a word joiner after the colon: no autolink either


def test_a_run_named_like_a_path_exports_only_inside_the_temporary_dir(tmp_path, monkeypatch):
    work, tmp = tmp_path / "a" / "b", tmp_path / "tmp"
    work.mkdir(parents=True)
    tmp.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    store = RunStore(tmp_path / "data")
    job = RunJob(QUICK.with_overrides({"name": "../../x"}), store, name="../../x")
    rid = job.run_id
    assert job.run() == "finished"
    before = sorted(p for p in tmp_path.rglob("*") if "data" not in p.parts)
    for fmt in ("csv", "parquet"):
        with zipfile.ZipFile(BytesIO(zipped_export(store, rid, fmt))) as zf:
            names = zf.namelist()
            want = ("config.json", "verdicts.json", f"trajectory.{fmt}", f"scalars.{fmt}", "run.json")
            assert sorted(names) == sorted(f"{rid}/{n}" for n in want)
            assert json.loads(zf.read(f"{rid}/config.json"))["name"] == "../../x"
    assert "../../x" in html_report(store, rid)
    after = sorted(p for p in tmp_path.rglob("*") if "data" not in p.parts)
    assert after == before and not list(tmp.iterdir())  # nothing written outside, the temp dir cleaned
    assert not (tmp_path / "x").exists() and not Path("../../x").exists()
    store.close()


def test_a_guesser_cannot_lock_the_operator_out(monkeypatch):
    """The finding: a visitor guessing every 0.5 s kept the server-wide back-off running, and the real operator
    got in 0 of 33 times in 240 s.  The back-off is per client: the guesser's fresh cookies share their address's
    wait, the operator from another address is never refused, and an operator's cookie (it gave the right key
    once) is not held by the wait of the address it shares with the guesser; the guesser still gets at most
    as many compared guesses in T seconds as the doubling waits (capped at 60 s) leave room for."""
    from scansnap.service.access import KeyGate, operator_delay

    monkeypatch.setenv("SCANSNAP_OPERATOR_KEY", "the-key")
    clock = [0.0]
    gate = KeyGate(clock=lambda: clock[0])
    assert gate.attempt("the-key", "operator-laptop", "10.0.0.9") == (True, 0.0)  # once, before the guessing
    compared, operator_in, newcomer_in = 0, 0, 0
    for i in range(480):  # 240 s, a guess every 0.5 s, each from a fresh cookie at the hall's address
        clock[0] = i * 0.5
        ok, wait = gate.attempt(f"guess-{i}", f"cookie-{i}", "10.0.0.9")
        assert not ok
        compared += wait == 0
        if i % 15 == 0:
            operator_in += gate.attempt("the-key", "operator-laptop", "10.0.0.9")[0]  # known cookie, same address
            newcomer_in += gate.attempt("the-key", f"phone-{i}", "10.0.0.77")[0]  # a new browser elsewhere
    assert operator_in == newcomer_in == 32
    room, t, f = 0, 0.0, 0
    while t < 240:  # guesses compared at 0, 1, 3, 7, 15, 31, 63, 123, 183 s: the waits 1, 2, 4 … 60 s
        room, f = room + 1, f + 1
        t += operator_delay(f)
    assert compared <= room == 9
    assert gate.wait_left("cookie-new", "10.0.0.9") > 0 and gate.wait_left("cookie-new", "10.0.0.77") == 0
