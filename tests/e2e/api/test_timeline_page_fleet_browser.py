"""The fleet overview and a scale set's page in a real browser, over a journal holding a small fleet
(``fleetworld``) and 300 more quiet scale sets.

The app is served by uvicorn on loopback and the page opened in headless Chromium (Debian's
``chromium``, driven by playwright without a browser download): the fleet lists first the scale sets that
need a look, draws only the rows on screen, filters by a count, shows times in UTC, and is worked with the
keyboard; a scale set's page shows its runners alive first and the deleted ones folded under their count,
a runner's own history, and a runner's new status as the journal stream brings it; a 420-pixel window
shows both without spilling sideways. Screenshots are saved to the test's tmp_path.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from api.serving import ApiServer
from store.journal import Journal
from store.records import Record
from tests.e2e.api import fleetworld
from tests.e2e.api.apiworld import RECORDINGS, served

playwright = pytest.importorskip("playwright.async_api")

CHROMIUM = shutil.which("chromium")
QUIET = 300  # scale sets beside the small fleet, to fill more than a screen
DEADLINE_MS = 30_000
SHORT_UTC = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d UTC$")
FULL_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (apt-get install chromium)")


def quiet_fleet() -> list[Record]:
    out: list[Record] = []
    for i in range(QUIET):
        ready = [fleetworld.condition("Ready", "True", "Settled", "in sync", 2)]
        out += fleetworld.scale_set("bulk", f"quiet-{i:03}", "Running", ready)
    return out


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[tuple[ApiServer, Journal]]:
    journal = await Journal.open(tmp_path / "fleet.db", settings=RECORDINGS)
    await journal.append(fleetworld.fleet())
    await journal.append(quiet_fleet())
    try:
        async with served(journal) as (server, _):
            yield server, journal
    finally:
        await journal.close()


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    async with playwright.async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            await browser.close()


async def opened(browser: Any, url: str, width: int = 1280) -> tuple[Any, list[str]]:
    page = await browser.new_page(viewport={"width": width, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    await page.goto(url)
    await page.wait_for_function("() => document.body.dataset.rendered", timeout=DEADLINE_MS)
    return page, errors


async def shown(page: Any) -> list[str]:
    """The scale sets of the rows in the DOM, top to bottom."""
    return await page.evaluate(  # type: ignore[no-any-return]
        """() => [...document.querySelectorAll('.fleet-row[data-name]')]
            .sort((a, b) => Number(a.dataset.index) - Number(b.dataset.index))
            .map(r => r.dataset.namespace + '/' + r.dataset.name)"""
    )


async def test_the_fleet_shows_first_what_needs_a_look_a_screen_at_a_time(
    server: tuple[ApiServer, Journal], browser: Any, tmp_path: Path
) -> None:
    page, errors = await opened(browser, server[0].url + "/")
    await page.wait_for_selector(".fleet-row[data-name]", timeout=DEADLINE_MS)
    rows = await shown(page)
    assert rows[:4] == ["ci/badcreds", "ci/stuck", "ci/starting", "ci/failing"], rows
    total = len(fleetworld.SCALE_SETS) + QUIET
    assert len(rows) < 60, f"only the rows on screen are drawn, not {total}: {len(rows)}"
    counts = await page.text_content(".counts") or ""
    assert f"{total} scale sets:" in counts and "Outdated 1" in counts, counts

    # Scrolled to the end, the last rows are drawn and the first ones are gone.
    await page.eval_on_selector(".window", "w => { w.scrollTop = w.scrollHeight; }")
    await page.wait_for_selector('.fleet-row[data-name="solo"]', timeout=DEADLINE_MS)
    rows = await shown(page)
    assert rows[-1] == "web/solo" and "ci/badcreds" not in rows, rows
    assert len(rows) < 60, len(rows)

    # Times are UTC with the zone shown: short in the cell, to the millisecond in its datetime.
    changed = page.locator('.fleet-row[data-name="solo"] .changed time')
    assert SHORT_UTC.match(await changed.text_content() or ""), await changed.text_content()
    assert FULL_UTC.match(await changed.get_attribute("datetime") or "")

    # A count is a filter, kept in the URL.
    await page.click('.chip[data-filter="phase"][data-value="Outdated"]')
    await page.wait_for_function("() => window.location.search.includes('phase=Outdated')")
    await page.wait_for_function(
        "() => document.querySelectorAll('.fleet-row[data-name]').length === 1", timeout=DEADLINE_MS
    )
    assert await shown(page) == ["ci/stuck"]
    await page.goto(page.url)
    await page.wait_for_selector('.chip[data-value="Outdated"][aria-pressed="true"]', timeout=DEADLINE_MS)
    assert await shown(page) == ["ci/stuck"]
    warning = await page.text_content('.fleet-row[data-name="stuck"] .warning') or ""
    assert "RunnerPodsRefused" in warning, warning
    await page.screenshot(path=str(tmp_path / "fleet.png"), full_page=True)

    # The keyboard: the list is one tab stop; the arrow keys pick a row, Enter opens its scale set.
    await page.goto(server[0].url + "/")
    await page.wait_for_selector(".fleet-row[data-name]", timeout=DEADLINE_MS)
    await page.focus(".window")
    await page.keyboard.press("ArrowDown")
    await page.keyboard.press("ArrowDown")
    active = await page.get_attribute(".window", "aria-activedescendant")
    assert active and await page.get_attribute(f"#{active}", "data-name") == "stuck"
    await page.keyboard.press("Enter")
    await page.wait_for_function("() => document.body.dataset.view === 'scaleset'")
    assert "scaleset=ci%2Fstuck" in page.url, page.url
    await page.wait_for_selector(".summary .warn", timeout=DEADLINE_MS)
    assert "RunnerPodsRefused" in (await page.text_content(".summary .warn") or "")
    await page.go_back()
    await page.wait_for_function("() => document.body.dataset.view === 'fleet'")
    assert not errors, errors


async def test_a_scale_set_holds_its_runners_alive_first_and_the_deleted_ones_folded(
    server: tuple[ApiServer, Journal], browser: Any, tmp_path: Path
) -> None:
    url, journal = server[0].url, server[1]
    page, errors = await opened(browser, url + "/?scaleset=ci%2Fcalm")
    await page.wait_for_selector(".runners-card .runner-row[data-name]", timeout=DEADLINE_MS)
    heading = await page.text_content(".runners-card h3") or ""
    assert heading == "Runners: 2 alive (2 running)", heading
    live = await page.eval_on_selector_all(
        ".runners-card > .window-frame .runner-row[data-name]", "rows => rows.map(r => r.dataset.name)"
    )
    assert sorted(live) == ["calm-a", "calm-b"], live
    fold = page.locator("details.deleted-runners")
    assert await fold.get_attribute("open") is None, "the deleted runners are folded"
    assert await page.locator('.runner-row[data-deleted="true"]').count() == 0
    assert await page.text_content("details.deleted-runners summary") == "Deleted runners: 3"

    await page.click("details.deleted-runners summary")
    await page.wait_for_selector('.runner-row[data-deleted="true"]', timeout=DEADLINE_MS)
    deleted = await page.eval_on_selector_all(
        '.runner-row[data-deleted="true"]',
        "rows => rows.sort((a, b) => a.dataset.index - b.dataset.index).map(r => r.dataset.name)",
    )
    assert deleted == ["calm-old-2", "calm-old-1", "calm-old-0"], "newest first"
    when = await page.text_content('.runner-row[data-name="calm-old-2"] .when') or ""
    assert when.startswith("deleted ") and SHORT_UTC.match(when[len("deleted ") :]), when

    # A runner's own history, to its deletion.
    await page.click('.runner-row[data-name="calm-old-2"]')
    await page.wait_for_selector(
        '.runner-panel .history[data-name="calm-old-2"] .bar .end', timeout=DEADLINE_MS
    )
    await page.screenshot(path=str(tmp_path / "scale-set.png"), full_page=True)

    # A runner's new status comes by the journal stream, into its row.
    failed = fleetworld.runner("ci", "calm", "calm-a", "Failed")[0]
    await journal.append([fleetworld.observed(dict(failed.body["object"]))])
    await page.wait_for_selector('.runner-row[data-name="calm-a"][data-phase="Failed"]', timeout=DEADLINE_MS)
    await page.wait_for_function(
        "() => document.querySelector('.runners-card h3').textContent.includes('1 failed')",
        timeout=DEADLINE_MS,
    )
    assert not errors, errors


async def test_a_narrow_window_shows_the_fleet_and_a_scale_set_without_spilling_sideways(
    server: tuple[ApiServer, Journal], browser: Any, tmp_path: Path
) -> None:
    url = server[0].url
    page, errors = await opened(browser, url + "/", width=420)
    await page.wait_for_selector(".fleet-row[data-name]", timeout=DEADLINE_MS)
    assert await spill(page) == [], "nothing wider than the window"
    status = await page.eval_on_selector("#status", "s => s.getBoundingClientRect().right")
    assert status <= 420, status
    await page.screenshot(path=str(tmp_path / "fleet-420.png"), full_page=True)

    await page.click('.fleet-row[data-name="stuck"] a')
    await page.wait_for_selector(".history .bar .segment", timeout=DEADLINE_MS)
    await page.wait_for_selector(".runners-card h3", timeout=DEADLINE_MS)
    assert await spill(page) == [], "nothing wider than the window"
    bar = await page.eval_on_selector(".history .bar", "b => b.getBoundingClientRect().width")
    assert 300 < bar <= 420, bar
    await page.screenshot(path=str(tmp_path / "scale-set-420.png"), full_page=True)
    assert not errors, errors


async def spill(page: Any) -> list[str]:
    """The elements that reach past the window's right edge, and whether the page scrolls sideways."""
    return await page.evaluate(  # type: ignore[no-any-return]
        """() => {
            const width = document.documentElement.clientWidth;
            const out = [...document.querySelectorAll('body *')]
                .filter(e => e.getClientRects().length && e.getBoundingClientRect().right > width + 1)
                .filter(e => !e.closest('.table-scroll, .window'))
                .map(e => e.tagName + '.' + e.className);
            if (document.documentElement.scrollWidth > width) out.push('page scrolls sideways');
            return out;
        }"""
    )
