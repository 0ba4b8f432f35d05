"""The layer rules of CONTRIBUTING.md, checked: no import cycles, who may import the server, a generated API that
matches the catalog, shapes and examples that come from the catalog."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import fdkit
from fdkit.catalog.endpoints import CATALOG

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "fdkit"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {_module_name(p): p for p in PKG.rglob("*.py")}


def _resolve(module: str, node: ast.ImportFrom | ast.Import, is_pkg: bool) -> list[str]:
    """The fdkit modules one import statement names."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "fdkit"]
    base = module.split(".") if is_pkg else module.split(".")[:-1]
    if node.level:
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target.split(".")[0] != "fdkit":
        return []
    out = []
    for alias in node.names:
        sub = f"{target}.{alias.name}"
        out.append(sub if sub in MODULES else target)
    return out


def _imports(module: str, *, top_level_only: bool, modules: dict[str, Path] | None = None) -> set[str]:
    """The fdkit modules ``module`` imports: at module level only, or anywhere (function bodies included).

    Imports under ``if TYPE_CHECKING:`` are left out either way: they never run.
    """
    modules = MODULES if modules is None else modules
    path = modules[module]
    tree = ast.parse(path.read_text())
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.update(_resolve(module, node, path.name == "__init__.py"))
            return
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in node.orelse:
                visit(sub)
            return
        if top_level_only and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return {m for m in found if m in modules and m != module}


def _cycles(graph: dict[str, set[str]], modules: dict[str, Path]) -> list[list[str]]:
    """Every import circle of a module graph (a package's __init__ importing its own submodules is no circle)."""
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def dfs(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if nxt.startswith(node + ".") and modules[node].name == "__init__.py":
                continue
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt) :] + [nxt] if nxt in stack else [node, nxt])
            elif nxt not in state:
                dfs(nxt, [*stack, nxt])
        state[node] = 2

    for m in sorted(graph):
        if m not in state:
            dfs(m, [m])
    return cycles


def test_no_import_cycles_between_fdkit_modules():
    # function-local imports count: a lazy import is an edge like any other (lint-imports checks the same in CI)
    graph = {m: _imports(m, top_level_only=False) for m in MODULES}
    assert not _cycles(graph, MODULES)


def _flat_graph(folder: Path) -> tuple[dict[str, set[str]], dict[str, Path]]:
    """The import graph of a folder of scripts (imported by bare name), function-local imports included."""
    modules = {p.stem: p for p in folder.glob("*.py")}
    graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        named = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        named |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        graph[name] = {m for m in named if m in modules and m != name}
    return graph, modules


def test_no_import_cycles_among_the_scripts_and_benchmarks():
    for folder in ("scripts", "benchmarks"):
        assert not _cycles(*_flat_graph(ROOT / folder)), folder


def test_the_cycle_check_sees_function_local_imports(tmp_path):
    (tmp_path / "a.py").write_text("import b\n")
    (tmp_path / "b.py").write_text("def f():\n    from a import x\n")
    (tmp_path / "c.py").write_text("import a\n")
    assert _cycles(*_flat_graph(tmp_path)) == [["a", "b", "a"]]


def test_the_client_side_never_imports_the_server_at_module_level():
    client_side = [m for m in MODULES if not m.startswith(("fdkit.server", "fdkit.webhooks")) and m != "fdkit.cli"]
    offenders = {
        m: sorted(i for i in _imports(m, top_level_only=True) if i.startswith("fdkit.server")) for m in client_side
    }
    assert not {m: v for m, v in offenders.items() if v}
    # and at run time: importing fdkit and fetching from the cache loads neither FastAPI nor the server package
    code = "import sys, fdkit\nprint(any(m.startswith(('fastapi', 'fdkit.server', 'uvicorn')) for m in sys.modules))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "False", r.stderr


def test_webhooks_never_import_the_server():
    for m in (m for m in MODULES if m.startswith("fdkit.webhooks")):
        assert not [i for i in _imports(m, top_level_only=False) if i.startswith("fdkit.server")], m


def test_the_generated_api_matches_the_catalog():
    spec = importlib.util.spec_from_file_location("generate_api", ROOT / "scripts" / "generate_api.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    for path, make in gen.OUTPUTS.items():
        assert path.read_text() == make(), f"{path.name} is stale: run python scripts/generate_api.py"


@pytest.mark.parametrize("name", [n for n, ep in CATALOG.items() if ep.kind != "listing"])
def test_every_dataset_function_has_the_catalog_signature(name):
    ep = CATALOG[name]
    for fn, skip in ((getattr(fdkit, name), 0), (getattr(fdkit.Client, name), 1)):
        params = list(inspect.signature(fn).parameters.values())[skip:]
        named = [p.name for p in params if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
        assert sorted(named) == sorted(ep.param_names), (name, named)
        if named:
            assert named[0] == (ep.ticker_param if ep.ticker_param in ep.param_names else ep.param_names[0])
        assert {"raw", "errors", "progress"} <= {p.name for p in params}
        assert fn.__doc__ and ">>> " in fn.__doc__ and ep.path in fn.__doc__


def test_every_data_endpoint_has_examples_from_the_catalog():
    for ep in CATALOG.values():
        if ep.kind == "listing":
            continue
        # no parameter can make a 400 where all are optional free text (the seed documents no 400 for the rate
        # snapshot: without a bank it answers every bank)
        assert ep.invalid_examples or not ep.params or ep.name == "interest_rate_snapshot", ep.name
        assert ep.examples, ep.name
    doc = fdkit.server.openapi.build_openapi()
    prices = {p["name"]: p for p in doc["paths"]["/prices"]["get"]["parameters"]}
    assert prices["ticker"]["schema"]["example"] == CATALOG["prices"].examples[0]["ticker"]


def test_no_shape_knowledge_outside_the_shapes_module_and_catalog():
    """Endpoint names are not branched on in frames, server, OpenAPI, mirror or the receiver."""
    for rel in ("frames/typed.py", "mirror.py", "server/openapi.py", "server/app.py", "webhooks/receiver.py"):
        text = (PKG / rel).read_text()
        assert "ep.name ==" not in text and "endpoint.name ==" not in text, rel


#: the most `# fmt: skip` markers the library and the pipeline may hold (issue 41: where a table reads better aligned)
MOST_FORMAT_SKIPS = 60
#: the code the budgets below hold: the library and the reference-data pipeline (issue 41 item 2: not in the wheel)
CODE_ROOTS = ("fdkit", "refdata")


def test_the_library_is_formatted_by_the_formatter_not_by_hand():
    """`# fmt: skip` (a statement the formatter leaves as typed) stays rare in fdkit/ and refdata/: a few dozen."""
    marked = {
        str(path.relative_to(ROOT)): n
        for root in CODE_ROOTS
        for path in sorted((ROOT / root).rglob("*.py"))
        if (n := path.read_text().count("# fmt: skip"))
    }
    assert sum(marked.values()) <= MOST_FORMAT_SKIPS, marked


#: the size and complexity budget of a function of fdkit/ (issue 41 item 3), and the reviewed exceptions to it
MOST_LINES = 60
MOST_COMPLEXITY = 15
GENERATED = {"fdkit/api.py", "fdkit/client/methods.py"}


def _code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """A function's lines, its docstring not counted (a Google-style docstring with its example is wanted)."""
    lines = node.end_lineno - node.lineno + 1  # type: ignore[operator]
    first = node.body[0] if node.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        lines -= first.end_lineno - first.lineno + 1  # type: ignore[operator]
    return lines


def function_sizes(root: Path = ROOT) -> dict[tuple[str, str], int]:
    """Every function of fdkit/ and refdata/ over the line budget: ``(path, name) -> lines of code``."""
    out = {}
    for path in sorted(p for code in CODE_ROOTS for p in (root / code).rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel in GENERATED:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _code_lines(node) > MOST_LINES:
                key = (rel, node.name)
                out[key] = max(out.get(key, 0), _code_lines(node))
    return out


def function_complexities(root: Path = ROOT) -> dict[tuple[str, str], int]:
    """Every function of fdkit/ and refdata/ over ruff's C901 budget: ``(path, name) -> complexity``."""
    import json
    import re

    found = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--select", "C901", "--output-format", "json", "--exit-zero"]
        + ["--config", f"lint.mccabe.max-complexity={MOST_COMPLEXITY}", *CODE_ROOTS],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    out = {}
    for finding in json.loads(found.stdout):
        name, complexity = re.fullmatch(r"`(.+)` is too complex \((\d+) > \d+\)", finding["message"]).groups()
        rel = Path(finding["filename"]).resolve().relative_to(root.resolve()).as_posix()
        if rel not in GENERATED:
            out[(rel, name)] = max(out.get((rel, name), 0), int(complexity))
    return out


def _exceptions() -> list[dict]:
    import tomllib

    return tomllib.loads((ROOT / "tests" / "budget_exceptions.toml").read_text())["exception"]


def budget_breaches(sizes: dict, complexities: dict, exceptions: list[dict]) -> list[str]:
    """What breaks the budget: a function over it not listed, a listed one grown, a listed figure no longer true."""
    listed = {(e["path"], e["function"]): e for e in exceptions}
    problems = []
    for e in exceptions:
        if not str(e.get("reason", "")).strip():
            problems.append(f"{e['path']}:{e['function']}: an exception without a reason")
    for figure, found, most in (("lines", sizes, MOST_LINES), ("complexity", complexities, MOST_COMPLEXITY)):
        for key, value in sorted(found.items()):
            allowed = listed.get(key, {}).get(figure)
            if allowed is None:
                problems.append(f"{key[0]}:{key[1]}: {figure} {value} over {most}, not in tests/budget_exceptions.toml")
            elif value > allowed:
                problems.append(f"{key[0]}:{key[1]}: {figure} {value}, grown past its exception's {allowed}")
        for key, e in sorted(listed.items()):
            if figure in e and found.get(key, 0) < e[figure]:
                now = found.get(key)
                problems.append(
                    f"{key[0]}:{key[1]}: {figure} is {now if now else f'within {most}'} now, the exception says "
                    f"{e[figure]}: lower it (or remove the entry)"
                )
    return problems


def test_no_function_over_the_size_and_complexity_budget_but_the_reviewed_exceptions():
    """At most 60 lines of code and C901 complexity 15 a function, except the reviewed list, which only shrinks."""
    assert budget_breaches(function_sizes(), function_complexities(), _exceptions()) == []


def test_the_budget_check_bites():
    """A function grown, a new one over the budget, a stale or unexplained exception: each is named."""
    entry = {"path": "fdkit/x.py", "function": "f", "lines": 70, "reason": "a reason"}
    assert budget_breaches({("fdkit/x.py", "f"): 70}, {}, [entry]) == []
    assert "grown" in budget_breaches({("fdkit/x.py", "f"): 71}, {}, [entry])[0]
    assert "lower it" in budget_breaches({("fdkit/x.py", "f"): 65}, {}, [entry])[0]
    assert "not in tests/budget_exceptions.toml" in budget_breaches({("fdkit/y.py", "g"): 61}, {}, [entry])[0]
    assert "complexity 16 over 15" in budget_breaches({("fdkit/x.py", "f"): 70}, {("fdkit/x.py", "f"): 16}, [entry])[0]
    assert "without a reason" in budget_breaches({("fdkit/x.py", "f"): 70}, {}, [{**entry, "reason": " "}])[0]
