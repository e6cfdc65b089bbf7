"""SSRF guard for fetch_url: only public addresses, checked on every redirect hop, and pinned for the connection.

The host of every URL (the first one and each redirect target) is resolved once here; if any address it
resolves to is loopback, private, link-local (cloud metadata at 169.254.169.254), unspecified, multicast,
reserved or otherwise not global, including IPv4 addresses wrapped in IPv6 (`::ffff:127.0.0.1`, 6to4,
NAT64), the request is refused before any connection is made. The connection then goes to exactly the
addresses that were checked (Host header and TLS SNI still carry the name), so a DNS answer that changes
between check and connect (DNS rebinding) cannot redirect it. Proxy environment variables are not used.
"""

from __future__ import annotations

import functools
import ipaddress
import socket
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import quote, urljoin, urlsplit

from toolmode.errors import ToolmodeError

if TYPE_CHECKING:  # imported on the first fetch (_connection_classes): `toolmode tools` never pays for them
    import http.client
    import ssl

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_REDIRECTS = 5
REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
USER_AGENT = "toolmode-fetch/0.1"
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_CHUNK = 64 * 1024


class NetworkRefused(ToolmodeError, PermissionError):
    """A URL was refused by the network policy (scheme or address)."""


@dataclass(frozen=True)
class NetPolicy:
    """Which destinations fetches may reach.

    `allow_private_network` lifts the address check entirely. `allow_hosts` lifts it for named hosts
    only: entries are `host` (any port) or `host:port` (`[::1]:8080` for IPv6), compared with the host
    as written in the URL. It exists for deliberately trusted hosts, e.g. an intranet server, or a test
    fixture on 127.0.0.1 whose redirects to other private addresses must still be refused.
    """

    allow_private_network: bool = False
    allow_hosts: frozenset[tuple[str, int | None]] = field(default_factory=frozenset)

    @classmethod
    def create(cls, *, allow_private_network: bool = False, allow_hosts: Iterable[str] = ()) -> NetPolicy:
        """Build a policy, parsing `allow_hosts` entries such as `"intranet.local"` or `"127.0.0.1:8080"`."""
        if isinstance(allow_hosts, str):
            allow_hosts = [allow_hosts]
        parsed = set()
        for entry in allow_hosts:
            parts = urlsplit(f"//{entry.strip()}")
            if not parts.hostname:
                raise ValueError(f"invalid allow_hosts entry {entry!r}: expected 'host' or 'host:port'")
            parsed.add((parts.hostname.lower(), parts.port))
        return cls(allow_private_network=allow_private_network, allow_hosts=frozenset(parsed))

    def trusts(self, host: str, port: int) -> bool:
        """True if `host:port` may be reached whatever it resolves to."""
        host = host.lower()
        return (
            self.allow_private_network or (host, port) in self.allow_hosts or (host, None) in self.allow_hosts
        )


def address_problem(ip: IPAddress) -> str | None:
    """Why `ip` is not a public address, as a phrase ("a loopback address"), or None if it is public."""
    embedded = _embedded_ipv4(ip)
    if embedded is not None:
        kind, inner = embedded
        problem = address_problem(inner)
        return None if problem is None else f"an {kind} form of {inner}, {problem}"
    if ip.is_unspecified:
        return "an unspecified address"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        metadata = " (the cloud metadata service)" if str(ip) == "169.254.169.254" else ""
        return f"a link-local address{metadata}"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_reserved:
        return "a reserved address"
    if ip.is_private:
        return "a private address"
    if not ip.is_global:
        return "not a public address"
    return None


def _embedded_ipv4(ip: IPAddress) -> tuple[str, ipaddress.IPv4Address] | None:
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return "IPv4-mapped", ip.ipv4_mapped
    if ip.sixtofour is not None:
        return "6to4", ip.sixtofour
    if ip in _NAT64:
        return "NAT64", ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _refusal(subject: str, problem: str) -> NetworkRefused:
    return NetworkRefused(f"refused: {subject} {problem}; pass allow_private_network=True to allow it")


def resolve_checked(host: str, port: int, policy: NetPolicy) -> list[str]:
    """Resolve `host` and return its addresses, refusing (NetworkRefused) if any is not public.

    The addresses returned are the ones to connect to. Trusted hosts (see NetPolicy) are not checked.
    """
    try:
        literal: IPAddress | None = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ConnectionError(f"could not resolve host {host!r}: {exc.strerror}") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if policy.trusts(host, port):
        return addresses
    for text in addresses:
        problem = address_problem(ipaddress.ip_address(text.split("%", 1)[0]))
        if problem is None:
            continue
        if literal is not None:
            raise _refusal(str(literal), f"is {problem}")
        raise _refusal(host, f"resolves to {text}, {problem}")
    return addresses


@functools.cache
def _connection_classes() -> tuple[type[http.client.HTTPConnection], type[http.client.HTTPSConnection]]:
    """The pinned HTTP and HTTPS connection classes, made on the first fetch (http.client and ssl cost
    start-up time that listing the tools does not need)."""
    import http.client

    class _PinnedHTTPConnection(http.client.HTTPConnection):
        """HTTP connection to pre-checked addresses; `host` is used only for the Host header."""

        def __init__(self, host: str, port: int, addresses: list[str], timeout: float) -> None:
            super().__init__(host, port, timeout=timeout)
            self._addresses = addresses

        def connect(self) -> None:
            self.sock = _connect_any(self._addresses, self.port, self.timeout)

    class _PinnedHTTPSConnection(http.client.HTTPSConnection):
        """HTTPS connection to pre-checked addresses; `host` is used for the Host header, SNI and the certificate."""

        def __init__(self, host: str, port: int, addresses: list[str], timeout: float) -> None:
            super().__init__(host, port, timeout=timeout, context=_tls_context())
            self._addresses = addresses

        def connect(self) -> None:
            sock = _connect_any(self._addresses, self.port, self.timeout)
            self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]

    return _PinnedHTTPConnection, _PinnedHTTPSConnection


@functools.cache
def _tls_context() -> ssl.SSLContext:
    import ssl

    return ssl.create_default_context()


def _connect_any(addresses: list[str], port: int, timeout: float | None) -> socket.socket:
    error: OSError | None = None
    for address in addresses:
        try:
            sock = socket.create_connection((address, port), timeout)
        except OSError as exc:
            error = exc
            continue
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock
    raise error or ConnectionError("no address to connect to")


@dataclass
class GuardedResponse:
    """An HTTP response after redirects: status, final URL, headers, and a capped body reader."""

    status: int
    url: str
    headers: http.client.HTTPMessage
    _response: http.client.HTTPResponse
    _sock: socket.socket | None
    _deadline: float
    _timeout: float

    @property
    def content_type(self) -> str:
        """The media type without parameters, lower-cased (`text/html`), or "" if the server sent none."""
        return self.headers.get_content_type() if self.headers.get("Content-Type") else ""

    @property
    def charset(self) -> str | None:
        """The charset parameter of Content-Type, if any."""
        return self.headers.get_content_charset()

    def read(self, max_bytes: int) -> tuple[bytes, bool]:
        """Read the body up to `max_bytes`; return (body, truncated). Stops at the overall deadline."""
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            remaining = self._deadline - time.monotonic()
            if remaining <= 0:
                raise _timeout_error(self._timeout, self.url)
            if self._sock is not None:
                self._sock.settimeout(remaining)
            try:
                chunk = self._response.read1(min(_CHUNK, max_bytes + 1 - size))
            except TimeoutError:
                raise _timeout_error(self._timeout, self.url) from None
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        body = b"".join(chunks)
        return body[:max_bytes], len(body) > max_bytes


def _timeout_error(timeout: float, url: str) -> TimeoutError:
    return TimeoutError(f"fetching {url} took longer than {timeout:g}s")


def _split_url(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, request target) of an http(s) URL, or ValueError / NetworkRefused."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"invalid URL {url!r}: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise NetworkRefused(f"refused: {url!r} is not an http or https URL")
    if not parts.hostname:
        raise ValueError(f"invalid URL {url!r}: no host")
    target = quote(parts.path or "/", safe="/%:@!$&'()*+,;=-._~")
    if parts.query:
        target += "?" + quote(parts.query, safe="/%:@!$&'()*+,;=-._~?")
    return scheme, parts.hostname, port or (443 if scheme == "https" else 80), target


@contextmanager
def guarded_get(
    url: str, *, policy: NetPolicy, timeout: float, max_redirects: int = MAX_REDIRECTS
) -> Iterator[GuardedResponse]:
    """GET `url`, following up to `max_redirects` redirects, each hop checked against `policy`.

    Yields the final response (any status, including 4xx/5xx) before its body is read. `timeout` bounds
    the whole fetch: connecting, every redirect, and reading the body through GuardedResponse.read.
    """
    deadline = time.monotonic() + timeout
    current = url
    for _hop in range(max_redirects + 1):
        scheme, host, port, target = _split_url(current)
        addresses = resolve_checked(host, port, policy)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _timeout_error(timeout, current)
        plain, tls = _connection_classes()
        conn = (tls if scheme == "https" else plain)(host, port, addresses, remaining)  # type: ignore[arg-type]
        try:
            try:
                conn.request("GET", target, headers=_REQUEST_HEADERS)
                sock = conn.sock  # kept: getresponse() may detach it from conn, the body still reads from it
                response = conn.getresponse()
            except TimeoutError:
                raise _timeout_error(timeout, current) from None
            location = response.getheader("Location")
            if response.status in REDIRECT_CODES and location:
                response.close()
                current = urljoin(current, location)
                continue
            yield GuardedResponse(
                response.status, current, response.headers, response, sock, deadline, timeout
            )
            return
        finally:
            conn.close()
    raise ConnectionError(f"too many redirects (more than {max_redirects}) starting from {url}")


_REQUEST_HEADERS = {
    "User-Agent": USER_AGENT,
    "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
    "Accept-Encoding": "identity",
}
