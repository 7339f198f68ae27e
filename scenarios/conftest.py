"""Let pytest collect every scenario file in this folder as a test (docs/scenarios.md)."""

from __future__ import annotations

import pytest

from bpcheck.scenarios import load_scenario, run_scenario


def pytest_collect_file(parent, file_path):
    if file_path.suffix == ".toml":
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


class ScenarioFile(pytest.File):
    def collect(self):
        yield ScenarioItem.from_parent(self, name=self.path.stem)


class ScenarioItem(pytest.Item):
    def runtest(self):
        sc = load_scenario(self.path, str(self.path.relative_to(self.config.rootpath)))
        res = run_scenario(sc)
        if not res.passed:
            raise ScenarioFailure(res)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, ScenarioFailure):
            res = excinfo.value.result
            return f"scenario {res.name!r} failed:\n" + "\n".join(f"  {f}" for f in res.failures)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, 0, f"scenario: {self.name}"


class ScenarioFailure(Exception):
    def __init__(self, result):
        super().__init__(result.name)
        self.result = result
