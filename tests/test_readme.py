"""The README is a front page: short, its links lead to files of this repository, and what it moved out is
still reachable from it (no Spark session needed)."""

import os
import re

import pytest
from conftest import ROOT

LIMIT = 12_000
# Markdown links and images: [text](target) and ![alt](target); the target up to a space or the closing parenthesis.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)[^)]*\)")


def _read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def _anchors(markdown):
    """GitHub's anchors of a markdown file's headings: lower case, punctuation dropped, spaces as hyphens."""
    found = set()
    for heading in re.findall(r"^#+ (.+)$", re.sub(r"```.*?```", "", markdown, flags=re.S), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


def broken_links(path):
    """The links of a markdown file that lead nowhere in the repository, or out of it."""
    text = re.sub(r"```.*?```", "", _read(path), flags=re.S)
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):  # http(s) and mailto: not a file of the repository
            continue
        file, _, anchor = target.partition("#")
        resolved = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        if resolved.startswith("..") or os.path.isabs(resolved):
            broken.append(f"{target} (outside the repository)")
        elif not os.path.exists(os.path.join(ROOT, resolved)):
            broken.append(f"{target} (no such file)")
        elif anchor and resolved.endswith(".md") and anchor not in _anchors(_read(resolved)):
            broken.append(f"{target} (no such heading in {resolved})")
    return broken


def test_the_readme_is_at_most_12000_bytes():
    # Counted in UTF-8 bytes, as the project's own check counts them: "×" and "–" are one character but more bytes.
    size = len(_read("README.md").encode("utf-8"))
    assert size <= LIMIT, f"README.md has {size} bytes (UTF-8); move detail into docs/ (at most {LIMIT})"


@pytest.mark.parametrize(
    "path", ["README.md", "docs/install.md", "docs/spark-lines.md", "docs/deviations.md", "docs/testing.md"]
)
def test_every_link_leads_to_a_file_of_the_repository(path):
    assert broken_links(path) == []


def test_nothing_in_the_readme_points_outside_the_repository():
    assert "../" not in _read("README.md")


def test_the_two_commands_come_first():
    head = "\n".join(_read("README.md").splitlines()[:6])
    assert "make demo" in head and "make test" in head


def test_the_conformance_sentence_states_its_conditions_and_links_the_deviations():
    text = _read("README.md")
    conformance = text[text.index("**Conformance.**") :]
    conformance = conformance[: conformance.index("\n\n")]
    for condition in ("one state partition", "caching off", "emit interval 0"):
        assert condition in conformance
    assert "(docs/deviations.md)" in conformance


def test_the_spark_lines_table_has_every_line_and_the_readme_leads_to_it():
    assert "(docs/spark-lines.md)" in _read("README.md")
    table = _read("docs/spark-lines.md")
    with open(os.path.join(ROOT, "project", "spark-lines.tsv")) as f:
        rows = [r.split() for r in f if r.strip() and not r.startswith("#")]
    for line, scala, *_ in rows:
        binary = ".".join(scala.split(".")[:2])
        assert f"`spark-suppress_{line}_{binary}`" in table, f"no row for Spark {line} on Scala {binary}"


def test_the_link_check_finds_a_missing_file_a_missing_heading_and_a_way_out(tmp_path, monkeypatch):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A title\n")
    (tmp_path / "README.md").write_text(
        "[ok](docs/a.md#a-title) [gone](docs/b.md) [heading](docs/a.md#nope) [out](../shared/x.md) "
        "[web](https://example.org)\n```\n[in code](nowhere.md)\n```\n"
    )
    monkeypatch.setattr(__import__(__name__), "ROOT", str(tmp_path))
    assert broken_links("README.md") == [
        "docs/b.md (no such file)",
        "docs/a.md#nope (no such heading in docs/a.md)",
        "../shared/x.md (outside the repository)",
    ]
