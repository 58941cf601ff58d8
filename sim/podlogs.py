"""Container logs: the files the kubelet keeps and ``GET /api/v1/namespaces/{ns}/pods/{name}/log``.

Each run of a container writes its stdout and stderr to one file in the CRI format a real node keeps
under ``/var/log/pods/NS_NAME_UID/CONTAINER/RESTART.log``: a line per output line,
``2026-01-01T00:00:00.123456789Z stdout F text`` (``P`` for a line cut at ``MAX_LINE`` or at the end of
output without a newline). ``LogWriter`` writes them; the runtime owns the pipes.

``PodLogs.serve`` answers the log subresource as kube-apiserver and the kubelet do between them: the
pod must exist (404) and be bound (400 ``pod X does not have a host assigned``); ``container`` may be
left out only when the pod has one (400 naming the choices); a waiting container has no log yet (400
``container "c" in pod "p" is waiting to start: ContainerCreating``). Options: ``previous`` (the run
before the current one), ``tailLines``, ``timestamps``, ``sinceSeconds``, ``limitBytes`` and ``follow``
(streamed until that run of the container has terminated and its file is drained). A container whose
runtime writes nothing (the simulated ones) has an empty log. The answer is ``text/plain``.

Known limits: ``sinceTime`` is not read; the files are removed with the pod, not rotated.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiohttp import web

from sim import errors
from sim.nodeapi import Objects
from sim.store import Obj

MAX_LINE = 16 * 1024  # containerd cuts longer lines into partial ones
FOLLOW_POLL = 0.05


def timestamp(ns: int | None = None) -> str:
    """RFC 3339 with nanoseconds, trailing zeros trimmed, as Go's RFC3339Nano prints UTC times."""
    ns = time.time_ns() if ns is None else ns
    seconds, fraction = divmod(ns, 1_000_000_000)
    text = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    digits = f"{fraction:09d}".rstrip("0")
    return f"{text}.{digits}Z" if digits else f"{text}Z"


class LogWriter:
    """Appends one stream's output to a CRI log file (line by line; one writer per stream)."""

    def __init__(self, path: Path, stream: str) -> None:
        self.path = path
        self.stream = stream
        self._pending = b""
        path.parent.mkdir(parents=True, exist_ok=True)

    def _emit(self, content: bytes, tag: str) -> None:
        with self.path.open("ab") as f:
            f.write(f"{timestamp()} {self.stream} {tag} ".encode() + content + b"\n")

    def write(self, data: bytes) -> None:
        self._pending += data
        while True:
            newline = self._pending.find(b"\n")
            if 0 <= newline <= MAX_LINE:
                line, self._pending = self._pending[:newline], self._pending[newline + 1 :]
                self._emit(line, "F")
            elif len(self._pending) > MAX_LINE:
                self._emit(self._pending[:MAX_LINE], "P")
                self._pending = self._pending[MAX_LINE:]
            else:
                break

    def close(self) -> None:
        """End of the stream: what is left without a newline is a partial line."""
        if self._pending:
            self._emit(self._pending, "P")
            self._pending = b""


def parse(line: bytes) -> tuple[str, bytes] | None:
    """(timestamp, content as the program wrote it) of one CRI log line; None if malformed."""
    parts = line.rstrip(b"\n").split(b" ", 3)
    if len(parts) < 3:
        return None
    content = parts[3] if len(parts) == 4 else b""
    return parts[0].decode(), content + (b"\n" if parts[2] == b"F" else b"")


def _epoch(ts: str) -> float | None:
    """Seconds since the epoch of a ``timestamp``; None if it is not one."""
    whole, _, fraction = ts.rstrip("Z").partition(".")
    try:
        seconds = datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None
    return seconds + (float("0." + fraction) if fraction.isdigit() else 0.0)


def _since(ts: str, seconds: int) -> bool:
    when = _epoch(ts)
    return when is None or when >= time.time() - seconds


def render(data: bytes, *, tail: int | None, timestamps: bool, since_seconds: int | None) -> bytes:
    """What a client sees of a log file's content."""
    entries = [e for e in (parse(line) for line in data.splitlines(keepends=True)) if e is not None]
    if since_seconds is not None:
        entries = [e for e in entries if _since(e[0], since_seconds)]
    if tail is not None:
        # Lines as the program wrote them: partial records join the next one.
        joined: list[list[tuple[str, bytes]]] = [[]]
        for entry in entries:
            joined[-1].append(entry)
            if entry[1].endswith(b"\n"):
                joined.append([])
        whole = [group for group in joined if group]
        entries = [e for group in whole[len(whole) - tail :] for e in group] if tail else []
    if timestamps:
        return b"".join(ts.encode() + b" " + content for ts, content in entries)
    return b"".join(content for _, content in entries)


def _names(containers: Any) -> list[str]:
    return [str(c.get("name")) for c in containers or [] if isinstance(c, dict)]


def _go_list(names: list[str]) -> str:
    return "[" + " ".join(names) + "]"


def _int(value: str | None, name: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        number = int(value)
    except ValueError:
        raise errors.bad_request(f"invalid value for {name}: {value!r}") from None
    if number < 0:
        raise errors.invalid(
            "PodLogOptions",
            "",
            "",
            [errors.invalid_value(name, number, "must be greater than or equal to 0")],
        )
    return number


class PodLogs:
    """Finds and serves the log files of the pods a kubelet ran (``root``: where they are, or None
    before any pod wrote one)."""

    def __init__(self, store: Objects, root: Callable[[], Path | None]) -> None:
        self.store = store
        self.root = root

    @staticmethod
    def relative(namespace: str, name: str, uid: str, container: str, restart: int) -> Path:
        return Path(f"{namespace}_{name}_{uid}") / container / f"{restart}.log"

    def _file(self, pod: Obj, container: str, restart: int) -> Path | None:
        root = self.root()
        meta = pod.get("metadata") or {}
        if root is None:
            return None
        return root / self.relative(
            meta.get("namespace", ""), meta.get("name", ""), meta.get("uid", ""), container, restart
        )

    def _container(self, pod: Obj, requested: str) -> str:
        spec = pod.get("spec") or {}
        name = str((pod.get("metadata") or {}).get("name", ""))
        regular, init = _names(spec.get("containers")), _names(spec.get("initContainers"))
        if not requested:
            if len(regular) == 1:
                return regular[0]
            message = f"a container name must be specified for pod {name}, choose one of: {_go_list(regular)}"
            if init:
                message += f" or one of the init containers: {_go_list(init)}"
            raise errors.bad_request(message)
        if requested not in regular + init:
            raise errors.bad_request(f"container {requested} is not valid for pod {name}")
        return requested

    @staticmethod
    def _status(pod: Obj, container: str) -> dict[str, Any]:
        status = pod.get("status") or {}
        for entry in (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or []):
            if isinstance(entry, dict) and entry.get("name") == container:
                return entry
        return {}

    def locate(self, namespace: str, name: str, container: str, previous: bool) -> tuple[Obj, str, int]:
        """(pod, container, restart number) of the log asked for; the API's errors otherwise."""
        pod = self.store.get(("", "pods", namespace, name))
        if pod is None:
            raise errors.not_found("pods", "", name)
        if not (pod.get("spec") or {}).get("nodeName"):
            raise errors.bad_request(f"pod {name} does not have a host assigned")
        container = self._container(pod, container)
        status = self._status(pod, container)
        restart = int(status.get("restartCount") or 0)
        state = status.get("state") or {}
        if previous:
            if restart == 0:
                raise errors.bad_request(
                    f'previous terminated container "{container}" in pod "{name}" not found'
                )
            return pod, container, restart - 1
        waiting = state.get("waiting") if isinstance(state, dict) else None
        if not status or (isinstance(waiting, dict) and not status.get("lastState", {}).get("terminated")):
            reason = (
                waiting.get("reason", "ContainerCreating")
                if isinstance(waiting, dict)
                else "ContainerCreating"
            )
            raise errors.bad_request(f'container "{container}" in pod "{name}" is waiting to start: {reason}')
        if isinstance(waiting, dict):  # waiting to restart: the log of the run that ended
            return pod, container, max(restart - 1, 0)
        return pod, container, restart

    def _finished(self, pod: Obj, container: str, restart: int) -> bool:
        meta = pod.get("metadata") or {}
        now = self.store.get(("", "pods", meta.get("namespace", ""), meta.get("name", "")))
        if now is None or (now.get("metadata") or {}).get("uid") != meta.get("uid"):
            return True
        status = self._status(now, container)
        if int(status.get("restartCount") or 0) > restart:
            return True
        return "terminated" in (status.get("state") or {})

    async def serve(
        self, request: web.Request, namespace: str, name: str, *, container: str | None = None
    ) -> web.StreamResponse:
        """The log as the query asks (its ``container``, unless given: the kubelet's path names it)."""
        q = request.query
        previous = (q.get("previous") or "").lower() not in ("", "false", "0")
        follow = (q.get("follow") or "").lower() not in ("", "false", "0")
        tail = _int(q.get("tailLines"), "tailLines")
        since = _int(q.get("sinceSeconds"), "sinceSeconds")
        limit = _int(q.get("limitBytes"), "limitBytes")
        timestamps = (q.get("timestamps") or "").lower() not in ("", "false", "0")
        requested = q.get("container", "") if container is None else container
        pod, container, restart = self.locate(namespace, name, requested, previous)
        path = self._file(pod, container, restart)
        # Read through one open file: the kubelet removes it when the pod goes, and a follower still
        # gets the last lines written before that.
        handle = path.open("rb") if path is not None and path.exists() else None
        try:
            data = handle.read() if handle is not None else b""
            out = render(data, tail=tail, timestamps=timestamps, since_seconds=since)
            if not follow or previous:
                return web.Response(body=out[:limit] if limit is not None else out, content_type="text/plain")
            resp = web.StreamResponse(status=200, headers={"Content-Type": "text/plain"})
            resp.enable_chunked_encoding()
            await resp.prepare(request)
            await resp.write(out if limit is None else out[:limit])
            sent, pending = len(out), b""
            while limit is None or sent < limit:
                done = self._finished(pod, container, restart)
                if handle is None:
                    path = path or self._file(pod, container, restart)
                    handle = path.open("rb") if path is not None and path.exists() else None
                chunk = pending + (handle.read() if handle is not None else b"")
                # Only whole lines: a line being written is sent once it is complete.
                cut = chunk.rfind(b"\n") + 1
                pending = chunk[cut:]
                if cut:
                    fresh = render(chunk[:cut], tail=None, timestamps=timestamps, since_seconds=None)
                    if limit is not None:
                        fresh = fresh[: limit - sent]
                    sent += len(fresh)
                    await resp.write(fresh)
                if done:
                    break
                await asyncio.sleep(FOLLOW_POLL)
        finally:
            if handle is not None:
                handle.close()
        await resp.write_eof()
        return resp
