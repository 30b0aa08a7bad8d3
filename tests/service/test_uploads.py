"""Uploads (scansnap.service.uploads): size limits, UTF-8, JSON/CSV schema errors with clear messages, the
CSV round trip, property tests over arbitrary bytes and CSV-like text, and the Lab's uploaders."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scansnap.core.config import ConfigError
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.service.table_upload import MAX_CSV_BYTES, MAX_CSV_ROWS, table_from_csv, table_to_csv
from scansnap.paper.presets import get_preset
from scansnap.service.facade import get_service
from scansnap.service.uploads import MAX_CONFIG_BYTES
from tests.apphelp import open_share_box
from tests.apphelp import run_app as app

ROOT = Path(__file__).resolve().parents[2]
FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def config_from_upload(data_dir):
    """The facade's upload of a synthetic run's config."""
    return lambda data: get_service(data_dir).config_from_upload(data, "synthetic")


def _error(fn, *args) -> str:
    with pytest.raises(ConfigError) as info:
        fn(*args)
    msg = str(info.value)
    assert msg and "Traceback" not in msg and "\n" not in msg
    return msg


# ------------------------------------------------------------------------------ config JSON
def test_valid_config_round_trips(config_from_upload):
    cfg = get_preset("syn-small").config.with_overrides({"optim.steps": "7", "replicas.seeds": "[3]"})
    assert config_from_upload(cfg.to_json().encode()) == cfg
    assert config_from_upload(b"\xef\xbb\xbf" + cfg.to_json().encode()) == cfg  # a UTF-8 BOM is fine


def test_config_errors_are_one_clear_message(config_from_upload):
    assert "262,144 bytes" in _error(config_from_upload, b" " * (MAX_CONFIG_BYTES + 1))
    assert str(MAX_CONFIG_BYTES + 1) in _error(config_from_upload, b" " * (MAX_CONFIG_BYTES + 1)).replace(",", "")
    assert "not UTF-8" in _error(config_from_upload, b'{"name": "\xff"}')
    assert "not valid JSON" in _error(config_from_upload, b"{nope")
    assert "must be an object" in _error(config_from_upload, b"[1, 2]")
    assert "optim.momentum" in _error(config_from_upload, b'{"optim": {"momentum": 1.5}}')
    assert "unknown key" in _error(config_from_upload, b'{"optim": {"lr": 1}}')
    assert "number too long" in _error(config_from_upload, b'{"name": ' + b"1" * 5000 + b"}")  # int digit limit
    assert "JSON" in _error(config_from_upload, b"[" * 50_000 + b"]" * 50_000)
    big = {"optim": {"batch": 65536, "steps": 10**7}, "replicas": {"seeds": list(range(100))}}
    assert "limit" in _error(config_from_upload, json.dumps(big).encode())  # over the run budget


# ------------------------------------------------------------------------------ CSV
def test_csv_with_and_without_header():
    want = ([[0.5, 0.5, 0.0], [0.0, 0.25, 0.75]], [0, 0])
    assert table_from_csv(b"psi,a,b,c\n0,0.5,0.5,0\n0,0,0.25,0.75\n") == want
    assert table_from_csv(b"0,0.5,0.5,\r\n\r\n0,,0.25,0.75\r\n") == want  # CRLF, blank line, empty = 0
    assert table_from_csv(b"\xef\xbb\xbf PSI ,x,y,z\n0,0.5,0.5,0\n0,0,0.25,0.75") == want


def test_csv_round_trip_of_a_preset_table():
    from scansnap.kinds.synthetic.science.data import build_problem

    pb = build_problem(get_preset("syn-small").config.data)
    table, psi = pb.P.tolist(), pb.psi.tolist()
    psi = [sorted(set(psi)).index(q) for q in psi]  # query indices 0..Q-1
    assert table_from_csv(table_to_csv(table, psi).encode()) == (table, psi)


def test_csv_errors_name_row_column_and_what_is_allowed():
    assert "524,288 bytes" in _error(table_from_csv, b"0,1\n" * (MAX_CSV_BYTES // 4 + 1))
    assert "not UTF-8" in _error(table_from_csv, b"0,1\n0,\xff\n")
    assert "no data rows" in _error(table_from_csv, b"psi,l0\n\n")
    assert "no data rows" in _error(table_from_csv, b"")
    msg = _error(table_from_csv, b"psi,l0,l1\n0,1,2\n0,x,1\n")
    assert "row 3, column 2 (token l0)" in msg and "'x'" in msg and "finite numbers ≥ 0" in msg
    assert "row 2, column 3" in _error(table_from_csv, b"psi,l0,l1\n0,1,-2\n")
    assert "row 1, column 3" in _error(table_from_csv, b"0,1,nan\n")
    assert "row 1, column 2" in _error(table_from_csv, b"0,inf\n")
    msg = _error(table_from_csv, b"0.5,1\n")
    assert "row 1, column 1 (psi)" in msg and "integer from 0" in msg
    assert "row 2 has 2 columns; every row needs 3" in _error(table_from_csv, b"0,1,1\n0,1\n")
    assert "need psi and at least one token column" in _error(table_from_csv, b"0\n")
    assert "psi must use every query index" in _error(table_from_csv, b"0,1\n2,1\n")
    assert "no positive mass" in _error(table_from_csv, b"0,0,0\n")
    assert f"at most {MAX_CSV_ROWS}" in _error(table_from_csv, b"0,1\n" * (MAX_CSV_ROWS + 2))
    assert "token columns" in _error(table_from_csv, b"0" + b",1" * 20_001 + b"\n")
    assert "cannot be read" in _error(table_from_csv, b'0,"' + b"1" * 200_000 + b'"\n')  # csv field limit


# ------------------------------------------------------------------------------ properties
def _parsed(fn, *args):
    """What ``fn`` returns, or the ConfigError it raises (any other exception fails the test).  How long
    the checks take on the worst inputs: bench/upload_checks.py."""
    try:
        return fn(*args)
    except ConfigError as e:
        return e


def _valid_table(out) -> None:
    if isinstance(out, ConfigError):
        assert str(out)
        return
    table, psi = out
    cfg = RunConfig.from_dict({"data": {"source": "table", "table": table, "psi": psi}})
    assert [list(r) for r in cfg.data.table] == table and list(cfg.data.psi) == psi


@FAST
@given(st.binary(max_size=2000))
def test_config_from_arbitrary_bytes(config_from_upload, data):
    out = _parsed(config_from_upload, data)
    assert isinstance(out, RunConfig | ConfigError)


@FAST
@given(st.text(alphabet='{}[]":,0123456789.-eE trufalsn\\x', max_size=300))
def test_config_from_json_like_text(config_from_upload, text):
    out = _parsed(config_from_upload, text.encode())
    assert isinstance(out, RunConfig | ConfigError)


@FAST
@given(st.binary(max_size=2000))
def test_table_from_arbitrary_bytes(data):
    _valid_table(_parsed(table_from_csv, data))


cells = st.one_of(
    st.sampled_from(
        ["", " ", "0", "1", "0.5", "psi", "-1", "nan", "inf", "1e309", "1e-400", "x", '"', '"1"', "1_0", "٣", "\x00"]
    ),
    st.integers(-3, 5).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=4),
)
csv_like = st.lists(st.lists(cells, min_size=0, max_size=6), max_size=8).map(
    lambda rows: "\n".join(",".join(r) for r in rows)
)


@FAST
@given(csv_like, st.sampled_from(["", "psi,a,b\n", "\ufeff"]), st.sampled_from(["\n", "\r\n", "\r"]))
def test_table_from_csv_like_text(text, head, newline):
    _valid_table(_parsed(table_from_csv, (head + text).replace("\n", newline).encode()))


@FAST
@given(st.lists(st.lists(st.floats(0, 1e6), min_size=3, max_size=3), min_size=1, max_size=6), st.data())
def test_csv_round_trip_is_exact(table, data):
    table = [[*row[:-1], row[-1] + 1.0] for row in table]  # positive mass in every row
    psi = [i % 2 for i in range(len(table))] if len(table) > 1 else [0]
    psi = data.draw(st.permutations(psi))
    assert table_from_csv(table_to_csv(table, psi).encode()) == (table, psi)


def test_uploads_never_unpickle():
    """The parsers use json and csv only: no pickle, numpy.load or torch.load anywhere near them."""
    tree = ast.parse((ROOT / "scansnap" / "service" / "uploads.py").read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert imported <= {
        "__future__",
        "csv",
        "io",
        "math",
        "typing",
        "scansnap.service.budget",
        "scansnap.core.config",
        "scansnap.kinds.synthetic.science.config",
    }
    calls = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    assert "load" not in calls  # json.loads is fine; np.load / torch.load / pickle.load are not


# ------------------------------------------------------------------------------ the Lab's uploaders
def _uploader(at, label: str):
    found = [u for u in at.get("file_uploader") if u.label == label]
    assert found, [u.label for u in at.get("file_uploader")]
    return found[0]


def test_lab_config_upload_replaces_the_config_and_a_bad_one_keeps_it(data_dir):
    at = app()
    before = at.session_state["lab.cfg"]
    bad = _uploader(at, "Load a config (JSON)")
    bad.set_value(("bad.json", b'{"optim": {"momentum": 3}}', "application/json")).run()
    assert not at.exception
    assert any("bad.json" in e.value and "optim.momentum" in e.value for e in at.sidebar.error)
    assert at.session_state["lab.cfg"] == before
    cfg = get_preset("theorem4").config.with_overrides({"optim.steps": "9", "replicas.seeds": "[5]"})
    _uploader(at, "Load a config (JSON)").set_value(("good.json", cfg.to_json().encode(), "application/json")).run()
    assert not at.exception and not at.sidebar.error
    assert at.session_state["lab.cfg"] == cfg.to_dict()
    assert at.query_params["optim.steps"] in ("9", ["9"])  # the URL follows, as after a preset change
    assert json.loads(next(c.value for c in open_share_box(at).code if c.language == "json")) == cfg.to_dict()
    big = b" " * (MAX_CONFIG_BYTES + 10) + b"{}"
    _uploader(at, "Load a config (JSON)").set_value(("big.json", big, "application/json")).run()
    assert any("262,144 bytes" in e.value for e in at.sidebar.error)
    assert at.session_state["lab.cfg"] == cfg.to_dict()


def test_lab_csv_upload_and_download_in_table_mode(data_dir):
    at = app()
    next(w for w in at.sidebar.selectbox if w.label == "P(l|n) source").set_value("table").run()
    assert not at.exception
    assert [b for b in at.get("download_button") if b.proto.label == "Download P(l|n) as CSV"]
    up = _uploader(at, "Load P(l|n) from CSV")
    up.set_value(("p.csv", b"psi,a,b\n0,1,1\n1,0,2\n0,3,0\n", "text/csv")).run()
    assert not at.exception and not at.sidebar.error
    data = at.session_state["lab.cfg"]["data"]
    assert data["table"] == [[1.0, 1.0], [0.0, 2.0], [3.0, 0.0]] and data["psi"] == [0, 1, 0]
    assert not at.button(key="btn.start").disabled
    _uploader(at, "Load P(l|n) from CSV").set_value(("q.csv", b"psi,a\n0,-1\n", "text/csv")).run()
    assert any("row 2, column 2" in e.value for e in at.sidebar.error)
    assert at.session_state["lab.cfg"]["data"]["table"] == [[1.0, 1.0], [0.0, 2.0], [3.0, 0.0]]


# ------------------------------------------------------------------------------ any file name
STORY = b"the cat sat on the mat and the dog ran in the park . " * 600  # 7,800 words of UTF-8 text


def _lab_in_table_mode():
    at = app()
    next(w for w in at.sidebar.selectbox if w.label == "P(l|n) source").set_value("table").run()
    return at


def _text_page_with_the_uploader():
    at = app().switch_page("kinds/text/ui/page.py").run()
    next(w for w in at.sidebar.selectbox if w.label == "corpus").set_value("upload").run()
    return at


def _all_errors(at) -> str:
    return " ".join(e.value for e in at.error).replace("\\", "")


@pytest.mark.parametrize(
    ("opened", "label", "wrong", "right", "says"),
    [
        (
            app,
            "Load a config (JSON)",
            "config.exe",
            "config.json",
            "'config.exe' is not a .json file: upload a run config",
        ),
        (
            _lab_in_table_mode,
            "Load P(l|n) from CSV",
            "table.txt",
            "table.CSV",
            "'table.txt' is not a .csv file: upload P(l|n)",
        ),
        (
            _text_page_with_the_uploader,
            "a .txt file (UTF-8 English text)",
            "notes.exe",
            "notes.txt",
            "'notes.exe' is not a .txt file: upload a UTF-8 .txt file",
        ),
    ],
)
def test_any_file_name_gets_a_message_and_the_next_upload_works(data_dir, opened, label, wrong, right, says):
    """Every uploader takes a file of any name (a client need not honour the browser's file filter): a wrong
    name is one message naming the file and what is allowed, never Streamlit's generic error, and the next
    upload, with the right name, is taken without a reload."""
    data = {
        ".json": get_preset("theorem4").config.with_overrides({"optim.steps": "9"}).to_json().encode(),
        ".csv": b"psi,a,b\n0,1,1\n1,0,2\n",
        ".txt": STORY,
    }[right[right.rindex(".") :].lower()]
    at = opened()
    _uploader(at, label).set_value((wrong, data, "application/octet-stream")).run()
    assert not at.exception, at.exception
    assert says in _all_errors(at), _all_errors(at)
    _uploader(at, label).set_value((right, data, "application/octet-stream")).run()
    assert not at.exception and says not in _all_errors(at), _all_errors(at)
    if right.endswith(".json"):
        assert at.session_state["lab.cfg"]["optim"]["steps"] == 9
    elif right.endswith(".CSV"):
        assert at.session_state["lab.cfg"]["data"]["psi"] == [0, 1]
    else:
        assert at.session_state["text.cfg"]["data"]["upload_name"].endswith("-notes.txt")
