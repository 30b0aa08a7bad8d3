"""The service facade with real-text runs: budget and corpus refusals before anything is stored,
a run trained in a worker process, stop → resume → finished, re-run, publish, delete; uploads and
the operator's corpus folder (a path from a browser never reaches the filesystem on its own)."""

from __future__ import annotations

from dataclasses import replace
from multiprocessing import forkserver
from pathlib import Path

import pytest

from scansnap.core.config import ConfigError
from scansnap.kinds.text.service.corpus_access import CORPUS_DIR_ENV, read_upload, save_upload
from scansnap.paper.presets import get_preset
from scansnap.service.facade import Actor, LabService, ServiceError
from scansnap.service.jobs import JobManager
from scansnap.service.store import RunStore
from scansnap.service.worker import worker_context
from tests.apphelp import wait_for
from tests.guards import GUARD_S

SMALL = {
    "data.vocab_size": "500",
    "model.d_model": "16",
    "model.d_ff": "16",
    "model.device": "cpu",
    "optim.batch": "4",
    "optim.bptt": "8",
    "optim.steps": "60",
    "probe.val_windows": "2",
    "snapshots.linear_every": "10",
    "snapshots.log_count": "0",
}
ME, OTHER = Actor("me"), Actor("other")


def cfg(**extra: str):
    return get_preset("text-fig7-1layer", "text").config.with_overrides(SMALL | extra)


@pytest.fixture
def svc(tmp_path):
    # the workers' fork server copies the environment it starts with: start it now, before a test's
    # monkeypatch.setenv (a budget limit) could reach every later worker of this process
    worker_context()
    forkserver.ensure_running()
    jobs = JobManager(RunStore(tmp_path / "data"), max_concurrent=1)
    yield LabService(jobs)
    jobs.shutdown()


def test_over_budget_is_refused_with_its_estimate_and_nothing_is_stored(svc, monkeypatch):
    monkeypatch.setenv("SCANSNAP_MAX_RUN_MB", "500")  # the worker process alone is 400 MB (budget.WORKER_MB)
    big = cfg(**{"data.vocab_size": "30000", "model.d_model": "200", "model.d_ff": "200", "optim.batch": "20"})
    with pytest.raises(ServiceError, match=r"over the limit of 500 MB per run \(SCANSNAP_MAX_RUN_MB\)"):
        svc.submit(big, ME)
    with pytest.raises(ServiceError, match=r"reduce data\.vocab_size"):
        svc.check(big)
    monkeypatch.setenv("SCANSNAP_MAX_RUN_MB", "2048")  # the small run's memory passes: its work is what is refused
    monkeypatch.setenv("SCANSNAP_MAX_TEXT_FLOP", "1e6")  # this run: 1.5e8 (text_budget.estimate)
    with pytest.raises(ServiceError, match="floating-point operations"):
        svc.submit(cfg(), ME)
    assert svc.runs() == []


def test_a_corpus_too_short_for_the_windows_is_refused_before_queueing(svc):
    with pytest.raises(ServiceError, match=r"probe\.eval_batch"):
        svc.submit(cfg(**{"optim.bptt": "4096", "probe.eval_batch": "1024"}), ME)
    assert svc.runs() == []


def test_submit_trains_in_a_worker_then_stop_resume_rerun_publish_delete(svc):
    rid = svc.submit(cfg(**{"optim.steps": "120"}), ME, name="text", paused=True)
    info = svc.run(rid)
    assert info["kind"] == "text" and info["owner"] == "me"
    svc.step(rid, 25, ME)  # a paused run takes the granted steps only
    wait_for(lambda: svc.status(rid).step >= 25, GUARD_S)
    with pytest.raises(ServiceError, match="only the browser that started"):
        svc.stop(rid, OTHER)
    svc.stop(rid, ME)
    assert svc.jobs.wait(rid, GUARD_S) == "stopped"
    stopped_at = svc.run(rid)["last_step"]
    again = svc.resume_stored(rid, ME)
    assert again == rid and svc.jobs.wait(rid, GUARD_S) == "finished"
    assert svc.run(rid)["last_step"] == 120 and stopped_at < 120
    assert svc.store.statics(rid)["probe_window_tokens"].shape == (8,)
    copy = svc.rerun(rid, OTHER)
    assert svc.run(copy)["kind"] == "text" and svc.run(copy)["owner"] == "other"
    svc.stop(copy, OTHER)
    svc.publish(rid, True, ME)
    assert svc.store.get_run(rid)["published"]
    svc.delete(rid, ME)
    assert svc.run(rid) is None


def test_live_broadcasts_list_each_kind_on_its_own_page(svc):
    text = svc.submit(cfg(**{"optim.steps": "100000"}), ME, paused=True)
    svc.publish(text, True, ME)
    assert [r["id"] for r in svc.live_broadcasts(kind="text")] == [text]
    assert svc.live_broadcasts() == []  # the Lab lists synthetic runs only
    svc.stop(text, ME)


def _wikitext(folder: Path) -> Path:
    folder.mkdir(parents=True)
    line = " = Heading = \n the cat sat on the mat . the dog ran to the park , and the cat ran too . \n"
    (folder / "wiki.train.tokens").write_text(line * 400)
    (folder / "wiki.valid.tokens").write_text(line * 100)
    return folder


def test_wikitext_folders_only_inside_the_operators_corpus_dir(svc, tmp_path, monkeypatch):
    outside = _wikitext(tmp_path / "elsewhere" / "wt")
    wikitext = cfg(**{"data.source": "wikitext-dir", "data.path": str(outside)})
    monkeypatch.delenv(CORPUS_DIR_ENV, raising=False)
    with pytest.raises(ServiceError, match=f"no corpus folder .*{CORPUS_DIR_ENV}"):
        svc.submit(wikitext, ME)
    root = tmp_path / "corpora"
    _wikitext(root / "wikitext-2")
    monkeypatch.setenv(CORPUS_DIR_ENV, str(root))
    assert svc.door("text").wikitext_folders() == ["wikitext-2"]
    for path in (str(outside), "../elsewhere/wt", "/etc"):
        with pytest.raises(ServiceError, match="is not a WikiText folder of this server; allowed: wikitext-2"):
            svc.check(cfg(**{"data.source": "wikitext-dir", "data.path": path}))
    ok = cfg(**{"data.source": "wikitext-dir", "data.path": "wikitext-2", "data.vocab_size": "50"})
    assert svc.door("text").text_corpus(ok.data)["train_tokens"] > 1000
    rid = svc.submit(ok, ME, paused=True)
    assert svc.run(rid)["config_json"].count(str(root / "wikitext-2")) == 1  # stored resolved
    svc.stop(rid, ME)


def test_huggingface_is_command_line_only(svc):
    with pytest.raises(ServiceError, match="the dashboard does not; use the command line"):
        svc.submit(cfg(**{"data.source": "huggingface"}), ME)


def test_uploads_are_checked_kept_once_and_read_back_by_name_only(svc, tmp_path):
    words = ("In the beginning the lab trained a small model on plain words . " * 900).encode()
    name = svc.door("text").save_upload("my notes.txt", words)
    assert name.endswith("-my_notes.txt") and svc.door("text").save_upload("again.txt", words) != name
    assert read_upload(svc.store.data_dir, name) == words
    assert (
        svc.door("text").text_corpus(cfg(**{"data.source": "upload", "data.upload_name": name}).data)["train_tokens"]
        > 5000
    )
    with pytest.raises(ServiceError, match="not UTF-8 text: invalid byte 0xff"):
        svc.door("text").save_upload("bad.txt", b"ok \xff\xfe")
    with pytest.raises(ServiceError, match="at least 5,000 are needed"):
        svc.door("text").save_upload("short.txt", b"too short")
    for bad in ("../runs.sqlite", "0123456789abcdef-../../x", "/etc/passwd"):
        with pytest.raises(ConfigError, match="is not the name of an uploaded text"):
            read_upload(svc.store.data_dir, bad)


def test_uploads_stop_at_the_servers_quota(tmp_path, monkeypatch):
    monkeypatch.setenv("SCANSNAP_MAX_UPLOADS_MB", "0.1")
    text = ("word " * 6000).encode()  # 30 KB
    save_upload(tmp_path, "a.txt", text)
    save_upload(tmp_path, "b.txt", text + b"b")
    with pytest.raises(ConfigError, match="at most 0 MiB of uploaded texts"):
        save_upload(tmp_path, "c.txt", text * 2)


def test_one_browser_keeps_its_share_of_uploads_and_unused_ones_expire(tmp_path, monkeypatch):
    """Finding 11 of the budgets issue: one session filled the upload store (1,024 MiB) in 3.5 min and
    nothing expired.  A visitor keeps at most SCANSNAP_MAX_OWNER_UPLOADS_MB; an upload no stored run names
    is removed once it is SCANSNAP_UPLOAD_KEEP_S old, when another upload comes; one a run names stays."""
    import os
    import time

    from scansnap.kinds.text.service.corpus_access import expire_uploads, uploads_dir

    monkeypatch.setenv("SCANSNAP_MAX_OWNER_UPLOADS_MB", "0.05")  # 52 KB: one 30 KB text, not two
    text = ("word " * 6000).encode()
    a = save_upload(tmp_path, "a.txt", text, owner="browser-1")
    with pytest.raises(ConfigError, match=r"one browser may keep at most 0 MiB .*SCANSNAP_MAX_OWNER_UPLOADS_MB"):
        save_upload(tmp_path, "b.txt", text + b" b", owner="browser-1")
    b = save_upload(tmp_path, "b.txt", text + b" b", owner="browser-2")  # another browser's share
    c = save_upload(tmp_path, "c.txt", text + b" c")  # the operator (no owner): no share
    hour_ago = time.time() - 2 * 3600
    for name in (a, b, c):
        os.utime(uploads_dir(tmp_path) / name, (hour_ago, hour_ago))
    assert sorted(expire_uploads(tmp_path, in_use={b})) == sorted([a, c])  # b: a stored run trains on it
    assert sorted(p.name for p in uploads_dir(tmp_path).iterdir() if not p.name.startswith(".")) == [b]
    save_upload(tmp_path, "d.txt", text + b" d", owner="browser-1")  # browser-1's share is free again


def test_the_facade_passes_the_visitor_and_the_texts_runs_use(svc, monkeypatch):
    monkeypatch.setenv("SCANSNAP_MAX_OWNER_UPLOADS_MB", "0.05")
    text = ("word " * 6000).encode()
    name = svc.door("text").save_upload("a.txt", text, ME)
    svc.submit(cfg(**{"data.source": "upload", "data.upload_name": name}), ME, paused=True)
    assert svc.store.upload_names() == {name}
    with pytest.raises(ServiceError, match="SCANSNAP_MAX_OWNER_UPLOADS_MB"):
        svc.door("text").save_upload("b.txt", text + b" b", ME)


def test_a_kind_reaches_its_own_methods_its_data_and_its_files_through_its_run_kind(svc, monkeypatch):
    """The text kind's door, its items' corpus reader and the files a run reads come from its RunKind; a kind
    without a door is refused with a clear ServiceError; the synthetic kind's items read no data, its runs no
    files."""
    from scansnap.kinds.text.service.corpora import encoded_corpus
    from scansnap.kinds.text.service.door import TextDoor
    from scansnap.service import run_kinds
    from scansnap.service.run_kinds import item_loader, run_files

    assert isinstance(svc.door("text"), TextDoor) and svc.door("text") is svc.door("text")
    monkeypatch.setitem(run_kinds.KINDS, "synthetic", replace(run_kinds.KINDS["synthetic"], door=None))
    with pytest.raises(ServiceError, match="a synthetic run has no methods of its own"):
        svc.door("synthetic")
    assert item_loader("fig7") is encoded_corpus and item_loader("joma-real") is encoded_corpus
    assert item_loader("fig4") is None
    upload = cfg(**{"data.source": "upload", "data.upload_name": "abc-notes.txt"})
    assert run_files({"kind": "text", "config_json": upload.to_json()}) == [Path("uploads/text/abc-notes.txt")]
    assert run_files({"kind": "text", "config_json": cfg().to_json()}) == []
    syn = get_preset("syn-small").config
    assert run_files({"kind": "synthetic", "config_json": syn.to_json()}) == []
