"""Parsers for user uploads: a run config (JSON), and what every upload shares (its name's suffix, its size,
UTF-8 text).

Uploads are bytes from a browser under any file name (the uploaders accept every name, as Streamlit's
own extension check would answer a wrong one with its generic error: :func:`check_upload_name` is the
check); they are size-limited, decoded as UTF-8 and parsed with the stdlib only; nothing user-supplied is
ever unpickled or given to ``torch.load``.  Every problem raises :class:`~scansnap.core.config.ConfigError`
with one message saying what is wrong and what is allowed.  A kind's own uploads parse in its folder
(the synthetic kind's P(l|n) table: ``kinds/synthetic/service/table_upload.py``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from scansnap.core.config import ConfigError, RootConfig

MAX_CONFIG_BYTES = 256 * 1024
MAX_NAME_SHOWN = 100  # characters of a file name shown back


class UploadKind(NamedTuple):
    """What an uploader takes: the file name's suffix, and what to upload (for the message)."""

    suffix: str
    what: str


CONFIG_UPLOAD = UploadKind(".json", "a run config as JSON, as the Runs page's 'config JSON' download writes it")
TEXT_UPLOAD = UploadKind(".txt", "a UTF-8 .txt file of English text")


def check_upload_name(name: str, kind: UploadKind) -> None:
    """Refuse a file whose name does not end with ``kind.suffix`` (in any case), naming it and what is allowed."""
    if not str(name).lower().endswith(kind.suffix):
        shown = str(name) if len(str(name)) <= MAX_NAME_SHOWN else str(name)[:MAX_NAME_SHOWN] + "…"
        raise ConfigError(f"{shown!r} is not a {kind.suffix} file: upload {kind.what}")


def parse_config_upload(data: bytes, config: type[RootConfig]) -> Any:
    """A validated ``config`` (a kind's config class) from the bytes of a JSON file (its limits are checked
    by the caller: :meth:`scansnap.service.facade.LabService.config_from_upload`)."""
    return config.from_json(decoded_text(data, MAX_CONFIG_BYTES, "config file"))  # every problem a ConfigError


def decoded_text(data: bytes, limit: int, what: str) -> str:
    """``data`` as UTF-8 text (a BOM dropped); ConfigError over ``limit`` bytes or not UTF-8."""
    if len(data) > limit:
        raise ConfigError(f"the {what} is {len(data):,} bytes, over the limit of {limit:,} bytes ({limit // 1024} KiB)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ConfigError(
            f"the {what} is not UTF-8 text (invalid byte at position {e.start}); save it as UTF-8"
        ) from None
