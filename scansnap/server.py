"""The dashboard's server: ``streamlit run server.py`` serves app.py (Streamlit's ``st.App``) and adds
``GET /healthz``, which answers 200 only when the run store can be read (503 with the reason
otherwise); the Docker HEALTHCHECK uses it.  ``/_stcore/health`` only says that the server answers."""

import asyncio
import os

import streamlit as st
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from scansnap.service.health import store_health
from scansnap.ui import gc_freeze
from scansnap.ui.prewarm import prewarm


async def healthz(request: Request) -> JSONResponse:
    ok, detail = await asyncio.to_thread(store_health, os.environ.get("SCANSNAP_DATA_DIR") or "data")
    return JSONResponse({"ok": ok, "store": detail}, status_code=200 if ok else 503)


prewarm()  # before the server answers: the first page finds everything imported and built
gc_freeze.start()  # what the imports built leaves the collector's full passes (scansnap/ui/gc_freeze.py)
app = st.App("app.py", routes=[Route("/healthz", healthz)])
