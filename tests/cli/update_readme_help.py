#!/usr/bin/env python3
"""Rewrites docs/cli.md's generated `simpact --help` blocks from the help text.

The blocks are the Markdown rendering of each subcommand's help
(plugin/cli/include/simpact_cli/help_markdown.h). tests/cli/readme_help_test.cpp
fails when they differ and prints the block; this script runs that test and
pastes what it printed:

    python3 tests/cli/update_readme_help.py build/bin/simpact_cli_tests
"""
import pathlib
import subprocess
import sys


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 64
    run = subprocess.run([sys.argv[1], "--gtest_filter=HelpSchema.ReadmeShowsEachCommandsHelpAsGenerated"],
                         capture_output=True, text=True, check=False)
    out = run.stdout
    readme_path = pathlib.Path(__file__).resolve().parents[2] / "docs" / "cli.md"
    readme = readme_path.read_text()
    changed = []
    for marker in sorted({line for line in out.splitlines() if line.startswith("<!-- generated from")}):
        name = marker[marker.rindex(": ") + 2:marker.rindex(" -->")]
        begin, end = marker + "\n", f"<!-- end of generated: {name} -->"
        at = out.index(begin)
        block = out[at:out.index(end, at) + len(end)]
        if begin not in readme:
            print(f"docs/cli.md has no block for {name}; add one by hand first:\n{block}", file=sys.stderr)
            return 1
        start = readme.index(begin)
        stop = readme.index(end, start) + len(end)
        readme = readme[:start] + block + readme[stop:]
        changed.append(name)
    readme_path.write_text(readme)
    print("updated: " + (", ".join(changed) if changed else "nothing (docs/cli.md is current)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
