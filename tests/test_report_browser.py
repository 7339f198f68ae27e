"""The HTML report in a real browser: Debian's chromium driven by Playwright (never `playwright
install`: scripts/test installs chromium with apt-get). Opens index.html from disk, follows a
counterexample link, steps through the trace and checks what is shown; keeps a screenshot in
out/test-artefacts/ (git-ignored) and prints its path.

Without chromium the test fails in CI (CI is set) and is skipped elsewhere, saying why.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SMALL = str(ROOT / "boards" / "000-replay-1.toml")
CHROMIUM = os.environ.get("BPCHECK_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTEFACTS = ROOT / "out" / "test-artefacts"


def _unavailable(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"the browser test cannot run in CI: {why} (scripts/test installs chromium with apt-get as root)")
    pytest.skip(f"browser test skipped: {why} (scripts/test installs it; run it as root)")


@pytest.fixture
def browser():
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        _unavailable(f"no chromium at {CHROMIUM}")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as e:
        _unavailable(f"the playwright package is missing ({e}); it is in bpcheck's [test] extra")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            yield b
        finally:
            b.close()


def test_report_in_a_browser(tmp_path, run_cli, monkeypatch, browser, capsys):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    out = tmp_path / "report"
    code, _stdout, err = run_cli("check", SMALL, "--engine", "buggy_engines:CallOffForgetsAttack", "--report", str(out))
    assert code == 1, err

    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto((out / "index.html").as_uri())
    assert page.locator("#overall").inner_text().startswith("FAIL")
    assert page.locator("#matrix td.m-violated").count() == 5  # the monitor-based invariants catch it five ways
    assert "invariants" in page.locator("#coverage-summary").inner_text()

    # the index lists root causes: replay.bookkeeping-kept and replay.call-off-counts break at the same step
    page.locator("a.cex-link", has_text="replay.call-off-counts").click()
    page.wait_for_load_state()
    assert page.url.split("#")[0].endswith("counterexamples/000-replay-1.replay.bookkeeping-kept.html")
    assert "2 counterexamples on 1 board" in page.locator("#group-summary").inner_text()
    assert page.locator("#step-number").inner_text() == "Initial state (step 0 of 9)"
    assert page.locator("#prev").is_disabled()
    assert page.locator("svg").count() >= 2  # the trace and the state graph, inlined

    nxt, prev = page.locator("#next"), page.locator("#prev")
    for _ in range(4):
        nxt.click()
    assert page.locator("#step-number").inner_text() == "Step 4 of 9"
    assert page.locator("#action-label").inner_text() == "P1: attack Battle Ox -> direct"
    assert not page.locator("#violation-banner").is_visible()
    shown = page.locator("section.state:visible")
    assert shown.count() == 1 and shown.get_attribute("data-step") == "4"
    assert "attack: Battle Ox [P1 M1] → direct" in shown.inner_text()  # cards by name and zone
    assert "changed" in shown.locator('td[data-key="attack"]').get_attribute("class")

    prev.click()
    assert page.locator("#step-number").inner_text() == "Step 3 of 9"
    assert page.locator("#action-label").inner_text() == "P2: pass"

    for _ in range(6):
        nxt.click()
    assert page.locator("#step-number").inner_text() == "Step 9 of 9"
    assert page.locator("#action-label").inner_text() == "P1: replay: call off (Battle Ox [P1 M1])"  # the card the label does not name
    assert nxt.is_disabled()
    banner = page.locator("#violation-banner")
    assert banner.is_visible()
    assert "replay.bookkeeping-kept breaks here" in banner.inner_text()
    assert page.locator("#violated-rules").inner_text() == "RPL-COUNTS, RPL-COMPLETED"
    board = page.locator("section.state:visible")
    assert board.get_attribute("data-step") == "9"
    cell = board.locator('td[data-key="P1.monsters.0"]')
    assert "Battle Ox" in cell.inner_text() and "attacks 0" in cell.inner_text()  # the count the bug reset, shown at zero
    assert "changed" in cell.get_attribute("class")
    assert page.locator("#trace-list li.current").inner_text() == "P1: replay: call off"

    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTEFACTS / "report-viewer.png"
    page.screenshot(path=str(shot), full_page=False)
    assert shot.stat().st_size > 10_000
    with capsys.disabled():
        print(f"\nbrowser test screenshot: {shot}")

    prev.click()
    assert not banner.is_visible() and page.locator("#step-number").inner_text() == "Step 8 of 9"
    assert all(u.startswith("file://") for u in requests), [u for u in requests if not u.startswith("file://")]
