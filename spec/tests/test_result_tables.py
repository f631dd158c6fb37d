"""The result tables a reader sees match the results they name: every stack row of every table in the README's
"Latest results" and in docs/results.md is checked, number by number, against the results.json of the set linked
last before the table in its section, at the precision the cell shows. A column this test does not know fails, so a
new column comes with the figure it is read from."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable

import pytest

ROOT = Path(__file__).resolve().parents[2]

SET_LINK = re.compile(r"results/(?P<name>[0-9A-Za-z_-]+)/")
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def sections(text: str, level: str = "## ") -> list[str]:
    """The text cut at each heading of `level` (the part before the first one included)."""
    return re.split(rf"(?m)^(?={re.escape(level)})", text)


def tables(section: str) -> list[tuple[str, list[str], list[list[str]]]]:
    """(text before the table, header cells, body rows) for each Markdown table of a section."""
    found, lines = [], section.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"^\|\s*:?-{3,}", lines[i + 1]):
            header = cells(lines[i])
            body, j = [], i + 2
            while j < len(lines) and lines[j].startswith("|"):
                body.append(cells(lines[j]))
                j += 1
            found.append(("\n".join(lines[:i]), header, body))
            i = j
        else:
            i += 1
    return found


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def numbers(cell: str) -> list[str]:
    return NUMBER.findall(cell)


# --- the figures, read from one stack's record of a results.json --------------------------------------------------

def summary(st: dict) -> dict:
    return st["summary"]


def at_max(st: dict) -> dict:
    s = summary(st)
    return s["by_concurrency"][s["max_rps_at"]]


def own_point(st: dict, fraction: float) -> dict:
    for p in summary(st).get("open_loop_own") or []:
        if p["fraction"] == fraction:
            return p
    raise KeyError(f"{st['name']} has no open-loop point at {fraction:.0%}")


def warm_up_by_rule(st: dict) -> float:
    return next(w["seconds"] for w in st["warmups"] if "metric" in w.get("rule", {}))


def argon2(st: dict) -> dict | None:
    return summary(st).get("argon2")


def cpu_per_login(st: dict) -> float:
    # Where logins are shed (argon2), per login served; elsewhere every answer is a login.
    a = argon2(st)
    return a["cpu_ms_per_login"] if a else at_max(st)["cpu_ms_per_request"]


def rate_at(st: dict) -> list[float]:
    """The closed-loop maximum and the concurrency it was reached at."""
    return [summary(st)["max_rps"], int(summary(st)["max_rps_at"])]


def fly(st: dict) -> dict:
    """The fly.io model's figures (fly-shared-cpu-1x / fly-performance-1x sets)."""
    return summary(st)["fly"]


def startup(st: dict) -> float:
    s = st["startup_s"]
    return s["median"] if isinstance(s, dict) else s


Figures = Callable[[dict], list[float]]

COLUMNS: dict[str, Figures] = {
    "logins/s": lambda st: [summary(st)["max_rps"]],
    "logins/s (at c)": rate_at,
    "refreshes/s (at c)": rate_at,
    "CPU ms/login": lambda st: [cpu_per_login(st)],
    "CPU ms/refresh": lambda st: [at_max(st)["cpu_ms_per_request"]],
    "own ms/refresh": lambda st: [at_max(st)["own_cost_ms_per_request"]],
    "hand-offs/refresh": lambda st: [at_max(st)["switches_per_request"]],
    "PostgreSQL CPU ms/refresh": lambda st: [at_max(st)["pg_cpu_ms_per_request"]],
    "CPU ÷ floor": lambda st: [summary(st)["floor_ratio"]["by_concurrency"][summary(st)["max_rps_at"]]
                               ["cpu_ms_per_request"]],
    "own ms/login at max / 25 % / 50 %": lambda st: [at_max(st)["own_cost_ms_per_request"],
                                                     own_point(st, 0.25)["own_cost_ms_per_request"],
                                                     own_point(st, 0.5)["own_cost_ms_per_request"]],
    "hand-offs/login at max / 25 % / 50 %": lambda st: [at_max(st)["switches_per_request"],
                                                        own_point(st, 0.25)["switches_per_request"],
                                                        own_point(st, 0.5)["switches_per_request"]],
    "p99 ms at 50 %": lambda st: [own_point(st, 0.5)["pooled_latency_ms"]["p99"]],
    "p99 ms at 25 % / 50 %": lambda st: [own_point(st, 0.25)["pooled_latency_ms"]["p99"],
                                         own_point(st, 0.5)["pooled_latency_ms"]["p99"]],
    "warm-up s": lambda st: [warm_up_by_rule(st)],
    "RSS MiB": lambda st: [summary(st)["rss_steady_mib"]],
    "start-up s": lambda st: [startup(st)],
    "start-up from empty balance s": lambda st: [fly(st)["startup_empty_balance_s"]],
    "sustained logins/s (at c)": lambda st: [fly(st)["sustained_rps"], int(fly(st)["sustained_at"])],
    "p99 ms sustained": lambda st: [fly(st)["sustained_p99_ms"]],
    "burst logins/s": lambda st: [fly(st)["burst_rps"]],
    "burst lasts s": lambda st: [fly(st)["burst_s"]],
    "per core": lambda st: [argon2(st)["logins_per_s_per_core"]],
    "of the argon2id ceiling": lambda st: [100 * argon2(st)["of_argon2id_ceiling_per_core"]],
    "× Keycloak per vCPU": lambda st: [argon2(st)["vs_keycloak_per_vcpu"]],
}
SHED_AT = re.compile(r"^c=(?P<c>\d+): logins/s · share of answers 503$")


def figures_for(column: str) -> Figures:
    if column in COLUMNS:
        return COLUMNS[column]
    m = SHED_AT.match(column)
    if m:
        def shed(st: dict, c: str = m.group("c")) -> list[float]:
            point = argon2(st)["by_concurrency"][c]
            return [point["logins_per_s"], 100 * point["shed_share"]]
        return shed
    raise KeyError(column)


def shown(value: float, cell_number: str) -> str:
    """value as the cell shows it: as many decimals, thousands separated where the cell separates them."""
    decimals = len(cell_number.partition(".")[2])
    return f"{value:,.{decimals}f}" if "," in cell_number else f"{value:.{decimals}f}"


def mismatches(document: Path, results: Path) -> list[str]:
    found = []
    text = document.read_text()
    if document.name == "README.md":
        text = next(s for s in sections(text) if s.startswith("## Latest results"))
    for section in sections(text):
        for before, header, body in tables(section):
            if header[0] != "stack":
                continue
            sets = SET_LINK.findall(before)
            where = f"{document.relative_to(ROOT) if document.is_relative_to(ROOT) else document.name}, " \
                    f"table {' | '.join(header)}"
            if not sets:
                found.append(f"{where}: no results set linked before it")
                continue
            data = json.loads((results / sets[-1] / "results.json").read_text())
            stacks = {st["name"]: st for st in data["stacks"]}
            for row in body:
                st = stacks.get(row[0])
                if st is None:
                    found.append(f"{where}: {row[0]} is not in {sets[-1]}")
                    continue
                for column, cell in zip(header[1:], row[1:]):
                    try:
                        expected = figures_for(column)(st)
                    except KeyError as e:
                        found.append(f"{where}: no figure known for column {column!r} ({e})")
                        continue
                    got = numbers(cell)
                    want = [shown(v, n) for v, n in zip(expected, got)]
                    if len(got) != len(expected) or got != want:
                        found.append(f"{where}: {row[0]} {column}: shows {cell!r}, {sets[-1]} has "
                                     f"{', '.join(want) or expected}")
    return found


def test_a_wrong_figure_is_found(tmp_path):
    # The checker itself: one right row passes; a changed digit, a cell with a figure too few and a column nobody
    # reads from are each reported.
    (tmp_path / "results" / "s1").mkdir(parents=True)
    record = {"name": "actix", "startup_s": {"median": 0.081}, "warmups": [
        {"concurrency": 256, "seconds": 91.2, "rule": {"metric": "cpu_ms_per_request"}}],
        "summary": {"max_rps": 1882.0, "max_rps_at": "64", "rss_steady_mib": 29.9,
                    "by_concurrency": {"64": {"cpu_ms_per_request": 1.5853, "own_cost_ms_per_request": 0.184,
                                              "switches_per_request": 7.418}},
                    "open_loop_own": [{"fraction": 0.25, "own_cost_ms_per_request": 1.0416,
                                       "switches_per_request": 8.81, "pooled_latency_ms": {"p99": 7.651}},
                                      {"fraction": 0.5, "own_cost_ms_per_request": 0.638,
                                       "switches_per_request": 9.1, "pooled_latency_ms": {"p99": 19.887}}]}}
    (tmp_path / "results" / "s1" / "results.json").write_text(json.dumps({"stacks": [record]}))
    head = ("| stack | logins/s | CPU ms/login | own ms/login at max / 25 % / 50 % | p99 ms at 25 % / 50 % "
            "| warm-up s | RSS MiB | start-up s |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
    page = tmp_path / "results.md"
    page.write_text("## A\n\n[set](results/s1/)\n\n" + head +
                    "| actix | 1,882 | 1.59 | 0.18 / 1.04 / 0.64 | 7.7 / 19.9 | 91 | 30 | 0.08 |\n")
    assert mismatches(page, tmp_path / "results") == []
    page.write_text("## A\n\n[set](results/s1/)\n\n" + head +
                    "| actix | 1,882 | 1.69 | 0.18 / 1.04 | 7.7 / 19.9 | 91 | 30 | 0.08 |\n\n"
                    "| stack | mood |\n| --- | --- |\n| actix | good |\n")
    found = mismatches(page, tmp_path / "results")
    assert len(found) == 3, found
    assert "CPU ms/login: shows '1.69'" in found[0] and "1.59" in found[0]
    assert "own ms/login at max / 25 % / 50 %: shows '0.18 / 1.04'" in found[1]
    assert "no figure known for column 'mood'" in found[2]


def one_cpu(cpuset: str | None) -> bool:
    """cpuset names exactly one CPU ("1", not "0-1" or "0,1")."""
    return bool(cpuset) and re.fullmatch(r"\d+", cpuset.strip()) is not None


def fly_sets_off_one_cpu(document: Path, results: Path) -> list[str]:
    """Every fly set a document links: each stack's server and the floor ran confined to exactly one CPU, as a fly
    1x machine's one vCPU (its cgroup's cpuset)."""
    found = []
    for name in dict.fromkeys(SET_LINK.findall(document.read_text())):
        path = results / name / "results.json"
        if not path.exists():
            found.append(f"{name}: linked, but it has no results.json")
            continue
        data = json.loads(path.read_text())
        if not str(data["environment"]["settings"].get("profile") or "").startswith("fly-"):
            continue
        for st in data["stacks"] + ([data["floor"]] if data.get("floor") else []):
            cpuset = (st.get("cgroup") or {}).get("cpuset")
            if not one_cpu(cpuset):
                found.append(f"{name}: {st['name']} ran on cpuset {cpuset!r}, not one CPU")
    return found


@pytest.mark.parametrize("document", ["README.md", "docs/results.md"])
@pytest.mark.parametrize("check", [mismatches, fly_sets_off_one_cpu], ids=lambda check: check.__name__)
def test_every_table_and_set_a_document_shows_holds(check, document):
    # every figure matches its results set; every fly set linked ran each server and the floor on one CPU
    found = check(ROOT / document, ROOT / "results")
    assert not found, "\n".join(found)


def test_a_fly_set_on_two_cpus_is_found(tmp_path):
    def write(name: str, profile: str, cpusets: dict[str, str | None]) -> None:
        (tmp_path / name).mkdir()
        stacks = [{"name": n, "cgroup": {"cpuset": c}} for n, c in cpusets.items() if n != "floor"]
        data = {"environment": {"settings": {"profile": profile}}, "stacks": stacks,
                "floor": {"name": "floor", "cgroup": {"cpuset": cpusets.get("floor")}}}
        (tmp_path / name / "results.json").write_text(json.dumps(data))
    write("good", "fly-shared-cpu-1x", {"actix": "1", "zio": "1", "floor": "1"})
    write("local", "local", {"actix": None, "floor": None})
    write("wide", "fly-performance-1x", {"actix": "1", "zio": "0-1", "floor": None})
    page = tmp_path / "page.md"
    page.write_text("[a](results/good/) [b](results/local/) [c](results/wide/) [d](results/gone/)\n")
    assert fly_sets_off_one_cpu(page, tmp_path) == [
        "wide: zio ran on cpuset '0-1', not one CPU",
        "wide: floor ran on cpuset None, not one CPU",
        "gone: linked, but it has no results.json",
    ]
