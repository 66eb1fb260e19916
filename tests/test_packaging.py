"""The README installs this project (not the deprecated 0.4.3 on the package index), and the version
sorts above 0.4.3 so that installing this project replaces the original plugin."""

from __future__ import annotations

import re
from pathlib import Path

from packaging.version import Version

import torch_tb_profiler
from tests.fixtures.paths import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def test_version_sorts_above_the_deprecated_release() -> None:
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    (version,) = re.findall(r'^version = "([^"]+)"$', pyproject, flags=re.MULTILINE)
    assert version == torch_tb_profiler.__version__
    assert Version(version) > Version("0.4.3")


def test_readme_installs_this_project() -> None:
    commands = [line.split("#")[0].strip() for line in README.splitlines()]
    # a bare "pip install torch-tb-profiler" resolves to the original plugin's 0.4.3
    assert not any(re.fullmatch(r"pip install torch-tb-profiler(\[[\w,]+\])?", c) for c in commands)
    assert 'pip install ".[s3,blob,gs]"' in README
    assert f"torch_tb_profiler-{torch_tb_profiler.__version__}-py3-none-any.whl" in README


def test_setup_keeps_exactly_two_commands() -> None:
    setup = README.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", setup, flags=re.DOTALL)
    assert [b.strip().count("\n") for b in blocks] == [0, 0]  # two one-line commands
    assert blocks[1].strip() == "bash scripts/test.sh"


def test_the_wheel_holds_the_page_and_the_metric_definitions(tmp_path: Path) -> None:
    """The MCP server's resources come from torch_tb_profiler/agents/metrics.md, a link to docs/metrics.md:
    a wheel must hold the text itself (and the built page)."""
    import subprocess
    import sys
    import zipfile

    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(tmp_path),
            str(REPO),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("torch_tb_profiler-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        assert "torch_tb_profiler/static/index.html" in names
        assert z.read("torch_tb_profiler/agents/metrics.md") == (REPO / "docs" / "metrics.md").read_bytes()
