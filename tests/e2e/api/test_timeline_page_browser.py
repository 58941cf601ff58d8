"""The timeline page in a real browser against a running ``arcsm demo``.

The demo runs as a subprocess (the emulated world, the controller and the HTTP API in one process). The
page is opened in headless Chromium (Debian's ``chromium``, driven by playwright without a browser
download) as soon as the demo prints its URL, so the phases arrive while the page is open: the fleet lists
the scale set, and its page's bar must come to show Pending, Running, Outdated, Pending, Running, refreshed
from the journal stream, with the trigger of each transition on hover and in the list, the selected
transition told in words under the bar (where the status write of a decision is seen, never a status that
seems to contradict it), times in UTC; the arrow keys move between segments; the transitions-spaced scale
stays in the URL across a reload. A screenshot is saved to the test's tmp_path.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ARCSM

playwright = pytest.importorskip("playwright.async_api")

CHROMIUM = shutil.which("chromium")
STORY = ["Pending", "Running", "Outdated", "Pending", "Running"]
DEADLINE = 240.0  # the demo's whole story; each of its steps has its own deadline inside the demo
ROW = '.fleet-row[data-namespace="default"][data-name="arc"]'
HISTORY = '.history[data-kind="AutoscalingRunnerSet"][data-namespace="default"][data-name="arc"]'
UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
# Reports every text the status shows, as it changes, to the test (``statusSeen``).
STATUS_WATCH = """
document.addEventListener("DOMContentLoaded", () => {
  const status = document.getElementById("status");
  new MutationObserver(() => window.statusSeen(status.dataset.state)).observe(
    status, { attributes: true, childList: true, characterData: true, subtree: true });
});
"""

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (apt-get install chromium)")


@dataclass
class Demo:
    process: asyncio.subprocess.Process
    lines: list[str] = field(default_factory=list)

    async def line_with(self, text: str) -> str:
        """Read the demo's output until a line holds ``text``; fail if it ends first."""
        assert self.process.stdout is not None
        async with asyncio.timeout(DEADLINE):
            while True:
                raw = await self.process.stdout.readline()
                if not raw:
                    raise AssertionError(f"the demo ended before {text!r}:\n" + "\n".join(self.lines))
                line = raw.decode().rstrip("\n")
                self.lines.append(line)
                if text in line:
                    return line


@pytest.fixture
async def demo(tmp_path: Path) -> AsyncIterator[Demo]:
    process = await asyncio.create_subprocess_exec(
        ARCSM,
        "demo",
        "--journal",
        str(tmp_path / "demo.db"),
        "--http",
        "127.0.0.1:0",
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    running = Demo(process)
    try:
        yield running
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGINT)
            try:
                async with asyncio.timeout(60):
                    await process.communicate()
            except TimeoutError:
                process.kill()
                await process.wait()


async def phases_shown(page: Any) -> list[str]:
    return await page.eval_on_selector_all(  # type: ignore[no-any-return]
        f"{HISTORY} .segment", "segments => segments.map(s => s.dataset.phase)"
    )


async def test_the_timeline_shows_a_scale_set_that_went_outdated_and_recovered(
    demo: Demo, tmp_path: Path
) -> None:
    url = (await demo.line_with("timeline page: ")).split("timeline page: ")[1]
    async with playwright.async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            statuses: list[str] = []
            await page.expose_function("statusSeen", lambda state: statuses.append(state))
            await page.add_init_script(STATUS_WATCH)
            await page.goto(url)

            # The fleet lists the scale set as soon as it exists; its page is one click away.
            await page.wait_for_selector(ROW, timeout=DEADLINE * 1000)
            await page.click(f"{ROW} a")
            await page.wait_for_function("() => document.body.dataset.view === 'scaleset'")
            assert "scaleset=default%2Farc" in page.url, page.url

            # The page was opened before the story played: the phases arrive by the page's own refresh.
            await page.wait_for_function(
                """([selector, story]) => {
                    const shown = [...document.querySelectorAll(selector + " .segment")]
                        .map(s => s.dataset.phase);
                    return JSON.stringify(shown) === JSON.stringify(story);
                }""",
                arg=[HISTORY, STORY],
                timeout=DEADLINE * 1000,
            )
            await demo.line_with("the story is over")
            assert await phases_shown(page) == STORY
            assert await page.get_attribute("#status", "data-state") == "live", (
                "the journal stream is not used"
            )
            assert "polling" not in statuses, f"the status said polling before the stream opened: {statuses}"

            outdated = page.locator(f'{HISTORY} .segment[data-phase="Outdated"]')
            title = await outdated.get_attribute("title") or ""
            assert title.startswith("Outdated from ") and "runners_rejected_spec" in title, title
            assert await page.text_content(".summary .badge.current") == "Running"

            await page.click(f"{HISTORY} .transitions summary")
            await page.wait_for_selector(f"{HISTORY} .transitions tr[data-phase]")
            rows = page.locator(f"{HISTORY} .transitions tr[data-phase]")
            texts = [" | ".join(await row.locator("td").all_inner_texts()) for row in await rows.all()]
            assert any("Outdated" in t and "runners_rejected_spec" in t for t in texts), texts
            assert any("Pending" in t and "generation_advanced" in t for t in texts), texts
            # The same decision records the republish after the Pending write, a re-affirmation of Pending:
            # it stays in the journal, but the page lists phase changes only.
            assert not any("recovery_republished" in t for t in texts), texts
            assert len(texts) == len(STORY), texts
            assert all(UTC.search(t) for t in texts), texts

            # The selected transition (the last one) is told without a click, in UTC, with what the
            # journal held then (GET .../at?seq=).
            reason = await page.text_content(f"{HISTORY} .selected-reason") or ""
            assert "Pending → Running" in reason and "settled" in reason, reason
            assert UTC.search(reason), reason
            await page.wait_for_selector(f'{HISTORY} .at[data-state="present"]', timeout=30_000)
            said = await page.text_content(f"{HISTORY} .at .status-write") or ""
            assert "the status write for this decision is seen at seq" in said or said.startswith(
                "Its status said Running"
            ), said

            # The arrow keys move the selection along the bar: two steps back is Outdated.
            seq = await outdated.get_attribute("data-seq")
            await page.focus(f'{HISTORY} .bar button[tabindex="0"]')
            await page.keyboard.press("ArrowLeft")
            await page.keyboard.press("ArrowLeft")
            await page.wait_for_selector(
                f'{HISTORY} .selection[data-seq="{seq}"] .at[data-state="present"]', timeout=30_000
            )
            assert await page.evaluate("() => document.activeElement.dataset.phase") == "Outdated"
            reason = await page.text_content(f"{HISTORY} .selected-reason") or ""
            assert "Running → Outdated" in reason and "runners_rejected_spec" in reason, reason
            story = await page.text_content(f"{HISTORY} .story") or ""
            assert story.startswith("The scale set went from Running to Outdated: the runners rejected"), (
                story
            )
            decision = page.locator(f"{HISTORY} .at .decision")
            assert await decision.get_attribute("data-trigger") == "runners_rejected_spec"
            assert f"The decision (seq {seq}) recorded " in (await decision.text_content() or "")
            assert "runner set" in (await page.text_content(f"{HISTORY} .at .children") or "")
            assert await outdated.get_attribute("aria-pressed") == "true"

            # The transitions-spaced scale gives every segment the same room, and stays in the URL.
            await page.select_option("select[name=scale]", "steps")
            widths = await page.eval_on_selector_all(
                f"{HISTORY} .segment", "segments => segments.map(s => s.getBoundingClientRect().width)"
            )
            assert len(widths) == len(STORY) and max(widths) - min(widths) < 2, widths
            assert "scale=steps" in page.url, page.url
            await page.goto(page.url)
            await page.wait_for_function(
                """([selector, count]) =>
                    document.querySelectorAll(selector + " .segment").length === count""",
                arg=[HISTORY, len(STORY)],
                timeout=30_000,
            )
            assert await page.input_value("select[name=scale]") == "steps"

            shot = tmp_path / "timeline.png"
            await page.screenshot(path=str(shot), full_page=True)
            print(f"timeline screenshot: {shot}")
            assert shot.stat().st_size > 0
            assert not errors, errors
        finally:
            await browser.close()

    demo.process.send_signal(signal.SIGINT)
    async with asyncio.timeout(60):
        await demo.process.wait()
    assert demo.process.returncode == 0, "\n".join(demo.lines)
