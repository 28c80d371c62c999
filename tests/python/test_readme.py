"""The README's and docs/python.md's Python snippets run as written."""
import os
import re

from conftest import SOURCE


def snippets(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)


def test_readme_python_snippet_runs(capsys):
    blocks = snippets(SOURCE / "README.md")
    assert blocks, "the README shows Python"
    cwd = os.getcwd()
    os.chdir(SOURCE)
    try:
        for block in blocks:
            exec(compile(block, "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    assert "[0. 0. 1.]" in out


def test_docs_first_snippet_runs():
    block = snippets(SOURCE / "docs" / "python.md")[0]
    namespace = {}
    exec(compile(block, "docs/python.md", "exec"), namespace)
    assert list(namespace["r"].velocity) == [0.0, 0.0, 1.0]
