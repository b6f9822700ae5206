"""What a reader copies from the README works.

Every ``python`` block runs here as written, on the generated data the library
ships (``pandas_dp.datasets``): a section (the text under one heading) is one
namespace, its blocks run in order, in an empty folder (a ledger file or a CSV
a block writes lands there).  Blocks that import dask run when it is installed.

The section "How accurate is this?" shows output that the current code gives:
its code blocks are doctests (``pycon``), each runs in order and in one
namespace, and its printed output must match (NORMALIZE_WHITESPACE, as the
package's doctests).  No block of that section may show unchecked output.
"""

from __future__ import annotations

import doctest
import functools
import importlib.util
import re
from fractions import Fraction
from pathlib import Path

import pandas as pd
import pytest

import pandas_dp
from pandas_dp.kinds.signature import RHO
from pandas_dp.mechanisms import key_selection as partition
from pandas_dp.mechanisms.keys import Grouping
from pandas_dp.pipeline.run import KINDS
from pandas_dp.surface._typed import SIGNATURES

README = Path(__file__).resolve().parents[1] / "README.md"
SECTION = "## How accurate is this?"


def _python_sections() -> dict[str, list[tuple[int, str]]]:
    """{heading: [(first line, code), ...]} of every section that has ``python`` blocks."""
    sections: dict[str, list[tuple[int, str]]] = {}
    heading, fence, start, code = "", None, 0, []
    lines = README.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        if fence is None and line.startswith("```"):
            fence, start, code = line[3:].strip(), number + 1, []
        elif fence is not None and line.startswith("```"):
            if fence == "python":
                sections.setdefault(heading, []).append((start, "\n".join(code) + "\n"))
            fence = None
        elif fence is not None:
            code.append(line)
        elif re.match(r"#{1,6} ", line):
            heading = line
    return sections


PYTHON = _python_sections()


def test_every_python_block_is_collected() -> None:
    text = README.read_text(encoding="utf-8")
    assert sum(len(blocks) for blocks in PYTHON.values()) == text.count("```python\n")
    assert len(PYTHON) >= 8


# The blocks run unseeded, as a user's would: a noisy share cut may pass 5% by chance, and the
# warning that says so is part of the answer, not a failure of the example.
@pytest.mark.filterwarnings("ignore::pandas_dp.errors.PoorAnswerWarning")
@pytest.mark.parametrize("heading", list(PYTHON))
def test_the_python_blocks_of_a_section_run_as_written(
    heading: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks = PYTHON[heading]
    for module in ("dask", "distributed"):
        if any(re.search(rf"^\s*(from|import) {module}\b", code, re.M) for _, code in blocks):
            imported = pytest.importorskip(module)
            if module == "distributed":  # any free port: another suite may hold 8787
                cluster = functools.partial(imported.LocalCluster, dashboard_address=":0")
                monkeypatch.setattr(imported, "LocalCluster", cluster)
    monkeypatch.chdir(tmp_path)
    # Keys that miss the data answer pure noise: every row must fall under a README key.
    grouping = Grouping.of.__func__  # type: ignore[attr-defined]

    def of(cls: type[Grouping], df: pd.DataFrame, by: object, keys: object) -> Grouping:
        group: Grouping = grouping(cls, df, by, keys)
        assert (group.codes(df) >= 0).all(), f"keys {group.keys.tolist()} miss rows of {by!r}"
        return group

    monkeypatch.setattr(Grouping, "of", classmethod(of))
    namespace: dict[str, object] = {"__name__": "__main__"}  # a script's main guard runs
    for line, code in blocks:
        exec(compile(code, f"{README}:{line}", "exec"), namespace)


def _section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return text[start : end if end >= 0 else len(text)]


def _blocks() -> list[tuple[str, str]]:
    """(language, body) of every fenced code block of the section."""
    return re.findall(r"```(\w*)\n(.*?)```", _section(), flags=re.DOTALL)


def test_the_section_shows_only_checked_code() -> None:
    blocks = _blocks()
    assert len(blocks) >= 2
    for language, body in blocks:
        assert language == "pycon", body[:60]
        assert body.lstrip().startswith(">>> "), body[:60]


def _run_doctests(blocks: list[str]) -> int:
    """Run ``pycon`` blocks in order in one namespace; fail with the report; the examples run."""
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(
        optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS, verbose=False
    )
    namespace: dict[str, object] = {}
    report: list[str] = []
    for number, body in enumerate(blocks, start=1):
        test = parser.get_doctest(body, namespace, f"README block {number}", str(README), 0)
        test.globs = namespace  # DocTest copies its globals: share one namespace, in order
        runner.run(test, out=report.append, clear_globs=False)
    if runner.failures:
        pytest.fail("".join(report))
    return int(runner.tries)


def test_the_section_runs_and_prints_what_it_shows() -> None:
    assert _run_doctests([body for _, body in _blocks()]) >= 8


FIRST_LOOK = "### A first look at a table"


def test_the_first_look_shows_what_describe_prints_next_to_pandas() -> None:
    text = README.read_text(encoding="utf-8")
    start = text.index(FIRST_LOOK)
    section = text[start : text.index("\n### ", start + len(FIRST_LOOK))]
    blocks = re.findall(r"```pycon\n(.*?)```", section, flags=re.DOTALL)
    assert len(blocks) == 1
    assert _run_doctests(blocks) >= 6


def test_the_bounds_table_is_what_bench_bounds_prints(shared_data: Path) -> None:
    """The accuracy table of ``clip="auto"`` and the manual recipe on PUMS incomes."""
    path = README.parent / "bench" / "bench_bounds.py"
    spec = importlib.util.spec_from_file_location("bench_bounds", path)
    assert spec is not None
    assert spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    shown = _section().split("<!-- bench_bounds: begin -->\n")[1].split("<!-- bench_bounds: end")[0]
    income = pd.read_csv(shared_data / "pums_1000.csv")[["income"]]
    assert shown.strip().splitlines() == bench.table(income)


def _etl_recipe() -> str:
    [code] = [code for _, code in PYTHON["## Budgets that outlive a process"] if "cron" in code]
    return code


def test_the_etl_recipe_holds_its_share_and_a_refused_run_spends_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code = compile(_etl_recipe(), "README ETL recipe", "exec")
    runs = 16  # 16 x 0.3 = 4.8 of 5: a 17th report does not fit
    for _ in range(runs):
        exec(code, {"__name__": "__main__"})
    path = tmp_path / "privacy-ledger.sqlite"
    before = pandas_dp.open_ledger(path).history("hr.salaries")
    with pytest.raises(SystemExit) as stop:
        exec(code, {"__name__": "__main__"})
    assert isinstance(stop.value.__cause__, pandas_dp.BudgetExceededError)
    ledger = pandas_dp.open_ledger(path)
    history = ledger.history("hr.salaries")
    assert history.equals(before)  # the refused run wrote nothing
    assert (history.state == "released").sum() == 2 * runs  # no run stopped half-way
    assert ledger.store("hr.salaries").spent() == Fraction(24, 5)
    assert ledger.store("hr.salaries").held() == 0


def _plus_minus(width: float) -> str:
    """A half-width as the README's planning table writes it."""
    if width >= 1e6:
        return f"±{width / 1e6:.2f}M"
    if width >= 1e5:
        return f"±{width / 1e3:.0f}k"
    return f"±{width:,.0f}"


def test_the_planning_table_is_what_half_width_gives() -> None:
    rows = re.findall(r"^\| ([\d.]+) \| (±\S+) \| (±\S+) \| (±\S+) \|$", _section(), re.M)
    assert len(rows) == 3
    for epsilon, count, total, mean in rows:
        e = float(epsilon)
        assert count == _plus_minus(pandas_dp.half_width("count", epsilon=e))
        assert total == _plus_minus(pandas_dp.half_width("sum", epsilon=e, clip=(0, 200_000)))
        width = pandas_dp.half_width("mean", epsilon=e, clip=(0, 200_000), n=1_000)
        assert mean == _plus_minus(width)


KEYS_SECTION = "## When you don't know the keys"


def _percent(p: float) -> str:
    """A chance as the README's table writes it."""
    return f"{p:.0e}" if p < 0.0005 else f"{100 * p:.1f}%"


def test_the_key_selection_table_is_what_release_probability_gives() -> None:
    text = README.read_text(encoding="utf-8").split(KEYS_SECTION, 1)[1].split("\n## ", 1)[0]
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    header, rows = lines[0], lines[1:]
    people = [int(cell) for cell in header.strip("| ").split(" | ")[1:-1]]
    assert len(rows) == 4
    for row in rows:
        cells = row.strip("| ").split(" | ")
        label = cells[0].strip("`")
        arguments = {name: float(value) for name, value in re.findall(r"(\w+)=([\d.]+)", label)}
        method = re.findall(r"method=(\w+)", label)
        groups = int(arguments.pop("max_groups", 1))
        plan = partition.selection_plan(  # type: ignore[misc]
            **arguments,  # type: ignore[arg-type]
            delta=1e-6,
            max_groups=groups,
            method=method[0] if method else None,
        )
        wanted = [_percent(partition.release_probability(plan, n)) for n in people]
        assert cells[1:-1] == wanted, label
        assert int(cells[-1]) == partition.people_for_half(plan), label


# ---------------------------------------------------- the table of every release

GLANCE = "### Every release at a glance"


def _glance() -> dict[str, list[str]]:
    """The rows of the README's table of every release: release name -> its cells."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index(GLANCE) :].split("\n#", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `"):
            rows[cells[0].strip("`")] = cells[1:]
    return rows


def test_every_release_and_kind_is_in_the_table_of_releases() -> None:
    """Each signature (with its options as declared) and each kind of the registry has a row."""
    rows = _glance()
    for signature in SIGNATURES:
        rho, ci, clip, keyless, dask = rows[signature.name]
        names = {p.name for p in signature.params}
        gaussian = any(p is RHO for p in signature.params)
        assert rho == ("discrete Gaussian" if gaussian else "at ε = √(2ρ)"), signature.name
        assert ci == ("yes" if "ci" in names and signature.name != "describe" else "—")
        assert clip == ("yes" if signature.clipped else "—"), signature.name
        assert (keyless, dask) == ("yes", "yes"), signature.name
    for name in KINDS:
        assert name in rows, f"the kind {name!r} has no row in the README's table of releases"
