#!/usr/bin/env python3
"""Checks that every bullet_patches/NNNN-*.patch has an upstream/ twin that
makes the same change: the same files, and the same removed and added lines
in the same order (context and line numbers may differ: the upstream copy is
made against bulletphysics/bullet3 master). Exit status 1 names the first
difference."""
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent


def changes(path):
    """(file, [(sign, line)...]) per file of a unified diff, header text skipped."""
    files, current = [], None
    for line in path.read_text().splitlines():
        if line.startswith("+++ "):
            current = (line[4:].split("\t")[0].split("/", 1)[1], [])
            files.append(current)
        elif line.startswith("--- ") or line.startswith("@@") or current is None:
            continue
        elif line[:1] in "+-":
            current[1].append((line[0], line[1:].rstrip()))
    return files


def main():
    patches = sorted(HERE.glob("[0-9][0-9][0-9][0-9]-*.patch"))
    if not patches:
        print("no patches found in", HERE)
        return 1
    for patch in patches:
        twin = HERE / "upstream" / patch.name
        if not twin.exists():
            print(f"{patch.name}: no upstream/{patch.name}")
            return 1
        ours, theirs = changes(patch), changes(twin)
        if [f for f, _ in ours] != [f for f, _ in theirs]:
            print(f"{patch.name}: files differ: {[f for f, _ in ours]} vs {[f for f, _ in theirs]}")
            return 1
        for (name, a), (_, b) in zip(ours, theirs):
            if a != b:
                first = next(i for i, (x, y) in enumerate(zip(a + [None], b + [None])) if x != y)
                print(f"{patch.name}: {name}: change {first} differs: {a[first:first+1]} vs {b[first:first+1]}")
                return 1
        print(f"{patch.name}: the upstream copy makes the same change ({sum(len(c) for _, c in ours)} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
