"""Case files collected as pytest tests (opt-in: the ini's ``prompthooks_cases`` globs).

Each case is one test: PASS passes, FAIL fails with what was expected and seen, and ERROR (a
hook gave no verdict) fails with a message that says nothing was judged. The file's cassette
follows the run's record mode, as the fixtures' do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import PromptHooksError
from ..model.chain import ModelChain
from ..model.recording import Cassette
from .cases import Case, CaseFile, cassette_path, config_for, read_case_file, run_case

if TYPE_CHECKING:
    from ..api import Config


class CaseFailed(Exception):
    """A case that did not pass: its message is the whole report, no traceback."""


class PolicyCases(pytest.File):
    """One case file; its config and cassette are prepared once, for its first case run."""

    spec: CaseFile | None = None
    prepared: tuple[Config, Cassette] | None = None

    def __init__(self, *, cassette_for: Callable[[Path], Cassette], **kwargs: Any) -> None:
        # The run's recorder, handed in by the plugin: its cassette for a path, in the run's
        # record mode.
        super().__init__(**kwargs)
        self.cassette_for = cassette_for

    def collect(self) -> Iterator[PolicyCase]:
        try:
            self.spec = read_case_file(self.path)
        except PromptHooksError as exc:
            raise self.CollectError(str(exc)) from None
        for case in self.spec.cases:
            yield PolicyCase.from_parent(self, name=case.name, case=case)

    def prepare(self) -> tuple[CaseFile, Config, Cassette]:
        assert self.spec is not None
        if self.prepared is None:
            config = config_for(self.path, self.spec)
            if config.errors:
                raise PromptHooksError(config.errors[0])
            self.prepared = config, self.cassette_for(cassette_path(self.path, self.spec))
        return (self.spec, *self.prepared)


class PolicyCase(pytest.Item):
    def __init__(self, *, case: Case, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case

    def runtest(self) -> None:
        assert isinstance(self.parent, PolicyCases)
        try:
            spec, config, cassette = self.parent.prepare()
        except PromptHooksError as exc:
            raise CaseFailed(f"ERROR, not judged: {exc}") from None
        models = ModelChain(cassette=cassette, model=spec.model, suite=True)
        said = len(cassette.unrecorded)  # the file's cases share one cassette
        result = run_case(self.path, self.case, config, spec.budget, models)
        if result.status == "error":
            detail = result.detail.removeprefix("not judged: ")
            raise CaseFailed(f"ERROR, not judged: {detail}")
        if result.status == "fail":
            raise CaseFailed(f"FAIL: {result.detail}")
        if cassette.unrecorded[said:]:  # judged, but the recording asked for is not there
            raise CaseFailed("; ".join(cassette.unrecorded[said:]))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str | Any:
        if isinstance(excinfo.value, CaseFailed):
            return f"{self.path.name}: {self.name}: {excinfo.value}"
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"case: {self.name}"
