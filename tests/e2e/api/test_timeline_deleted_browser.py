"""The timeline page ends a deleted object's bar, in a real browser.

A recorded run whose scale set was deleted (``the-cluster-role-allows-every-request-of-a-full-run``) is
imported into a journal, served by uvicorn on loopback, and the page is opened in headless Chromium
(Debian's ``chromium``, driven by playwright without a browser download): the scale set's bar ends with
the deletion mark, its badge says deleted instead of its last phase, the list's last row is the end with
its reason, and the runners (the kind filter taken from the URL) end the same way. A screenshot is saved
to the test's tmp_path.
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
SCALE_SET = 'section.object[data-kind="AutoscalingRunnerSet"][data-namespace="default"][data-name="arc"]'
DEADLINE_MS = 30_000

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (apt-get install chromium)")


async def test_a_deleted_scale_set_and_its_runners_end_on_the_timeline(tmp_path: Path) -> None:
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
                await page.wait_for_selector(f"{SCALE_SET}.deleted .bar .end", timeout=DEADLINE_MS)
                assert await page.text_content(f"{SCALE_SET} .current") == "deleted"
                title = await page.get_attribute(f"{SCALE_SET} .bar .end", "title") or ""
                assert "→ (deleted)" in title and "trigger: deleted" in title, title
                segments = await page.eval_on_selector_all(
                    f"{SCALE_SET} .bar > *", "nodes => nodes.map(n => [...n.classList])"
                )
                ends = [i for i, classes in enumerate(segments) if "end" in classes]
                assert ends == [len(segments) - 1] or (
                    ends == [len(segments) - 2] and segments[-1] == ["spacer"]
                ), segments

                await page.click(f"{SCALE_SET} summary")
                last = page.locator(f"{SCALE_SET} table.transitions tr[data-seq]").last
                assert "end" in (await last.get_attribute("class") or "").split()
                cells = await last.locator("td").all_inner_texts()
                assert cells[2] == cells[3] == "deleted" and cells[4], cells  # to, trigger, reason
                await page.screenshot(path=str(tmp_path / "timeline-deleted.png"), full_page=True)

                await page.goto(server.url + "/?kind=EphemeralRunner")
                runners = 'section.object[data-kind="EphemeralRunner"]'
                await page.wait_for_selector(f"{runners} .bar .end", timeout=DEADLINE_MS)
                badges = await page.eval_on_selector_all(
                    f"{runners} .current", "nodes => nodes.map(n => n.textContent)"
                )
                assert badges and all(badge == "deleted" for badge in badges), badges
                assert (tmp_path / "timeline-deleted.png").stat().st_size > 0
                assert not errors, errors
            finally:
                await browser.close()
    finally:
        await journal.close()
