"""Which corpus a real-text run may read, and where a user's .txt upload is kept (no torch).

**Folders.**  A path typed in a browser never reaches the filesystem by itself: WikiText folders
are offered only when the operator names a corpus directory (``SCANSNAP_CORPUS_DIR``), and a
config from the dashboard may name only a folder inside it (:func:`check_dashboard_data`; the
command line reads any folder its user names).  Hugging Face downloads are command-line only.

**Uploads.**  A .txt upload is checked by :func:`scansnap.kinds.text.service.corpora.corpus_from_upload`
(≤ 20 MiB, UTF-8, not binary, ≥ 5,000 word tokens), then kept once by content under
``<data_dir>/uploads/text/<sha256[:16]>-<name>``; the config's ``data.upload_name`` is that file
name, so a stored run, its resume and its re-run read the same bytes.  Uploads are not deleted
with a run (another run may use the same text); together they may take at most
``SCANSNAP_MAX_UPLOADS_MB`` (default 1024) of disk, and those one browser brought at most
``SCANSNAP_MAX_OWNER_UPLOADS_MB`` (default 128; a hidden ``.<name>.owner`` file beside each upload says
whose it is).  An upload that no stored run names is removed once it is ``SCANSNAP_UPLOAD_KEEP_S``
(default 3,600 s) old, when a new upload comes: one browser cannot fill the store for good.

:func:`measured_corpus` is the one way from a :class:`~scansnap.kinds.text.science.config.TextDataConfig` to
token ids, for the web process (to show sizes and check the budget) and for the worker.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from contextlib import suppress
from functools import lru_cache
from pathlib import Path
from typing import Any

from scansnap.core.config import ConfigError
from scansnap.kinds.text.science.config import TextDataConfig
from scansnap.kinds.text.science.corpus import EncodedCorpus
from scansnap.kinds.text.service.corpora import WIKITEXT_FILES, WIKITEXT_RAW_FILES, corpus_from_upload, encoded_corpus
from scansnap.service.limits import env_number
from scansnap.service.uploads import TEXT_UPLOAD, check_upload_name

CORPUS_DIR_ENV = "SCANSNAP_CORPUS_DIR"
UPLOADS_ENV = "SCANSNAP_MAX_UPLOADS_MB"
OWNER_UPLOADS_ENV = "SCANSNAP_MAX_OWNER_UPLOADS_MB"
KEEP_ENV = "SCANSNAP_UPLOAD_KEEP_S"
UPLOAD_SUBDIR = Path("uploads") / "text"
DEFAULT_MAX_UPLOADS_MB = 1024
DEFAULT_MAX_OWNER_UPLOADS_MB = 128
DEFAULT_KEEP_S = 3600.0
DASHBOARD_MAX_TRAIN_BYTES = 64 * 2**20  # a larger wiki.train.tokens (WikiText-103) needs data.max_train_tokens
DASHBOARD_MAX_TRAIN_TOKENS = 5_000_000
MAX_FOLDERS = 50
_UPLOAD_NAME = re.compile(r"^[0-9a-f]{16}-[A-Za-z0-9._-]{1,100}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


# ----------------------------------------------------------------- folders
def corpus_root() -> Path | None:
    """The operator's corpus directory (``SCANSNAP_CORPUS_DIR``, resolved), or None when unset."""
    raw = os.environ.get(CORPUS_DIR_ENV)
    if not raw:
        return None
    root = Path(raw).expanduser().resolve()
    return root if root.is_dir() else None


def _is_wikitext(folder: Path) -> bool:
    return any((folder / pair[0]).is_file() for pair in (WIKITEXT_FILES, WIKITEXT_RAW_FILES))


def wikitext_folders() -> list[str]:
    """Names of the WikiText folders in the corpus directory (itself ``.`` included), sorted."""
    root = corpus_root()
    if root is None:
        return []
    found = ["."] if _is_wikitext(root) else []
    found += sorted(p.name for p in root.iterdir() if p.is_dir() and _is_wikitext(p))
    return found[:MAX_FOLDERS]


def _inside_root(path: str) -> Path:
    root = corpus_root()
    if root is None:
        raise ConfigError(
            f"data.source = 'wikitext-dir' is not available from the dashboard: this server has no corpus folder "
            f"(the operator sets {CORPUS_DIR_ENV}); use the built-in corpus or upload a .txt"
        )
    folder = (root / path).resolve()  # an absolute path stays itself; a relative one is taken under the root
    if not folder.is_relative_to(root) or not folder.is_dir() or not _is_wikitext(folder):
        allowed = ", ".join(wikitext_folders()) or "none"
        raise ConfigError(f"data.path = {path[:200]!r} is not a WikiText folder of this server; allowed: {allowed}")
    return folder


def check_dashboard_data(data: TextDataConfig) -> TextDataConfig:
    """The corpus a dashboard user may train on: built-in, an upload of theirs, or a WikiText folder
    inside the corpus directory (returned with its resolved path); anything else is a ConfigError."""
    if data.source == "huggingface":
        raise ConfigError(
            "data.source = 'huggingface' downloads from the internet: the dashboard does not; use the command line "
            "(python -m scansnap run ... --set data.source=huggingface) or a WikiText folder"
        )
    if data.source != "wikitext-dir":
        return data
    folder = _inside_root(str(data.path))
    train = next(folder / n for n in (WIKITEXT_FILES[0], WIKITEXT_RAW_FILES[0]) if (folder / n).is_file())
    too_many = data.max_train_tokens is None or data.max_train_tokens > DASHBOARD_MAX_TRAIN_TOKENS
    if train.stat().st_size > DASHBOARD_MAX_TRAIN_BYTES and too_many:
        raise ConfigError(
            f"{train.name} in {folder.name!r} is {train.stat().st_size / 2**20:,.0f} MiB: from the dashboard, set "
            f"data.max_train_tokens to at most {DASHBOARD_MAX_TRAIN_TOKENS:,} (or train it from the command line)"
        )
    return data.model_copy(update={"path": str(folder)})


# ----------------------------------------------------------------- uploads
def uploads_dir(data_dir: str | Path) -> Path:
    return Path(data_dir) / UPLOAD_SUBDIR


def _env_number(name: str, default: float) -> float:
    """The operator's ``name`` (a positive number), else ``default``; ConfigError naming it when bad."""
    try:
        return float(env_number(name, default))
    except ValueError as e:
        raise ConfigError(str(e)) from None


def max_uploads_bytes() -> int:
    return int(_env_number(UPLOADS_ENV, DEFAULT_MAX_UPLOADS_MB) * 2**20)


def max_owner_uploads_bytes() -> int:
    return int(_env_number(OWNER_UPLOADS_ENV, DEFAULT_MAX_OWNER_UPLOADS_MB) * 2**20)


def _uploads(folder: Path) -> list[Path]:
    """The kept uploads (not their hidden owner files, nor a write in progress)."""
    return [p for p in folder.iterdir() if p.is_file() and _UPLOAD_NAME.match(p.name)]


def _owner_file(path: Path) -> Path:
    return path.with_name(f".{path.name}.owner")


def _owner_of(path: Path) -> str | None:
    try:
        return _owner_file(path).read_text(encoding="utf-8")
    except OSError:
        return None


def expire_uploads(data_dir: str | Path, in_use: set[str], now: float | None = None) -> list[str]:
    """Remove the uploads no stored run names (``in_use``: the runs' ``data.upload_name``) that are older
    than ``SCANSNAP_UPLOAD_KEEP_S``; returns their names."""
    folder = uploads_dir(data_dir)
    if not folder.is_dir():
        return []
    now = time.time() if now is None else now
    keep_s = _env_number(KEEP_ENV, DEFAULT_KEEP_S)
    gone = []
    for path in _uploads(folder):
        if path.name not in in_use and now - path.stat().st_mtime > keep_s:
            with suppress(OSError):
                path.unlink()
                _owner_file(path).unlink(missing_ok=True)
                gone.append(path.name)
    return gone


def save_upload(
    data_dir: str | Path, name: str, data: bytes, owner: str | None = None, in_use: set[str] | None = None
) -> str:
    """Check a .txt upload and keep it; returns its ``data.upload_name`` (the same bytes give the
    same name, stored once).  Uploads no run names expire first (:func:`expire_uploads`, with
    ``in_use``); then the new one must fit the server's room and, for ``owner`` (a visitor: None is the
    operator or the command line), that browser's share."""
    check_upload_name(name, TEXT_UPLOAD)
    corpus_from_upload(data, name)  # every problem a ConfigError naming it
    stem = _UNSAFE.sub("_", Path(name).name)[-100:].strip("._") or "upload.txt"
    upload_name = f"{hashlib.sha256(data).hexdigest()[:16]}-{stem}"
    folder = uploads_dir(data_dir)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / upload_name
    if target.is_file():
        os.utime(target)  # brought again: kept another while
        return upload_name
    expire_uploads(data_dir, (in_use or set()) | {upload_name})
    kept = _uploads(folder)
    used = sum(p.stat().st_size for p in kept)
    if used + len(data) > max_uploads_bytes():
        raise ConfigError(
            f"the server keeps at most {max_uploads_bytes() / 2**20:,.0f} MiB of uploaded texts ({UPLOADS_ENV}) and "
            f"holds {used / 2**20:,.1f} MiB: use the built-in corpus, or try again later (an upload no run uses "
            "is removed after an hour)"
        )
    if owner is not None:
        mine = sum(p.stat().st_size for p in kept if _owner_of(p) == owner)
        if mine + len(data) > max_owner_uploads_bytes():
            raise ConfigError(
                f"your uploads take {mine / 2**20:,.1f} MiB and this one {len(data) / 2**20:,.1f} MiB: one browser may "
                f"keep at most {max_owner_uploads_bytes() / 2**20:,.0f} MiB of texts ({OWNER_UPLOADS_ENV}); train on "
                "one you uploaded, or wait: an upload no run uses is removed after an hour"
            )
    tmp = folder / f".{upload_name}.{os.getpid()}.tmp"
    tmp.write_bytes(data)
    if owner is not None:
        _owner_file(target).write_text(owner, encoding="utf-8")
    os.replace(tmp, target)
    return upload_name


def read_upload(data_dir: str | Path, upload_name: str) -> bytes:
    """The bytes of a kept upload; a name that is not one :func:`save_upload` gives is refused unread."""
    if not _UPLOAD_NAME.match(upload_name or ""):
        raise ConfigError(f"data.upload_name = {str(upload_name)[:200]!r} is not the name of an uploaded text")
    path = uploads_dir(data_dir) / upload_name
    if not path.is_file():
        raise ConfigError(f"the uploaded text {upload_name!r} is not on this server (any more): upload it again")
    return path.read_bytes()


# ----------------------------------------------------------------- token ids
def measured_corpus(data_dir: str | Path, data: TextDataConfig) -> EncodedCorpus:
    """Token ids of ``data``'s corpus (an upload is read from ``data_dir``); cached per process."""
    if data.source != "upload":
        return encoded_corpus(data)
    return _encoded_upload(str(Path(data_dir).resolve()), data)


@lru_cache(maxsize=2)
def _encoded_upload(data_dir: str, data: TextDataConfig) -> EncodedCorpus:
    # an upload's name is its content's hash: the same name always encodes the same text
    return encoded_corpus(data, read_upload(data_dir, str(data.upload_name)))


def run_files(config: dict[str, Any]) -> list[Path]:
    """The files under the data folder a real-text run reads: its uploaded corpus, if it reads one."""
    upload = (config.get("data") or {}).get("upload_name")
    return [UPLOAD_SUBDIR / Path(upload).name] if upload else []
