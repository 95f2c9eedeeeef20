"""The README is an entry: short, opening with its two commands, its links and those of docs/ all lead somewhere."""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_layering import MAY_IMPORT

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
MAX_README_LINES = 300

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*```")


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks, with inline code removed (a link inside code is not a link)."""
    out, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append(re.sub(r"`[^`]*`", "", line))
    return out


def fenced_blocks(text: str) -> list[list[str]]:
    blocks, current = [], None
    for line in text.splitlines():
        if FENCE.match(line):
            if current is None:
                current = []
            else:
                blocks.append(current)
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def anchors(text: str) -> set[str]:
    """The fragment each heading gets on GitHub: lower case, punctuation dropped, spaces to hyphens, repeats numbered."""
    seen: dict[str, int] = {}
    out = set()
    for line in prose_lines(text):
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def broken_links(path: Path) -> list[str]:
    """Every relative link in a Markdown file whose file, or heading within it, does not exist."""
    bad = []
    for line in prose_lines(path.read_text(encoding="utf-8")):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):              # http:, https:, mailto: leave the repository
                continue
            file_part, _, fragment = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            if not linked.exists():
                bad.append(f"{path.name}: {target} (no such file)")
            elif fragment and linked.suffix == ".md" and fragment not in anchors(linked.read_text(encoding="utf-8")):
                bad.append(f"{path.name}: {target} (no such heading)")
    return bad


def test_readme_is_short():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines; move detail into docs/"


def test_readme_opens_with_the_two_commands():
    text = README.read_text(encoding="utf-8")
    blocks = fenced_blocks(text)
    assert blocks, "README.md has no fenced block"
    commands = [line.split("#")[0].strip() for line in blocks[0] if line.strip()]
    assert commands[:2] == ["make run", "make test"], f"first fenced block starts with {commands[:2]}"
    before = text[:text.index("```")]
    assert before.count("\n") <= 3, "the two commands come right after the title"


def test_readme_links_every_doc():
    text = README.read_text(encoding="utf-8")
    linked = {(README.parent / t.partition("#")[0]).resolve() for line in prose_lines(text) for t in LINK.findall(line)}
    assert DOCS, "docs/ holds no Markdown file"
    missing = [d.name for d in DOCS if d.resolve() not in linked]
    assert not missing, f"README.md links no {missing}"


def test_every_relative_link_leads_somewhere():
    bad = [b for path in (README, *DOCS) for b in broken_links(path)]
    assert not bad, "broken links:\n" + "\n".join(bad)


MAX_CONTENTS_ROW = 160


def test_readme_contents_rows_are_one_short_line_each():
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Contents"):]
    section = section[:section.index("\n## ", 1)]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("|---")]
    assert len(rows) > 5, "the Contents table lists the package"
    long = [row[:60] for row in rows if len(row) > MAX_CONTENTS_ROW]
    assert not long, f"Contents rows over {MAX_CONTENTS_ROW} characters: {long}; the detail goes in docstrings"


def test_readme_shows_the_product_in_pictures():
    text = README.read_text(encoding="utf-8")
    pictures = re.findall(r"!\[[^\]]+\]\(([^)]+)\)", text)
    assert len(pictures) >= 2 and all((README.parent / p).is_file() for p in pictures), pictures


def test_the_architecture_names_every_layer():
    # The diagram is the reader's copy of tests/test_layering.py's rules: a layer missing from it is a layer unexplained.
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    diagram = fenced_blocks(text)[0]
    words = set(re.findall(r"[\w]+", "\n".join(diagram)))
    missing = sorted(layer for layer in MAY_IMPORT if layer != "__init__" and layer not in words)
    assert not missing, f"docs/architecture.md's diagram does not name {missing}"


def test_the_link_checker_sees_a_missing_file_and_heading(tmp_path):
    # The checks above must be able to fail: a page with one good and two bad links, through the same parser.
    (tmp_path / "other.md").write_text("# Other page\n\n## The part, here\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text("# Page\n\n[ok](other.md#the-part-here) [gone](missing.md) [no](other.md#nowhere) "
                    "[web](https://example.org) `[code](nothing.md)`\n\n```\n[fenced](nothing.md)\n```\n",
                    encoding="utf-8")
    assert broken_links(page) == ["page.md: missing.md (no such file)", "page.md: other.md#nowhere (no such heading)"]
