"""Where the process is: every thread's stack and every task's await chain, and a sampling profile of them.

What an operator chasing a hang asks first is where each piece of the controller is waiting. A Go
controller answers with pprof's goroutine dump; here it is two views of the same process:

* ``dump()`` — each thread's stack (``sys._current_frames``, as ``faulthandler`` prints it) and each task
  of the running event loop with the chain of coroutines it is suspended in, innermost last, and what it
  awaits (a Future, another task by name). ``Task.get_stack`` gives only a suspended task's outermost
  frame, so the chain is followed through ``cr_await`` (and ``gi_yieldfrom``, ``ag_await``, and into the
  async generator an ``async for`` waits on).
* ``Sampler.profile(seconds)`` — every thread's stack taken every 10 ms (100 Hz, pprof's rate) from a
  thread of its own, counted by stack, in the folded format flame graph tools read (``a;b;c COUNT``).
  It is wall-clock, not CPU time: a thread that waits is counted where it waits. It is taken beside the
  event loop rather than inside it, so a loop slowed by long synchronous steps is caught in them; the
  task await chains are left out of it, since a suspended task costs nothing. Python's ``cProfile``
  would not do: it traces only the thread that enables it, and tracing every call of the event loop
  slows the very thing it measures.

Neither ever shows a value: frames are given by file, line and function name (the dump adds the line of
source there, read from the file, as a traceback does), and nothing reads a frame's locals, arguments
or ``repr`` of an awaited object, so a token held in a variable cannot appear.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import functools
import gc
import os
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from datetime import UTC, datetime
from types import AsyncGeneratorType, CodeType, FrameType
from typing import Any

INTERVAL = 0.01  # seconds between samples: 100 Hz


def dump() -> str:
    """Every thread's stack and every task's await chain in the running event loop, as text."""
    threads = _thread_stacks()
    tasks = sorted(asyncio.all_tasks(), key=lambda task: task.get_name())
    now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    lines = [
        f"arcsm stacks at {now}, pid {os.getpid()}: {len(threads)} threads, {len(tasks)} tasks of the "
        "event loop (code locations only, never a value)",
    ]
    for title, frames in threads:
        lines += ["", title, *_formatted(frames)]
    for task in tasks:
        frames = _await_chain(task)
        lines += ["", f"task {task.get_name()!r}:", *_formatted(frames), f"  awaiting {_waits_on(task)}"]
    return "\n".join(lines) + "\n"


def _thread_stacks() -> list[tuple[str, list[traceback.FrameSummary]]]:
    by_ident = {thread.ident: thread for thread in threading.enumerate()}
    here = threading.get_ident()
    stacks = []
    for ident, frame in sorted(sys._current_frames().items()):
        thread = by_ident.get(ident)
        notes = [f"ident {ident}"]
        if thread is not None and thread.daemon:
            notes.append("daemon")
        if ident == here:
            notes.append("the event loop answering this request")
        name = repr(thread.name) if thread is not None else "(not started by threading)"
        title = f"thread {name} ({', '.join(notes)}):"
        stacks.append((title, [_summary(f.f_code, line) for f, line in traceback.walk_stack(frame)][::-1]))
    return stacks


def _await_chain(task: asyncio.Task[Any]) -> list[traceback.FrameSummary]:
    """The frames of the coroutines ``task`` is suspended in, outermost first."""
    frames: list[traceback.FrameSummary] = []
    awaited: object = task.get_coro()
    while (frame := _frame_of(awaited)) is not None:
        frames.append(_summary(frame.f_code, frame.f_lineno))
        awaited = _awaiting(awaited)
    return frames


def _waits_on(task: asyncio.Task[Any]) -> str:
    """What ``task`` waits for: the future it is suspended on (read where asyncio's own ``repr`` of a task
    reads it, its ``wait_for=``), named by its type or, for a task, by its name."""
    if task is asyncio.current_task():
        return "nothing: it is running (it answers this request)"
    waiter = getattr(task, "_fut_waiter", None)
    if waiter is None:
        return "nothing: it is ready to run"
    if isinstance(waiter, asyncio.Task):
        return f"task {waiter.get_name()!r}"
    return f"a {type(waiter).__name__}"


def _frame_of(awaitable: object) -> FrameType | None:
    for attribute in ("cr_frame", "gi_frame", "ag_frame"):
        frame = getattr(awaitable, attribute, None)
        if isinstance(frame, FrameType):
            return frame
    return None


def _awaiting(awaitable: object) -> object:
    """What the coroutine (or generator) ``awaitable`` awaits: the next link of the chain, or None."""
    for attribute in ("cr_await", "gi_yieldfrom", "ag_await"):
        inner = getattr(awaitable, attribute, None)
        if inner is not None:
            break
    if inner is None or _frame_of(inner) is not None:
        return inner
    # ``async for`` awaits the ``asend`` object of an async generator, which names its generator to the
    # garbage collector only: without this step the chain would stop at every ``async for``.
    return next((r for r in gc.get_referents(inner) if isinstance(r, AsyncGeneratorType)), inner)


def _summary(code: CodeType, line: int | None) -> traceback.FrameSummary:
    # Built from the code object alone: FrameSummary(locals=None) keeps no value of the frame.
    return traceback.FrameSummary(code.co_filename, line, code.co_qualname, lookup_line=False)


def _formatted(frames: list[traceback.FrameSummary]) -> Iterator[str]:
    for entry in traceback.format_list(frames):
        yield from entry.rstrip("\n").splitlines()


class Sampler:
    """Sampling profiles, one at a time (a second asked while one runs gets None)."""

    def __init__(self) -> None:
        self._busy = threading.Lock()

    async def profile(self, seconds: float) -> collections.Counter[str] | None:
        """Sample every thread's stack for ``seconds`` from a thread of its own; the count of samples of
        each folded stack (``thread;outermost;…;innermost``), or None while another profile runs."""
        if not self._busy.acquire(blocking=False):
            return None
        result: concurrent.futures.Future[collections.Counter[str]] = concurrent.futures.Future()

        def sample() -> None:
            try:
                if result.set_running_or_notify_cancel():  # running, it stays settable once the asker left
                    try:
                        result.set_result(_sample(seconds))
                    except BaseException as exc:
                        result.set_exception(exc)
            finally:
                self._busy.release()

        # Not the loop's default executor: a profile holds its thread for seconds, and it should not
        # wait behind (or hold up) the work it is there to observe.
        threading.Thread(target=sample, name="arcsm profile", daemon=True).start()
        return await asyncio.wrap_future(result)


def _sample(seconds: float) -> collections.Counter[str]:
    counts: collections.Counter[str] = collections.Counter()
    me = threading.get_ident()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        names = {thread.ident: thread.name for thread in threading.enumerate()}
        for ident, frame in sys._current_frames().items():
            if ident != me:
                stack = [_folded(f.f_code, line) for f, line in traceback.walk_stack(frame)][::-1]
                counts[";".join([names.get(ident, str(ident)).replace(";", ","), *stack])] += 1
        time.sleep(INTERVAL)
    return counts


def folded(counts: collections.Counter[str]) -> str:
    """The folded format, busiest stack first: ``thread;outermost;…;innermost COUNT`` a line."""
    return "".join(f"{stack} {count}\n" for stack, count in counts.most_common())


def _folded(code: CodeType, line: int | None) -> str:
    return f"{code.co_qualname} ({_short(code.co_filename)}:{line})"


@functools.lru_cache(maxsize=4096)
def _short(filename: str) -> str:
    """``filename`` relative to the entry of ``sys.path`` it was imported from (``api/stacks.py``)."""
    roots = [root for root in sys.path if root and filename.startswith(root.rstrip(os.sep) + os.sep)]
    return filename[len(max(roots, key=len).rstrip(os.sep)) + 1 :] if roots else filename
