"""The project's documentation stands on its own: every relative link in README.md, docs/*.md and each folder's
README.md resolves to a file or folder inside the repository (and a #fragment into a markdown file to one of its
headings), nothing names the design folder that once lived beside the repository, and the root README stays a
five-minute read (under 10 KiB; the long parts live in docs/)."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README_LIMIT = 10_240  # bytes

# The project's own documents: not a tool's generated README in a hidden folder (pytest's .pytest_cache/), which
# exists only after some runs and so made the number of tests depend on what ran before.
DOCS = sorted({ROOT / "README.md", *ROOT.glob("docs/*.md"), *ROOT.glob("docs/stacks/*.md"),
               *ROOT.glob("wrk/experiments/**/README.md"),
               *(p for p in ROOT.glob("*/README.md") if not p.parent.name.startswith("."))})

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
# [text](target) and ![alt](target), text may span lines; an optional "title" after the target.
INLINE_LINK = re.compile(r"!?\[(?P<text>[^\]]*)\]\(\s*<?(?P<target>[^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(?P<target>\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.M)
HEADING = re.compile(r"^#{1,6}\s+(?P<title>.+?)\s*#*\s*$", re.M)
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")  # https:, mailto:, ...

# Built from parts so that this file does not name them itself.
OUTSIDE_DESIGN = re.compile(r"shared" + r"/(contract|style)\.md")
SKIP_DIRS = {".git", "results", "target", ".venv", "venv", "node_modules", ".cache", "__pycache__",
             ".pytest_cache", ".bsp", ".metals", ".idea", ".bloop"}


def prose(text: str) -> str:
    """The text a reader sees as markdown: fenced blocks and code spans blanked (a path in code is not a link)."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return CODE_SPAN.sub(lambda m: "code", text)


def links(path: Path) -> list[str]:
    text = prose(path.read_text())
    return [m.group("target") for m in INLINE_LINK.finditer(text)] + \
           [m.group("target") for m in REFERENCE_DEF.finditer(text)]


def slug(title: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped (word characters, spaces and hyphens kept),
    spaces to hyphens."""
    title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)  # a link in a heading: its text
    title = title.replace("`", "").lower()
    return re.sub(r"[^\w\- ]", "", title).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {slug(m.group("title")) for m in HEADING.finditer(prose(path.read_text()))}


def problems(path: Path) -> list[str]:
    found = []
    for target in links(path):
        if EXTERNAL.match(target):
            continue
        relative, _, fragment = target.partition("#")
        resolved = (path.parent / relative).resolve() if relative else path
        where = f"{path.relative_to(ROOT)}: ({target})"
        if not resolved.is_relative_to(ROOT):
            found.append(f"{where} leaves the repository")
        elif not resolved.exists():
            found.append(f"{where} does not exist")
        elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
            found.append(f"{where} names no heading of {resolved.relative_to(ROOT)}")
    return found


def test_the_docs_are_found():
    names = {str(p.relative_to(ROOT)) for p in DOCS}
    assert {"README.md", "docs/benchmark.md", "docs/results.md", "spec/README.md", "fly/README.md"} <= names


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves_inside_the_repository(path):
    found = problems(path)
    assert not found, "\n".join(found)


def test_the_checker_sees_a_broken_link(tmp_path, monkeypatch):
    # The checker itself: a missing file, a path out of the repository, a missing heading, and a link hidden in
    # code (not a link) are told apart.
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A page\n\n## JVM memory flags\n")
    page = tmp_path / "README.md"
    page.write_text("[ok](docs/a.md#jvm-memory-flags) [gone](docs/b.md) [out](../x.md) [head](docs/a.md#nope)\n"
                    "`[code](docs/c.md)`\n```\n[fenced](docs/d.md)\n```\n")
    assert problems(page) == ["README.md: (docs/b.md) does not exist",
                              "README.md: (../x.md) leaves the repository",
                              "README.md: (docs/a.md#nope) names no heading of docs/a.md"]


def test_the_readme_is_a_five_minute_read():
    size = (ROOT / "README.md").stat().st_size
    assert size < README_LIMIT, f"README.md is {size} bytes; move the detail into docs/ (limit {README_LIMIT})"


def test_no_file_names_the_design_folder_beside_the_repository():
    # A user who clones the project has no design folder beside it: the contract is spec/README.md and
    # spec/openapi.yaml.
    hits = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        for name in files:
            f = Path(folder) / name
            try:
                if f.stat().st_size > 2_000_000:
                    continue
                text = f.read_text(errors="ignore")
            except OSError:
                continue
            hits += [f"{f.relative_to(ROOT)}: {m.group(0)}" for m in OUTSIDE_DESIGN.finditer(text)]
    assert not hits, "\n".join(hits)
