"""Typed use: the mypy plugin (``pandas_dp.mypy``) and the typed path ``pandas_dp.dp(df)``.

mypy (with the plugin and pandas-stubs, ``--strict``) checks, in one run: every
``python`` block of the README (a section's blocks are one module, as
tests/test_readme.py runs them), ``tests/typing/typed_path.py`` (precise
types, ``assert_type``) and ``tests/typing/mistakes.py`` (each line marked
``# error`` must be an error, and no other). Pyright, which has no plugins,
checks the README's "Typing" section, the typed path and the mistakes.
Skipped with the reason when mypy, pandas-stubs or pyright is missing.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "typing"
TYPED, MISTAKES = FIXTURES / "typed_path.py", FIXTURES / "mistakes.py"
TYPING_SECTION = "## Typing"

MYPY_CONFIG = """\
[mypy]
strict = True
plugins = pandas_dp.mypy
python_version = 3.11
# pandas_dp itself is checked by `mypy --strict pandas_dp`; here, only its users' code.
[mypy-pandas_dp.*]
ignore_errors = True
# dask ships partial annotations: untyped here, as in pyproject.toml.
[mypy-dask,dask.*,distributed,distributed.*]
ignore_missing_imports = True
follow_imports = skip
"""


def _readme_sections() -> dict[str, list[tuple[int, str]]]:
    """The README's python blocks by section, read as tests/test_readme.py reads them."""
    spec = importlib.util.spec_from_file_location("readme_blocks", ROOT / "tests/test_readme.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sections: dict[str, list[tuple[int, str]]] = module.PYTHON
    return sections


def _write_sections(folder: Path, headings: list[str]) -> list[Path]:
    """One module per README section (its blocks in order); returns their paths."""
    sections = _readme_sections()
    paths = []
    for number, heading in enumerate(headings):
        path = folder / f"readme_{number:02d}.py"
        path.write_text(f"# {heading}\n" + "".join(code for _, code in sections[heading]))
        paths.append(path)
    return paths


def _marked_lines(path: Path) -> set[int]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return {number for number, line in enumerate(lines, start=1) if "# error:" in line}


def _error_lines(output: str, path: Path) -> set[int]:
    """Lines of ``path`` that mypy or pyright reported an error on."""
    found = set()
    for line in output.splitlines():
        mypy = re.match(rf"{re.escape(str(path))}:(\d+): error", line)
        pyright = re.match(rf"\s*{re.escape(str(path))}:(\d+):\d+ - error", line)
        if match := mypy or pyright:
            found.add(int(match.group(1)))
    return found


def _errors_outside(output: str, paths: list[Path]) -> list[str]:
    return [
        line
        for line in output.splitlines()
        if re.search(r"(: error|- error)", line) and not any(str(p) in line for p in paths)
    ]


def _has_stubs() -> bool:
    try:
        importlib.metadata.version("pandas-stubs")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


@pytest.fixture(scope="module")
def mypy_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[Path]]:
    """One mypy run over the README's sections, the typed path and the mistakes."""
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("needs mypy (pip install -e '.[test]')")
    if not _has_stubs():
        pytest.skip("needs pandas-stubs (pip install -e '.[test]'): without it df.dp is untyped")
    folder = tmp_path_factory.mktemp("mypy")
    (folder / "mypy.ini").write_text(MYPY_CONFIG, encoding="utf-8")
    readme = _write_sections(folder, list(_readme_sections()))
    # pandas_dp as installed (pip install -e ".[test]"): no path given, none in the folder
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    command = [sys.executable, "-m", "mypy", "--config-file", str(folder / "mypy.ini")]
    command += ["--cache-dir", str(folder / "cache"), "--no-error-summary", "--show-absolute-path"]
    out = subprocess.run(
        [*command, *map(str, [*readme, TYPED, MISTAKES])],
        capture_output=True,
        text=True,
        env=env,
        cwd=folder,
        check=False,
    )
    assert "error: " not in out.stderr, out.stderr  # mypy itself failed (e.g. the plugin)
    return out.stdout, readme


def test_the_readme_type_checks_under_mypy_strict_with_the_plugin(
    mypy_run: tuple[str, list[Path]],
) -> None:
    output, readme = mypy_run
    found = [line for line in output.splitlines() if any(str(p) in line for p in readme)]
    assert found == []
    assert len(readme) >= 8


def test_the_typed_path_is_typed_precisely_under_mypy(mypy_run: tuple[str, list[Path]]) -> None:
    output, _ = mypy_run
    assert _error_lines(output, TYPED) == set(), output


def test_mistakes_stay_errors_under_mypy(mypy_run: tuple[str, list[Path]]) -> None:
    output, readme = mypy_run
    assert _error_lines(output, MISTAKES) == _marked_lines(MISTAKES), output
    assert _errors_outside(output, [*readme, TYPED, MISTAKES]) == []


def _pyright() -> str:
    """The pyright command, if it runs here (the PyPI wrapper fetches node's pyright once)."""
    command = shutil.which("pyright")
    if command is None:
        pytest.skip("needs pyright (pip install pyright): not installed")
    try:
        probe = subprocess.run(
            [command, "--version"], capture_output=True, text=True, timeout=300, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.skip("pyright is installed but did not start within 300 s")
    if probe.returncode != 0:
        pytest.skip(f"pyright is installed but cannot run here: {probe.stderr.strip()[-200:]}")
    return command


def test_pyright_types_the_typed_path_and_flags_mistakes(tmp_path: Path) -> None:
    command = _pyright()
    if not _has_stubs():
        pytest.skip("needs pandas-stubs (pip install -e '.[test]')")
    (section,) = _write_sections(tmp_path, [TYPING_SECTION])
    (tmp_path / "pyrightconfig.json").write_text(  # pandas_dp as installed: no extra path
        '{"typeCheckingMode": "strict", "pythonVersion": "3.11"}', encoding="utf-8"
    )
    out = subprocess.run(
        [command, "--pythonpath", sys.executable, "-p", str(tmp_path), section, TYPED, MISTAKES],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    output = out.stdout + out.stderr
    assert _error_lines(output, section) == set(), output
    # df.dp is a column to pyright (no plugin): the typed path's own lines must pass.
    assert _error_lines(output, TYPED) == {_line_of(TYPED, "assert_type(df.dp,")}, output
    assert _error_lines(output, MISTAKES) == _marked_lines(MISTAKES), output
    assert _errors_outside(output, [section, TYPED, MISTAKES]) == [], output


def _line_of(path: Path, text: str) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, start=1) if text in line)


def test_the_install_puts_the_package_on_a_path_type_checkers_read() -> None:
    """An editable install is a path in a ``.pth`` file, never an import hook; else a wheel.

    setuptools' editable finder (an import hook) hides the package from mypy
    and pyright; ``package-dir = {"" = "."}`` in pyproject.toml makes the
    editable install a plain path to this folder.  A regular install
    (``pip install .``) ships ``py.typed`` beside the package.
    """
    dist = importlib.metadata.distribution("pandas-dp")
    files = [str(f) for f in dist.files or []]
    pth = [f for f in files if f.endswith(".pth")]
    if pth:  # editable
        assert not [f for f in files if "_finder" in f], files
        (path,) = pth
        lines = Path(str(dist.locate_file(path))).read_text(encoding="utf-8").splitlines()
        assert [Path(line).resolve() for line in lines if line.strip()] == [ROOT.resolve()]
    else:
        assert any(f.replace("\\", "/").endswith("pandas_dp/py.typed") for f in files), files


def test_import_pandas_dp_never_imports_mypy() -> None:
    code = "import sys, pandas_dp, pandas_dp.surface.accessor; print('mypy' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
    )
    assert out.stdout.strip() == "False"
