"""What ``sparkprof serve`` lets in: who may read and write (a token, the Host and Origin
headers) and how much a client may take (body sizes, time to send a request, connections).

Access (docs/python.md, "serve"):

- A token is required for every write (POST), and for reads too unless the server is bound to
  loopback only. It comes in a header -- ``Authorization: Bearer TOKEN`` or
  ``X-Sparkprof-Token: TOKEN`` -- or, for reads from a browser, in the ``sparkprof_token`` cookie
  (``HttpOnly``, ``SameSite=Strict``) that opening ``/?token=TOKEN`` sets. Writes never accept
  the cookie: a cross-site form or fetch cannot set a header (a custom header needs a CORS
  preflight, which this server never grants), so a forged cross-origin write has no token.
- The Host header must name this server (the bound address, loopback names when bound to
  loopback, ``--allowed-host`` names): a DNS-rebinding page reaches the server under its own host
  name and is refused before anything is read.
- A write whose Origin is not the server's own (the Host it was sent to) or an
  ``--allowed-origin`` is refused, whatever token it carries.
- ``/`` carries the token (a ``<meta name='sparkprof-token'>``) only when the request that asked
  for it had one (the cookie): the page's own upload form sends it in the header, and a page of
  another origin cannot read it (same-origin policy; the Host check stops DNS rebinding).

Limits (docs/limits.md): request bodies (``/analyze`` uploads and everything else), the time a
client has to send its request headers and each piece of its body, and the connections held at
once (the oldest one still sending its request is closed first)."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import secrets
import socket
import time
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlsplit

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

TOKEN_HEADER = "x-sparkprof-token"
TOKEN_COOKIE = "sparkprof_token"
# The request scope key the guard sets when the request carried the right token.
TOKEN_GIVEN = "sparkprof.token_given"
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


@dataclass(frozen=True)
class ServeLimits:
    """Every bound of ``serve`` a client can reach (docs/limits.md)."""

    max_upload_bytes: int = 256 << 20  # POST /analyze: the event log or zip uploaded
    max_body_bytes: int = 1 << 20  # any other request body (JSON)
    header_timeout_s: float = 10.0  # connection (or idle keep-alive) to complete headers
    body_read_timeout_s: float = 30.0  # the longest wait for the next piece of a body
    keep_alive_s: float = 5.0  # an idle connection between requests
    max_connections: int = 100  # held at once
    max_header_bytes: int = 16 << 10  # request line and headers


@dataclass(frozen=True)
class ServeAccess:
    """Who may read and write (see the module's docstring)."""

    token: str
    reads_need_token: bool
    allowed_hosts: frozenset[str]  # lower-case host names or addresses; "*": any
    allowed_origins: frozenset[str] = field(default_factory=frozenset)  # scheme://host[:port]

    def host_allowed(self, host: str) -> bool:
        return "*" in self.allowed_hosts or host in self.allowed_hosts

    def is_token(self, given: str | None) -> bool:
        return given is not None and secrets.compare_digest(given.encode(), self.token.encode())


def new_token() -> str:
    return secrets.token_urlsafe(32)


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _machine_names() -> set[str]:
    """The names and addresses this machine answers to (for a wildcard bind)."""
    names = {socket.gethostname().lower(), socket.getfqdn().lower()}
    try:
        for *_, address in socket.getaddrinfo(socket.gethostname(), None):
            names.add(str(address[0]).lower())
    except OSError:
        pass
    return names


def access_for(
    bind_host: str,
    token: str,
    allowed_hosts: Iterable[str] = (),
    allowed_origins: Iterable[str] = (),
) -> ServeAccess:
    """The access rule of a server bound to ``bind_host``: reads need the token unless it is a
    loopback address; Host may be the bound address (every name of this machine for 0.0.0.0 or
    ::), the loopback names, or one of ``allowed_hosts`` (a proxy's public name; "*" any)."""
    hosts = {h.lower().strip("[]") for h in allowed_hosts} | set(LOOPBACK_NAMES)
    bound = bind_host.lower().strip("[]")
    if bound in ("", "0.0.0.0", "::"):
        hosts |= _machine_names()
    else:
        hosts.add(bound)
    return ServeAccess(
        token=token,
        reads_need_token=not is_loopback(bind_host),
        allowed_hosts=frozenset(hosts),
        allowed_origins=frozenset(o.rstrip("/").lower() for o in allowed_origins),
    )


def host_name(host_header: str) -> str:
    """The host of a Host header, lower case, without the port ("[::1]:8080" -> "::1")."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _given_token(headers: Headers, cookie_allowed: bool) -> str | None:
    authorization = headers.get("authorization", "")
    if authorization[:7].lower() == "bearer ":
        return authorization[7:].strip()
    if TOKEN_HEADER in headers:
        return headers[TOKEN_HEADER]
    if cookie_allowed and "cookie" in headers:
        cookies = SimpleCookie()
        try:
            cookies.load(headers["cookie"])
        except CookieError:  # a malformed Cookie header gives no token
            return None
        if TOKEN_COOKIE in cookies:
            return cookies[TOKEN_COOKIE].value
    return None


class RequestRefused(HTTPException):
    """A request body past its limit or too slow: raised from ``receive``, so FastAPI's body
    parsing passes it on (an HTTPException) and it is answered with its status."""


async def _answer(
    send: Send, status: int, detail: str, headers: Iterable[tuple[str, str]] = ()
) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *[(k.encode(), v.encode()) for k, v in headers],
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class ServeGuard:
    """ASGI middleware: the access rule, then the body limits, before the application."""

    def __init__(
        self, app: ASGIApp, access: ServeAccess, limits: ServeLimits, upload_paths: Iterable[str]
    ) -> None:
        self.app = app
        self.access = access
        self.limits = limits
        self.upload_paths = frozenset(upload_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        method = scope["method"].upper()
        write = method in WRITE_METHODS
        host_header = headers.get("host", "")
        host = host_name(host_header)
        if not self.access.host_allowed(host):
            await _answer(
                send,
                400,
                f"Host {host_header!r} is not a name of this server: start serve with "
                "--allowed-host NAME to answer to it (behind a proxy: its public name)",
            )
            return
        if write:
            origin = headers.get("origin")
            if origin is not None and not self._same_or_allowed_origin(origin, host_header):
                await _answer(
                    send,
                    403,
                    f"cross-origin write refused: Origin {origin!r} is not this server "
                    "(--allowed-origin to allow one)",
                )
                return
        given = _given_token(headers, cookie_allowed=not write)
        token_given = self.access.is_token(given)
        if method == "GET" and scope["path"] == "/" and not token_given:
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            if self.access.is_token((query.get("token") or [None])[0]):
                # The printed URL: keep the token as a cookie and drop it from the address bar.
                cookie = f"{TOKEN_COOKIE}={self.access.token}; HttpOnly; SameSite=Strict; Path=/"
                await send(
                    {
                        "type": "http.response.start",
                        "status": 303,
                        "headers": [
                            (b"location", b"/"),
                            (b"set-cookie", cookie.encode()),
                            (b"content-length", b"0"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": b""})
                return
        if (write or self.access.reads_need_token) and not token_given:
            where = "an Authorization: Bearer or X-Sparkprof-Token header"
            if not write:
                where += ", or open /?token=TOKEN once in a browser"
            await _answer(
                send,
                401,
                f"this needs the serve token ({where}; sparkprof serve prints it)",
                [("www-authenticate", "Bearer")],
            )
            return
        scope[TOKEN_GIVEN] = token_given
        await self._limited(scope, receive, send, headers)

    def _same_or_allowed_origin(self, origin: str, host_header: str) -> bool:
        origin = origin.rstrip("/").lower()
        if origin in self.access.allowed_origins:
            return True
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and parts.netloc == host_header.strip().lower()

    async def _limited(self, scope: Scope, receive: Receive, send: Send, headers: Headers) -> None:
        upload = scope["path"] in self.upload_paths
        limit = self.limits.max_upload_bytes if upload else self.limits.max_body_bytes
        what = "an upload" if upload else "a request body"
        too_large = (
            f"{what} of more than {limit} bytes is refused (serve --max-"
            f"{'upload' if upload else 'body'}-bytes)"
        )
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            await _answer(send, 413, too_large)
            return
        received = 0
        started = False
        timeout_s = self.limits.body_read_timeout_s

        async def limited_receive() -> Message:
            nonlocal received
            try:
                message = await asyncio.wait_for(receive(), timeout_s)
            except asyncio.TimeoutError:
                raise RequestRefused(
                    408, f"no part of the request body came for {timeout_s:g} s"
                ) from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise RequestRefused(413, too_large)
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except RequestRefused as refused:
            if started:
                raise
            await _answer(send, refused.status_code, str(refused.detail))


def guarded_http_protocol(limits: ServeLimits) -> type:
    """uvicorn's h11 protocol with the limits uvicorn lacks: the request headers must arrive
    within ``header_timeout_s`` of the connection (or of the first byte after an idle
    keep-alive), and at most ``max_connections`` are held: past it, the oldest connection still
    sending its request (or idle) is closed for the new one, else the new one is."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._opened_s = time.monotonic()
            self._header_timer: asyncio.TimerHandle | None = None

        def _awaiting_request(self) -> bool:
            return self.cycle is None or bool(self.cycle.response_complete)

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            # Connections closed but not yet gone (connection_lost comes later) do not count.
            open_ones = [
                c
                for c in self.connections
                if isinstance(c, GuardedH11Protocol) and not c.transport.is_closing()
            ]
            super().connection_made(transport)
            if len(open_ones) >= limits.max_connections:
                waiting = [c for c in open_ones if c._awaiting_request()]
                if waiting:
                    min(waiting, key=lambda c: c._opened_s).transport.close()
                else:
                    transport.close()
                    return
            self._arm_header_timer()

        def _arm_header_timer(self) -> None:
            self._cancel_header_timer()
            self._header_timer = self.loop.call_later(limits.header_timeout_s, self._header_timeout)

        def _cancel_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _header_timeout(self) -> None:
            self._header_timer = None
            if self._awaiting_request() and not self.transport.is_closing():
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            if self._header_timer is None and self._awaiting_request():
                self._arm_header_timer()  # the first byte of a request on a kept-alive one
            super().data_received(data)
            if not self._awaiting_request():
                self._cancel_header_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_header_timer()
            super().connection_lost(exc)

    return GuardedH11Protocol
