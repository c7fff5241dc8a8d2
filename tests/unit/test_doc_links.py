"""Every relative link in the repository's Markdown points at a file of the repository.

The README linked ``../shared/ARCHITECTURE.md``, outside the repository (issue 31): a
reader who cloned it found nothing there. Anchors are not checked, only the files.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)\s]+)\)")
DOCS = [ROOT / "README.md", ROOT / "terraform" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_relative_links_stay_inside_the_repository() -> None:
    broken = []
    for doc in DOCS:
        for target in LINK.findall(doc.read_text()):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            path = (doc.parent / target.split("#", 1)[0]).resolve()
            if not path.is_relative_to(ROOT) or not path.exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target}")
    assert broken == []


def test_the_readme_links_the_architecture() -> None:
    assert "](docs/architecture.md)" in (ROOT / "README.md").read_text()
    assert (ROOT / "docs" / "architecture.md").read_text().count("## HTTP API") == 1
