"""Every page opened with every parameter it reads, set to every kind of bad value: no page shows
Streamlit's generic error (an uncaught exception), and the Lab says what it ignored.

One AppTest session per page, its URL changed between runs (a student editing the address bar), so
the ~900 page runs take minutes, not tens of minutes."""

from __future__ import annotations

import pytest

from scansnap.core.config import flatten_dotted
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.ui.knobs import UI_PARAMS
from tests.apphelp import run_app

BAD = {
    "empty": "",
    "text": "abc",
    "nan": "nan",
    "inf": "inf",
    "-inf": "-inf",
    "1e309": "1e309",
    "30 digits": "1" * 30,
    "5000 digits": "9" * 5000,
    "truncated json": "[1,",
    "object": '{"a": 1}',
    "nested list": "[[1, 2], [3]]",
    "path": "../../etc/passwd",
    "20 KB": "x" * 20_000,
    "unicode digits": "²³",
}
LAB_KEYS = [*flatten_dotted(RunConfig().to_dict()), *UI_PARAMS]
PAGES = {
    "kinds/synthetic/ui/page.py": LAB_KEYS,
    "app_pages/compare.py": ["runs", "metric", "lecture"],
    "app_pages/sweep.py": ["run", "lecture", "grid", "axes"],
    "app_pages/theory.py": ["lecture", "show"],
    "app_pages/reproduce.py": ["report", "lecture"],
    "app_pages/runs.py": ["lecture"],
}
GENERIC = "This app has encountered an error"


def _open(page: str):
    at = run_app()
    return at if page == "kinds/synthetic/ui/page.py" else at.switch_page(page).run()


@pytest.mark.parametrize("page", list(PAGES))
def test_no_parameter_value_breaks_a_page(data_dir, page):
    at = _open(page)
    broken = []
    for key in PAGES[page]:
        for kind, value in BAD.items():
            at.query_params.clear()
            at.query_params[key] = value
            at.run()
            if at.exception:
                broken.append(f"{key}={kind}: {at.exception[0].value[:200]}")
    assert not broken, f"{len(broken)} links broke {page}: {broken[:5]}"


def test_a_bad_lab_link_keeps_the_preset_value_and_says_so(data_dir):
    at = run_app({"optim.eta_y": "abc", "optim.steps": "1" * 30, "speed": "7", "lock": "inf"})
    assert not at.exception
    warnings = " ".join(w.value for w in at.warning).replace("\\", "")  # shown as plain text: Markdown escaped
    for key in ("optim.eta_y", "optim.steps", "speed", "lock"):
        assert key.split(".")[-1] in warnings, (key, warnings)
    cfg = at.session_state["lab.cfg"]
    preset = RunConfig.from_dict({}).to_dict()
    assert cfg["optim"]["eta_y"] == preset["optim"]["eta_y"] and cfg["optim"]["steps"] == preset["optim"]["steps"]
    assert at.session_state["lab.speed"] == "max" and at.session_state["lab.lock"] is None
    assert not at.button(key="btn.start").disabled  # the config it kept is valid: Start is on
