"""The GitHub job summary names the report as a reader on github.com can find it, and the
`#step-N` links of a counterexample page are what docs/reports.md says (issue 34 item 5)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bpcheck.harness.reporting import artifacts_url

ROOT = Path(__file__).resolve().parent.parent
BOARD = str(ROOT / "boards" / "000-replay-1.toml")
GITHUB = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "octo/engine", "GITHUB_RUN_ID": "4242"}


def _summary(run_cli, tmp_path, monkeypatch, env: dict) -> str:
    for k in ("GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE", *GITHUB):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
    code, out, err = run_cli("check", BOARD, "--engine", "mutant:replay-resets-count", "--report", "out/report", "--github", "-q")
    assert code == 1, out + err
    return target.read_text(encoding="utf-8")


def test_on_github_the_summary_names_the_workspace_folder_and_the_runs_artifacts(run_cli, tmp_path, monkeypatch):
    text = _summary(run_cli, tmp_path, monkeypatch, GITHUB)
    line = next(ln for ln in text.splitlines() if ln.startswith("Full report:"))
    assert line == (
        "Full report: `out/report/index.html` on the runner, not on GitHub: upload the folder `out/report/` as an artifact "
        "(`actions/upload-artifact`) to read it ([this run's artifacts](https://github.com/octo/engine/actions/runs/4242#artifacts))."
    ), line
    assert str(tmp_path) not in text  # no runner path
    # the report's own summary.md names its index.html, as before
    assert "Full report: `index.html`" in (tmp_path / "out" / "report" / "summary.md").read_text(encoding="utf-8")


def test_without_githubs_variables_no_link_is_made(run_cli, tmp_path, monkeypatch):
    text = _summary(run_cli, tmp_path, monkeypatch, {**GITHUB, "GITHUB_REPOSITORY": "octo/engine)[x](https://evil.example"})
    line = next(ln for ln in text.splitlines() if ln.startswith("Full report:"))
    assert "](" not in line and "evil" not in text and line.endswith("to read it."), line


@pytest.mark.parametrize(
    "env,url",
    [
        (GITHUB, "https://github.com/octo/engine/actions/runs/4242#artifacts"),
        ({**GITHUB, "GITHUB_SERVER_URL": "https://ghe.example.com:8443"}, "https://ghe.example.com:8443/octo/engine/actions/runs/4242#artifacts"),
        ({**GITHUB, "GITHUB_RUN_ID": "12; rm"}, None),
        ({**GITHUB, "GITHUB_SERVER_URL": "javascript:alert(1)"}, None),
        ({}, None),
    ],
)
def test_the_artifacts_link_is_made_only_of_githubs_shapes(env, url):
    assert artifacts_url(env) == url


def test_printed_without_github_step_summary_the_summary_is_unchanged(run_cli, tmp_path, monkeypatch):
    for k in ("GITHUB_STEP_SUMMARY", *GITHUB):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.chdir(tmp_path)
    code, out, _err = run_cli("check", BOARD, "--engine", "mutant:replay-resets-count", "--report", "rep", "--github", "-q")
    assert code == 1 and "Full report: `rep/index.html`" in out.splitlines()


def test_step_links_are_documented_and_read_by_the_page(run_cli, tmp_path):
    code, _out, _err = run_cli("check", BOARD, "--engine", "mutant:replay-resets-count", "--report", str(tmp_path / "r"), "-q")
    assert code == 1
    page = sorted((tmp_path / "r" / "counterexamples").glob("*.html"))[0]
    html = page.read_text(encoding="utf-8")
    assert "/^#step-(\\d+)$/.exec(location.hash)" in html and "'#step-' + cur" in html  # read on load, written as one steps
    assert re.search(r'id="cex-\d+-\d+"', html)
    doc = (ROOT / "docs" / "reports.md").read_text(encoding="utf-8")
    assert "`counterexamples/NAME.html#step-N`" in doc and "`#step-0`" in doc and "`#cex-R-C`" in doc
