"""The wheel carries the shipped policies and their suites: built, installed outside the
repository, `prompthooks test --library` runs them from an unrelated folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import REPO


@pytest.mark.wheel
def test_wheel_runs_the_library_suites_from_anywhere(tmp_path: Path) -> None:
    wheels, target, elsewhere = tmp_path / "wheels", tmp_path / "site", tmp_path / "elsewhere"
    elsewhere.mkdir()
    # An isolated build, as a release would: pip fetches the build backend pyproject names.
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                            "-w", str(wheels), str(REPO)],
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr
    (wheel,) = wheels.glob("prompthooks-*.whl")
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q",
                              "--target", str(target), str(wheel)],
                             capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr
    # The installed copy, not the checkout: PYTHONPATH comes before the editable install.
    env = {**os.environ, "PYTHONPATH": str(target)}
    where = subprocess.run([sys.executable, "-c",
                            "import prompthooks; print(prompthooks.__file__)"], capture_output=True, text=True, cwd=elsewhere, env=env, timeout=60)
    assert where.stdout.startswith(str(target)), where.stdout + where.stderr
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "test", "--library"],
                          capture_output=True, text=True, cwd=elsewhere, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = proc.stdout.splitlines()[-1]
    assert int(summary.split()[0]) >= 24 and summary.endswith("0 failed, 0 errors")
    assert "from reference verdicts (not a model's output)" in proc.stdout
