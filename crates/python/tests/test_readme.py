"""The `python` blocks of README.md and docs/python.md, run as they are.

A block runs in a fresh namespace in a scratch directory. Lines of `# ...` comments right
after a `print(...)` line are that print's output, and must equal what it printed.
"""

import contextlib
import io
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
PAGES = [ROOT / "README.md", ROOT / "docs" / "python.md"]


def python_blocks(page):
    text = page.read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def expected_output(block):
    """The `# ` comment lines that follow each print line, in order."""
    out, lines, i = [], block.splitlines(), 0
    while i < len(lines):
        if lines[i].lstrip().startswith("print("):
            j = i + 1
            while j < len(lines) and lines[j].startswith("# "):
                out.append(lines[j][2:])
                j += 1
            i = j
        else:
            i += 1
    return out


BLOCKS = [
    pytest.param(block, id=f"{page.name}-{n}")
    for page in PAGES
    if page.exists()
    for n, block in enumerate(python_blocks(page), 1)
]


def test_readme_has_python_blocks():
    assert python_blocks(ROOT / "README.md"), "README.md lost its python block"


@pytest.mark.parametrize("block", BLOCKS)
def test_block_runs_and_prints_what_it_shows(block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        exec(compile(block, "<docs block>", "exec"), {"__name__": "__docs__"})
    want = expected_output(block)
    if want:
        assert stdout.getvalue().splitlines() == want
