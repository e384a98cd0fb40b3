"""web_fetch's network guard: every address that is not public (loopback, private,
link-local, ...) is refused unless the user config lists the host in `web.allow_hosts`.

The check sits in the network backend of the HTTP client: each connection resolves its host
once, checks every resolved address and then connects to exactly those checked addresses, so
the connection is pinned to what was checked (no second DNS lookup to rebind) and every
redirect hop, which opens its own connection, goes through the same check.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

from workbench.config.settings import Settings
from workbench.tools.web.body import USER_AGENT


class AddressRefused(Exception):
    def __init__(self, host: str, address: str):
        super().__init__(f"{host} resolves to {address}, which is not a public address")
        self.host = host
        self.address = address


class ResolveFailed(Exception):
    def __init__(self, host: str, err: BaseException):
        super().__init__(f"cannot resolve host {host} ({err})")
        self.host = host


def is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """True for globally routable unicast addresses; loopback, private, link-local and the rest are not."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return is_public(address.ipv4_mapped)
        if address.is_site_local:  # fec0::/10: deprecated, but still routed as a private network
            return False
        if address.sixtofour is not None and not is_public(address.sixtofour):  # 2002::/16 embeds IPv4
            return False
        if address.teredo is not None and not all(is_public(a) for a in address.teredo):
            return False
    return address.is_global and not (address.is_multicast or address.is_reserved or address.is_unspecified)


class HostPolicy:
    """Which hosts and addresses web_fetch may reach: public ones, plus what the user allowed."""

    def __init__(self, allow_hosts: Iterable[str]):
        self.names: set[str] = set()
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for entry in allow_hosts:
            entry = entry.strip().lower().strip("[]")
            try:
                self.networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                self.names.add(entry.rstrip("."))

    def allows(self, host: str, address: str) -> bool:
        ip = ipaddress.ip_address(address.split("%")[0])
        if is_public(ip) or host.lower().rstrip(".") in self.names:
            return True
        return any(ip in network for network in self.networks)


class CheckedBackend(httpcore.AsyncNetworkBackend):
    """Resolve, check every address, then connect to the checked addresses only (pinned)."""

    def __init__(self, policy: HostPolicy, timeout: float):
        self.policy = policy
        self.timeout = timeout
        self.inner = httpcore.AnyIOBackend()
        self.connected: list[tuple[str, str]] = []  # (host, checked address) of each connection

    async def resolve(self, host: str, port: int) -> list[str]:
        loop = asyncio.get_running_loop()
        try:
            infos = await asyncio.wait_for(loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), timeout=self.timeout)
        except (OSError, TimeoutError, UnicodeError) as err:  # UnicodeError: a name IDNA cannot encode
            raise ResolveFailed(host, err) from err
        addresses: list[str] = []
        for info in infos:
            address = str(info[4][0])
            if address not in addresses:
                addresses.append(address)
        return addresses

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await self.resolve(host, port)
        for address in addresses:  # every address, not just the first one we would use
            if not self.policy.allows(host, address):
                raise AddressRefused(host, address)
        error: Exception | None = None
        for address in addresses:
            try:
                stream = await self.inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as err:
                error = err
                continue
            self.connected.append((host, address))
            return stream
        raise error or httpcore.ConnectError(f"no address for {host}")

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("web_fetch does not use unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def guarded_client(settings: Settings, backend: CheckedBackend) -> httpx.AsyncClient:
    # trust_env=False on the client: a proxy from the environment would receive the connection
    # instead of the checked address. The transport keeps trust_env for CA bundle settings.
    transport = httpx.AsyncHTTPTransport(trust_env=True)
    transport._pool = httpcore.AsyncConnectionPool(  # the one way to give httpx a network backend
        ssl_context=httpx.create_ssl_context(trust_env=True),
        max_connections=4,
        network_backend=backend,
    )
    return httpx.AsyncClient(
        transport=transport,
        trust_env=False,
        follow_redirects=False,
        timeout=settings.web_timeout,
        headers={
            "User-Agent": USER_AGENT,
            "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5",
            "Accept-Encoding": "gzip, deflate",  # what _Inflate decodes, within the size cap
        },
    )


__all__ = ["AddressRefused", "CheckedBackend", "HostPolicy", "ResolveFailed", "guarded_client", "is_public"]
