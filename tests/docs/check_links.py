#!/usr/bin/env python3
"""Every relative link of README.md and docs/*.md must resolve: the file
exists, and a #anchor names a heading of the target page (GitHub's slugs:
lower case, punctuation other than '-' and '_' dropped, spaces to '-').

    check_links.py REPO_ROOT     exit 0: all resolve; 1: the broken ones listed
"""
import pathlib
import re
import sys

LINK = re.compile(r"\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def slug(heading):
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    for line in FENCE.sub("", path.read_text()).splitlines():
        match = re.match(r"#+ (.*)", line)
        if match:
            base = slug(match.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            out.add(base if count == 0 else f"{base}-{count}")
    return out


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    pages = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    broken, checked = [], 0
    for page in pages:
        for target in LINK.findall(FENCE.sub("", page.read_text())):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):
                continue  # http:, mailto: ...: not ours to check
            checked += 1
            file_part, _, anchor = target.partition("#")
            dest = (page.parent / file_part).resolve() if file_part else page
            where = f"{page.relative_to(root)}: ({target})"
            if not dest.exists():
                broken.append(f"{where}: no file {file_part}")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                broken.append(f"{where}: no heading #{anchor} in {dest.relative_to(root)}")
    for line in broken:
        print(line)
    print(f"{checked - len(broken)} passed, {len(broken)} failed")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
