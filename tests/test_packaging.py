"""The wheel as a user installs it: it carries the built-in policies, and they are reachable by
name from any directory.

The wheel is built from this checkout with the project's own build backend (hatchling, a dev
dependency; ``--no-build-isolation`` so that the build needs no index) and installed into a
fresh virtualenv. That virtualenv sees the system's site-packages, for urlvet's dependencies
(``pip install --no-deps`` of the wheel alone): it keeps the test offline and fast. A test
asserts that the urlvet it runs is the wheel's copy, not a checkout on the path. The
commands then run in a subprocess with a minimal environment, from a directory outside the
repository. (A plain virtualenv with the dependencies installed from the index is the same
check with the network: see the README's "Install".)
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
POLICIES = ROOT / "src" / "urlvet" / "policies"
PIP = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    build = subprocess.run(
        [*PIP, "wheel", "--no-deps", "--no-build-isolation", "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert build.returncode == 0, (
        "building the wheel failed (the build backend, hatchling, is in the dev extra: "
        f"pip install -e '.[dev]'):\n{build.stderr}"
    )
    [built] = out.glob("urlvet-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv with the wheel installed; its bin directory."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    install = subprocess.run(
        [*PIP, "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert install.returncode == 0, install.stderr
    return env_dir / "bin"


def _run(
    bin_dir: Path, cwd: Path, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    # Nothing of the test run's environment: no PYTHONPATH, no URLVET_* settings.
    env = {"PATH": f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin", "HOME": str(cwd)}
    env["URLVET_NO_HSTS_AGE_WARNING"] = "1"
    return subprocess.run(
        list(args),
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A working directory outside the repository, and a repository root of its own."""
    (tmp_path / ".git").mkdir()
    assert ROOT not in tmp_path.parents
    return tmp_path


def test_the_wheel_carries_the_policies_and_their_schema(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in ("default.yaml", "strict.yaml", "policy.schema.json", "__init__.py"):
        assert f"urlvet/policies/{name}" in names
    assert "urlvet/py.typed" in names
    assert "urlvet/data/protected_domains.txt" in names
    assert not any(n.startswith(("tests/", "rules/", "bench/")) for n in names)
    with zipfile.ZipFile(wheel) as z:
        for name in ("default.yaml", "strict.yaml", "policy.schema.json"):
            assert z.read(f"urlvet/policies/{name}") == (POLICIES / name).read_bytes()
        entry_points = z.read("urlvet-0.1.0.dist-info/entry_points.txt").decode()
    assert "urlvet = urlvet.cli:console" in entry_points


def test_the_installed_library_loads_the_named_policies(installed: Path, elsewhere: Path) -> None:
    script = (
        "import urlvet, sys\n"
        "print(urlvet.__file__)\n"
        "strict = urlvet.load_policy('strict')\n"
        "default = urlvet.load_policy('default')\n"
        "assert default == urlvet.Policy(), 'default differs from the built-in default'\n"
        "assert strict.thresholds.block.value == 'medium'\n"
        "print(strict.limits.max_url_length)\n"
    )
    result = _run(installed, elsewhere, "python", "-c", script)
    assert result.returncode == 0, result.stderr
    where, length = result.stdout.split()
    assert Path(where).is_relative_to(installed.parent), f"urlvet came from {where}"
    assert length == "1024"


def test_the_installed_command_uses_a_named_policy(installed: Path, elsewhere: Path) -> None:
    url = "https://8.8.8.8/"  # a public IP literal: medium, which strict blocks
    balanced = _run(installed, elsewhere, "urlvet", "check", "--no-dns", url)
    strict = _run(installed, elsewhere, "urlvet", "check", "--no-dns", "--policy", "strict", url)
    assert (balanced.returncode, balanced.stdout.split()[0]) == (0, "WARN"), balanced.stderr
    assert (strict.returncode, strict.stdout.split()[0]) == (1, "BLOCK"), strict.stderr


def test_the_installed_command_shows_a_built_in_policy(installed: Path, elsewhere: Path) -> None:
    result = _run(installed, elsewhere, "urlvet", "policy", "show", "default")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (POLICIES / "default.yaml").read_text(encoding="utf-8")


def test_a_team_policy_extends_a_built_in_one_by_name(installed: Path, elsewhere: Path) -> None:
    (elsewhere / "pyproject.toml").write_text(
        '[tool.urlvet]\npolicy = "team.yaml"\n', encoding="utf-8"
    )
    (elsewhere / "team.yaml").write_text(
        "extends: strict\ndomains: {shorteners: [go.example.net]}\n", encoding="utf-8"
    )
    checked = _run(installed, elsewhere, "urlvet", "policy", "check", "team.yaml")
    assert checked.returncode == 0, checked.stderr
    assert "extends: strict (built-in) -> default (built-in)" in checked.stdout
    found = _run(installed, elsewhere, "urlvet", "check", "--no-dns", "https://go.example.net/x")
    assert "UV212" in found.stdout, found.stderr
    settings = _run(installed, elsewhere, "urlvet", "check", "--show-settings")
    assert settings.stdout.splitlines()[0].endswith("pyproject.toml:2: [tool.urlvet] policy")


def test_the_docs_never_install_urlvet_from_an_index() -> None:
    # No package index has urlvet: a command that asks one for it cannot work.
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for path in docs:
        text = path.read_text(encoding="utf-8")
        assert "pip install urlvet" not in text, path
        assert "install 'urlvet[" not in text, path


def test_the_quickstart_installs_from_the_checkout_and_runs_the_tests_as_ci_does() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quickstart = readme.split("## Quickstart", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    install, tests = quickstart.splitlines()
    assert install.startswith("pip install -e '.[dev,mcp,spark]' && urlvet check --no-dns ")
    assert tests == "bash tests/run"
    assert "\nbash tests/run\n" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
