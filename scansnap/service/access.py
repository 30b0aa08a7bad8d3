"""Who may manage a run, and a stable owner id per browser (pure; no streamlit).

Policy (``can_manage``):

* A run belongs to the owner id that created it.  Anyone may *view* a run (open it in the Lab,
  compare it, export it); only its owner may *manage* it: delete, rename, pause, stop, resume
  or publish it.
* The operator manages every run.  Operator mode exists only when the environment variable
  ``SCANSNAP_OPERATOR_KEY`` is set to a non-empty value; a typed key is compared with
  :func:`hmac.compare_digest`.
* Wrong operator keys slow the client that types them (:class:`KeyGate`): after a browser's or an
  address's f-th wrong key in a row, its next attempt within 2^(f−1) s (at most 60 s) is refused
  without being compared, so fresh cookies from one address buy no extra guesses; a browser that has
  given the right key once is not held by its address's wait, so a guesser cannot lock the operator out.
* Runs without an owner (``owner`` None: created by the command line, ``python -m scansnap``)
  are managed from the dashboard by the operator only: nobody in a browser created them.
  Re-running any run from scratch is allowed to everyone (it creates the actor's own run).

Owner ids: the dashboard derives one per browser from Streamlit's XSRF cookie
(``_streamlit_xsrf``), which the server keeps across requests and reloads (it re-masks the
value on every response but preserves the token inside).  :func:`browser_owner` unmasks the
token and stores only ``sha256(salt || token)``, so the run store never reveals the cookie;
the salt is a random secret created once per data directory (:func:`owner_salt`).
"""

from __future__ import annotations

import binascii
import hashlib
import hmac
import os
import secrets
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from cachetools import TTLCache

OPERATOR_ENV = "SCANSNAP_OPERATOR_KEY"
XSRF_COOKIE = "_streamlit_xsrf"
SALT_FILE = "owner-salt"
OWNER_PREFIX = "browser-"
OPERATOR_MAX_DELAY_S = 60


def can_manage(run_owner: str | None, actor: str, operator: bool) -> bool:
    """True when ``actor`` may delete, rename, stop, resume or publish a run of ``run_owner``."""
    if operator:
        return True
    return run_owner is not None and bool(actor) and hmac.compare_digest(run_owner, actor)


def operator_configured() -> bool:
    """Whether operator mode exists at all (``SCANSNAP_OPERATOR_KEY`` set and non-empty)."""
    return bool(os.environ.get(OPERATOR_ENV))


def operator_ok(given: str) -> bool:
    """Whether ``given`` is the operator key (constant-time; always False when none is set)."""
    key = os.environ.get(OPERATOR_ENV) or ""
    if not key or not given:
        return False
    return hmac.compare_digest(given.encode("utf-8"), key.encode("utf-8"))


def operator_delay(failures: int) -> float:
    """Seconds before the next operator-key attempt after ``failures`` wrong ones: 1, 2, 4 … ≤ 60."""
    return float(min(OPERATOR_MAX_DELAY_S, 2 ** (failures - 1)))


@dataclass
class Backoff:
    """One client's wrong operator keys since its last right one, and the clock value before which its
    next attempt is refused unevaluated."""

    failures: int = 0
    next_try: float = 0.0


@dataclass
class KeyGate:
    """The operator key's back-off, per client (one per server process: :data:`OPERATOR_GATE`).

    Each browser cookie and each network address has its own wait, doubling with its wrong keys
    (:func:`operator_delay`): a wrong key starts the wait of both, so a guesser who takes a fresh cookie
    for each guess is held by its address.  A cookie that has once given the right key is the operator's:
    no address's wait holds it, so a visitor guessing from the operator's own network never locks the
    operator out.  Waits are forgotten an hour after their last wrong key (``max_clients`` kept at most)."""

    clock: Callable[[], float] = time.monotonic
    max_clients: int = 100_000
    _waits: TTLCache[str, Backoff] = field(init=False, repr=False)
    _operators: TTLCache[str, bool] = field(init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        """Forget every wait and every operator cookie."""
        self._waits = TTLCache(self.max_clients, BACKOFF_MEMORY_S, timer=lambda: self.clock())
        self._operators = TTLCache(self.max_clients, OPERATOR_MEMORY_S, timer=lambda: self.clock())

    def _clients(self, cookie: str, address: str | None) -> list[str]:
        """The cookie's wait and, but for an operator's cookie, its address's (an unknown address is one)."""
        known = cookie in self._operators
        return [f"cookie:{cookie}"] + ([] if known else [f"address:{address or 'unknown'}"])

    def wait_left(self, cookie: str, address: str | None) -> float:
        """Seconds before this client's next attempt is compared (0: now)."""
        with self._lock:
            return self._wait(self._clients(cookie, address), self.clock())

    def _wait(self, clients: list[str], now: float) -> float:
        return max([self._waits[c].next_try - now for c in clients if c in self._waits] + [0.0])

    def attempt(self, given: str, cookie: str, address: str | None) -> tuple[bool, float]:
        """(``given`` is the operator key, seconds left to wait) for the browser ``cookie`` at ``address``:
        while its wait runs the key is not compared (False, wait); otherwise (ok, 0.0), and a wrong key
        starts the next, longer wait of the cookie and the address."""
        with self._lock:
            now, clients = self.clock(), self._clients(cookie, address)
            wait = self._wait(clients, now)
            if wait > 0:
                return False, wait
            ok = operator_ok(given)
            if ok:
                self._operators[cookie] = True
                self._waits.pop(f"cookie:{cookie}", None)
                return True, 0.0
            for c in clients:
                b = self._waits.get(c) or Backoff()
                b.failures += 1
                b.next_try = now + operator_delay(b.failures)
                self._waits[c] = b  # (re)set: kept an hour from this wrong key
            return False, 0.0


BACKOFF_MEMORY_S = 3600.0  # a client's wrong keys are forgotten this long after its last one
OPERATOR_MEMORY_S = 30 * 86400.0  # a cookie that gave the right key is known as the operator's this long
OPERATOR_GATE = KeyGate()


def xsrf_token(cookie: str) -> bytes | None:
    """The token inside an XSRF cookie: ``2|mask|masked|ts`` is unmasked; any other non-empty
    value is taken as it is.  None when there is nothing usable."""
    value = cookie.strip().strip("\"'")
    if not value.startswith("2|"):
        return value.encode("utf-8", "replace") or None
    try:
        _, mask_hex, masked_hex, _ts = value.split("|")
        mask, masked = binascii.a2b_hex(mask_hex), binascii.a2b_hex(masked_hex)
    except (ValueError, binascii.Error):
        return None
    if len(mask) != 4 or not masked:
        return None
    return bytes(b ^ mask[i % 4] for i, b in enumerate(masked))


def browser_owner(cookie: str | None, salt: bytes) -> str | None:
    """``browser-<hex>`` = salted SHA-256 of the cookie's token, or None without a cookie."""
    token = xsrf_token(cookie) if cookie else None
    if not token:
        return None
    return OWNER_PREFIX + hashlib.sha256(salt + token).hexdigest()[:32]


@lru_cache(maxsize=8)
def owner_salt(data_dir: str) -> bytes:
    """32 random bytes kept in ``<data_dir>/owner-salt`` (mode 0600), created once (written to a
    temporary file, then linked into place, so a concurrent reader never sees it half written);
    owner ids thus survive a server restart.  A per-process secret if the file cannot be used."""
    path = Path(data_dir) / SALT_FILE
    if not path.exists():
        try:
            _create_salt(path)
        except OSError:
            return secrets.token_bytes(32)
    try:
        salt = path.read_bytes()
    except OSError:
        salt = b""
    return salt if len(salt) >= 16 else secrets.token_bytes(32)


def _create_salt(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{SALT_FILE}.{secrets.token_hex(8)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(32))
        with suppress(FileExistsError):  # another process created it first: theirs is kept
            os.link(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
