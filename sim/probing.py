"""Container probes as the kubelet runs them (``pkg/kubelet/prober``), for containers of any runtime.

``Probe.of(container, kind)`` reads a container's ``readinessProbe``, ``livenessProbe`` or
``startupProbe``; ``Prober`` runs one for one run of a container: ``initialDelaySeconds``, then a check
every ``periodSeconds``, each bounded by ``timeoutSeconds``; the result flips to success after
``successThreshold`` consecutive successes and to failure after ``failureThreshold`` consecutive
failures, in real seconds. A readiness or startup probe starts out failing, a liveness probe passing;
a startup probe's result is unknown until it passes (then it stops) or fails ``failureThreshold``
times; the kubelet (``sim.kubelet``) turns the flips into ``ready``/``started``, the pod's conditions and
restarts, and every failed check into an ``Unhealthy`` Event.

Handlers: ``httpGet`` (``host`` or the pod's IP, a port number or a named container port, ``path``,
``httpHeaders``, scheme HTTP or HTTPS without verifying the certificate, as the kubelet does; success is
a status from 200 to 399, redirects followed) and ``tcpSocket`` (a connection opens). The failure
messages copy the kubelet's (``Get "http://…": dial tcp …: connect: connection refused``, ``HTTP probe
failed with statuscode: 500``).

Known limits: ``exec`` and ``grpc`` probes are not run: they count as passing (an Event says so once per
container run); no probe-level jitter.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp

KINDS = ("startup", "liveness", "readiness")
_FIELDS = {"startup": "startupProbe", "liveness": "livenessProbe", "readiness": "readinessProbe"}
TITLES = {"startup": "Startup", "liveness": "Liveness", "readiness": "Readiness"}
UNSUPPORTED = ("exec", "grpc")


@dataclass(frozen=True)
class Probe:
    kind: str  # startup, liveness, readiness
    handler: str  # httpGet, tcpSocket, exec, grpc
    action: Mapping[str, Any]
    initial_delay: float = 0.0
    period: float = 10.0
    timeout: float = 1.0
    success_threshold: int = 1
    failure_threshold: int = 3
    termination_grace: float | None = None  # the probe's terminationGracePeriodSeconds

    @classmethod
    def of(cls, container: Mapping[str, Any], kind: str) -> Probe | None:
        spec = container.get(_FIELDS[kind])
        if not isinstance(spec, Mapping):
            return None
        handler = next(
            (h for h in ("httpGet", "tcpSocket", *UNSUPPORTED) if isinstance(spec.get(h), Mapping)), ""
        )
        if not handler:
            return None

        def number(key: str, default: float) -> float:
            value = spec.get(key)
            return float(value) if isinstance(value, int | float) and value > 0 else default

        grace = spec.get("terminationGracePeriodSeconds")
        return cls(
            kind=kind,
            handler=handler,
            action=spec[handler],
            initial_delay=number("initialDelaySeconds", 0.0),
            period=number("periodSeconds", 10.0),
            timeout=number("timeoutSeconds", 1.0),
            success_threshold=int(number("successThreshold", 1)),
            failure_threshold=int(number("failureThreshold", 3)),
            termination_grace=float(grace) if isinstance(grace, int) else None,
        )

    @property
    def initially(self) -> bool | None:
        """The result before any check: liveness passes, readiness fails, startup is unknown."""
        return {"liveness": True, "readiness": False}.get(self.kind)


def port_of(value: Any, container: Mapping[str, Any]) -> int | None:
    """A probe's port: a number, a numeric string, or the name of one of the container's ports."""
    if isinstance(value, int):
        return value
    text = str(value or "")
    if text.isdigit():
        return int(text)
    for port in container.get("ports") or []:
        if (
            isinstance(port, Mapping)
            and port.get("name") == text
            and isinstance(port.get("containerPort"), int)
        ):
            return int(port["containerPort"])
    return None


def _host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _dial_error(host: str, port: int, exc: BaseException) -> str:
    where = f"dial tcp {_host_port(host, port)}"
    if isinstance(exc, TimeoutError):
        return f"{where}: i/o timeout"
    if isinstance(exc, ConnectionRefusedError):
        return f"{where}: connect: connection refused"
    reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return f"{where}: connect: {str(reason).lower()}"


_NO_VERIFY = ssl.create_default_context()
_NO_VERIFY.check_hostname = False
_NO_VERIFY.verify_mode = ssl.CERT_NONE


async def _http(probe: Probe, pod_ip: str, container: Mapping[str, Any]) -> tuple[bool, str]:
    action = probe.action
    host = str(action.get("host") or pod_ip)
    port = port_of(action.get("port"), container)
    if port is None:
        return False, f"unable to find port {action.get('port')!r} in the container's ports"
    scheme = str(action.get("scheme") or "HTTP").lower()
    path = str(action.get("path") or "/")
    url = f"{scheme}://{_host_port(host, port)}{path if path.startswith('/') else '/' + path}"
    headers = {"User-Agent": "kube-probe/1.34", "Accept": "*/*"}
    for header in action.get("httpHeaders") or []:
        if isinstance(header, Mapping) and header.get("name"):
            headers[str(header["name"])] = str(header.get("value") or "")
    timeout = aiohttp.ClientTimeout(total=probe.timeout)
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.get(url, headers=headers, ssl=_NO_VERIFY if scheme == "https" else True) as resp,
        ):
            await resp.read()
            code = resp.status
    except TimeoutError:
        return (
            False,
            f'Get "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)',
        )
    except aiohttp.ClientConnectorError as exc:
        return False, f'Get "{url}": {_dial_error(host, port, exc.os_error)}'
    except (aiohttp.ClientError, OSError) as exc:
        return False, f'Get "{url}": {exc}'
    if 200 <= code < 400:
        return True, ""
    return False, f"HTTP probe failed with statuscode: {code}"


async def _tcp(probe: Probe, pod_ip: str, container: Mapping[str, Any]) -> tuple[bool, str]:
    host = str(probe.action.get("host") or pod_ip)
    port = port_of(probe.action.get("port"), container)
    if port is None:
        return False, f"unable to find port {probe.action.get('port')!r} in the container's ports"
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), probe.timeout)
    except (TimeoutError, OSError) as exc:
        return False, _dial_error(host, port, exc)
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True, ""


async def check(probe: Probe, *, pod_ip: str, container: Mapping[str, Any]) -> tuple[bool, str]:
    """One check: (passed, the kubelet's failure message)."""
    if probe.handler == "httpGet":
        return await _http(probe, pod_ip, container)
    if probe.handler == "tcpSocket":
        return await _tcp(probe, pod_ip, container)
    return True, ""


class Prober:
    """One probe of one container run (a task of the kubelet's pod worker, cancelled when the run ends).

    ``on_result(passed, message)`` is called when the result flips; ``on_failure(message)`` after every
    failed check; ``on_unsupported()`` once if the handler is one the emulator does not run. A callback
    may be a coroutine function (the kubelet's write the pod's status): the prober awaits it.
    """

    def __init__(
        self,
        probe: Probe,
        *,
        pod_ip: Callable[[], str],
        container: Mapping[str, Any],
        on_result: Callable[[bool, str], Awaitable[None] | None],
        on_failure: Callable[[str], Awaitable[None] | None] = lambda message: None,
        on_unsupported: Callable[[], Awaitable[None] | None] = lambda: None,
    ) -> None:
        self.probe = probe
        self.pod_ip = pod_ip
        self.container = container
        self.on_result = on_result
        self.on_failure = on_failure
        self.on_unsupported = on_unsupported
        self.result = probe.initially

    async def run(self) -> None:
        probe = self.probe
        if probe.handler in UNSUPPORTED:
            await _done(self.on_unsupported())
            if self.result is not True:
                self.result = True
                await _done(self.on_result(True, ""))
            return
        await asyncio.sleep(probe.initial_delay)
        successes = failures = 0
        while True:
            passed, message = await check(probe, pod_ip=self.pod_ip(), container=self.container)
            if passed:
                successes, failures = successes + 1, 0
                if self.result is not True and successes >= probe.success_threshold:
                    self.result = True
                    await _done(self.on_result(True, ""))
                    if probe.kind == "startup":
                        return  # a startup probe is done once it passed
            else:
                successes, failures = 0, failures + 1
                await _done(self.on_failure(message))
                if self.result is not False and failures >= probe.failure_threshold:
                    self.result = False
                    await _done(self.on_result(False, message))
            await asyncio.sleep(probe.period)


async def _done(outcome: Awaitable[None] | None) -> None:
    """Await what a callback returned, if it is awaitable."""
    if outcome is not None:
        await outcome
