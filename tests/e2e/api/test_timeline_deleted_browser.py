"""The timeline page ends a deleted scale set's history, in a real browser.

A recorded run whose scale set was deleted (``the-cluster-role-allows-every-request-of-a-full-run``) is
imported into a journal, served by uvicorn on loopback, and the page is opened in headless Chromium
(Debian's ``chromium``, driven by playwright without a browser download): the fleet no longer lists the
scale set; its own page (a link to it still works) says it was deleted, its bar ends with the deletion
mark, its badge says deleted, the list's last row is the end with its reason, and its runners went with
it. A screenshot is saved to the test's tmp_path.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from store import exporting
from store.journal import Journal
from tests.e2e.api.apiworld import JOURNALS, RECORDINGS, served

playwright = pytest.importorskip("playwright.async_api")

CHROMIUM = shutil.which("chromium")
RECORDED = JOURNALS / "the-cluster-role-allows-every-request-of-a-full-run.jsonl.gz"
HISTORY = '.history[data-kind="AutoscalingRunnerSet"][data-namespace="default"][data-name="arc"]'
DEADLINE_MS = 30_000

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (apt-get install chromium)")


async def test_a_deleted_scale_set_ends_on_the_timeline(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    with exporting.open_lines(RECORDED) as lines:
        await exporting.import_lines(path, lines)
    journal = await Journal.open(path, settings=RECORDINGS)
    try:
        async with served(journal) as (server, _), playwright.async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            try:
                page = await browser.new_page(viewport={"width": 1280, "height": 900})
                errors: list[str] = []
                page.on("pageerror", lambda exc: errors.append(str(exc)))
                await page.goto(server.url + "/")
                await page.wait_for_selector(".window-empty:not([hidden])", timeout=DEADLINE_MS)
                assert await page.locator(".fleet-row").count() == 0, (
                    "a deleted scale set is not in the fleet"
                )

                await page.goto(server.url + "/?scaleset=default%2Farc")
                await page.wait_for_selector(f"{HISTORY} .bar .end", timeout=DEADLINE_MS)
                assert await page.text_content(".summary .badge.current") == "deleted"
                gone = await page.text_content(".summary .gone") or ""
                assert "was deleted (seq" in gone, gone
                label = await page.get_attribute(f"{HISTORY} .bar .end", "aria-label") or ""
                assert label.startswith("deleted at ") and label[len("deleted at ") :][:4].isdigit(), label
                last = await page.eval_on_selector(
                    f"{HISTORY} .bar", "bar => [...bar.lastElementChild.classList]"
                )
                assert "end" in last, last

                await page.click(f"{HISTORY} .transitions summary")
                await page.wait_for_selector(f"{HISTORY} .transitions tr.end")
                end = page.locator(f"{HISTORY} .transitions tr[data-seq]").last
                assert "end" in (await end.get_attribute("class") or "").split()
                cells = await end.locator("td").all_inner_texts()
                assert cells[2] == cells[3] == "deleted" and cells[4], cells  # to, trigger, reason
                story = await page.text_content(f"{HISTORY} .story") or ""
                assert story.startswith("The scale set was deleted: "), story

                await page.wait_for_selector(".runners-card .window-empty:not([hidden])", timeout=DEADLINE_MS)
                heading = await page.text_content(".runners-card h3") or ""
                assert heading.startswith("Runners: 0 alive"), heading
                await page.screenshot(path=str(tmp_path / "timeline-deleted.png"), full_page=True)
                assert (tmp_path / "timeline-deleted.png").stat().st_size > 0
                assert not errors, errors
            finally:
                await browser.close()
    finally:
        await journal.close()
