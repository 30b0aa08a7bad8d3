"""The address a shared link should use: the one the viewer reached the server by, or the operator's
``SCANSNAP_PUBLIC_URL`` (a lecture hall reaches the lecturer's laptop by its network address, not by
``localhost``)."""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit, urlunsplit

PUBLIC_URL_ENV = "SCANSNAP_PUBLIC_URL"


def public_base(viewer_url: str, public_url: str | None) -> str:
    """The link's base (scheme, host, port, path; no query): ``public_url`` when set, else the
    viewer's.  A ``public_url`` that is not an http(s) URL with a host raises ValueError."""
    if public_url:
        parts = urlsplit(public_url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f"{PUBLIC_URL_ENV} = {public_url!r} is not an http(s) address with a host, e.g. http://10.0.0.5:8501"
            )
        return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))
    parts = urlsplit(viewer_url or "")
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


def is_loopback(url: str) -> bool:
    """Whether ``url`` names this machine only (localhost, 127.0.0.0/8, ::1, 0.0.0.0): others cannot open it."""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_unspecified


def lan_address() -> str | None:
    """This machine's address on its outgoing network interface, if it has one (no packet is sent:
    connecting a UDP socket only picks the route)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))
            ip = s.getsockname()[0]
        except OSError:
            return None
    return None if ipaddress.ip_address(ip).is_loopback else ip


def with_host(url: str, host: str) -> str:
    """``url`` with its host replaced by ``host`` (the port kept)."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit((parts.scheme, f"{host}{port}", parts.path, parts.query, ""))
