#!/usr/bin/env python3
"""Mutation sweep of the `simpact` command line.

Mutates the JSON documents bundled in demos/data/ (seeded, so a run is
reproducible) and runs each mutant through `simpact resolve` or `simpact
scene`, checking the command line's promises for any input:

  * the exit status is 0 (the law ran) or 2 (invalid input);
  * status 2 prints exactly one line, "error: ...", on stderr and nothing on
    stdout;
  * status 0 prints one JSON document with no null, NaN or infinite number;
  * every run ends within --timeout seconds (no hang).

Usage: mutation_sweep.py SIMPACT DATA_DIR [--mutants N] [--seed S]
       [--timeout T] [--jobs J] [--keep DIR]
Prints the counts per outcome and exits 1 if any promise was broken; with
--keep, every offending mutant is written to DIR for a test to pick up.
Not part of ctest: it takes minutes (see .ci/test for how CI runs it).
"""
import argparse
import concurrent.futures
import copy
import json
import math
import os
import random
import subprocess
import sys
import time

# Values a mutation may put anywhere: boundary numbers (overflow when
# squared, beyond the documented bounds, integer limits), wrong types, and
# empty or deep containers.
NASTY = [
    0, -0.0, 1, -1, 0.5, 2, 3, 1e-320, 1e-50, 1e-49, 1e6, 1e6 + 1, 1e49, 1e50, 1e51, 1e154, 1e300,
    -1e308, 1e308, 9223372036854775807, 9223372036854775808, 18446744073709551615, -9223372036854775808,
    2147483647, 2147483648, 1000000, 4294967296, "", "x", "all", "time_of_impact", "routh", "auto",
    None, True, False, [], {}, [[]], [0], [1e308], [[1e308]], [0, 0, 0], [1, 2, 3, 4],
]
COMMANDS = {"resolve", "scene"}


def command_of(document):
    return "scene" if any(k in document for k in ("bodies", "multibodies", "dt")) else "resolve"


def paths(value, prefix=()):
    """Every path to a value inside `value` (including the root)."""
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += paths(v, prefix + (i,))
    return out


def get(doc, path):
    for p in path:
        doc = doc[p]
    return doc


def put(doc, path, value):
    if not path:
        return value
    get(doc, path[:-1])[path[-1]] = value
    return doc


def mutate_tree(rng, doc, donors):
    doc = copy.deepcopy(doc)
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        target = rng.choice(paths(doc))
        value = get(doc, target)
        kind = rng.randrange(11)
        if kind <= 2:
            new = copy.deepcopy(rng.choice(NASTY))
        elif kind == 3 and isinstance(value, (int, float)) and not isinstance(value, bool):
            new = value * rng.choice([-1, 10, 1e10, 1e100, 1e-10, 0])
        elif kind == 4 and isinstance(value, list) and value:
            new = value * rng.choice([2, 10, 1000])  # longer arrays
        elif kind == 5 and isinstance(value, list) and value:
            new = value[: rng.randrange(len(value))]  # shorter arrays
        elif kind == 6 and isinstance(value, dict) and value:
            new = dict(value)
            del new[rng.choice(list(new))]
        elif kind == 7 and isinstance(value, dict):
            donor = rng.choice(donors)
            key = rng.choice(list(donor))
            new = dict(value)
            new[key] = copy.deepcopy(donor[key])
        elif kind == 8:
            new = value
            for _ in range(rng.choice([2, 10, 63, 70])):  # deeper: mutate_text
                new = [new]
        elif kind == 9 and isinstance(value, dict):
            new = dict(value)
            new[rng.choice(["steps", "samples", "max_steps", "policy", "law", "seed", "dt",
                            "enumeration_budget", "max_reflections", "threads", "epsilon"])] = \
                copy.deepcopy(rng.choice(NASTY))
        else:
            new = copy.deepcopy(rng.choice(NASTY))
        doc = put(doc, target, new)
        if kind == 8:
            break  # keep paths() and json.dumps() off Python's recursion limit
    return json.dumps(doc, allow_nan=False) if finite_tree(doc) else json.dumps(doc)


def finite_tree(value):
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(finite_tree(v) for v in value)
    if isinstance(value, dict):
        return all(finite_tree(v) for v in value.values())
    return True


def mutate_text(rng, text):
    data = bytearray(text.encode())
    kind = rng.randrange(4)
    if kind == 0 and data:
        del data[rng.randrange(len(data)):]  # truncated
    elif kind == 1 and data:
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif kind == 2:
        at = rng.randrange(len(data) + 1)
        data[at:at] = rng.choice([b"[", b"{", b"]", b",", b"1e999", b"\"", b"\x00", b"-", b"[" * 100000])
    else:
        data = b"[" * rng.choice([63, 64, 65, 100000]) + b"]" * rng.choice([63, 64, 65, 100000])
    return bytes(data)


def check(simpact, command, data, timeout):
    start = time.monotonic()
    try:
        run = subprocess.run([simpact, command, "-"], input=data, capture_output=True,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        return "hang", time.monotonic() - start, ""
    elapsed = time.monotonic() - start
    err = run.stderr.decode(errors="replace")
    out = run.stdout.decode(errors="replace")
    if run.returncode < 0:
        return "signal %d" % -run.returncode, elapsed, err[-300:]
    if run.returncode == 2:
        lines = err.split("\n")
        if len(lines) != 2 or lines[1] != "" or not lines[0].startswith("error: ") or out:
            return "bad error format", elapsed, err[-300:]
        return "exit 2", elapsed, lines[0]
    if run.returncode != 0:
        return "exit %d" % run.returncode, elapsed, err[-300:]
    if err:
        return "exit 0 with stderr", elapsed, err[-300:]
    try:
        parsed = json.loads(out, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))
    except ValueError as e:
        return "exit 0 unparsable output", elapsed, str(e)[:200]
    if "null" in out or not finite_tree(parsed):
        return "exit 0 with null/NaN", elapsed, ""
    return "exit 0", elapsed, ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("simpact")
    parser.add_argument("data_dir")
    parser.add_argument("--mutants", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", default=None)
    args = parser.parse_args()

    documents = []
    for name in sorted(os.listdir(args.data_dir)):
        if name.endswith(".json"):
            with open(os.path.join(args.data_dir, name)) as f:
                documents.append((name, json.load(f)))
    rng = random.Random(args.seed)
    mutants = []
    for k in range(args.mutants):
        name, doc = rng.choice(documents)
        command = command_of(doc)
        if rng.random() < 0.85:
            data = mutate_tree(rng, doc, [d for _, d in documents]).encode()
        else:
            data = mutate_text(rng, json.dumps(doc, indent=1))
        if rng.random() < 0.03:
            command = "scene" if command == "resolve" else "resolve"  # the wrong command
        mutants.append((k, name, command, data))

    counts = {}
    bad = []
    slowest = (0.0, None)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(check, args.simpact, c, d, args.timeout): (k, n, c, d)
                   for k, n, c, d in mutants}
        for future in concurrent.futures.as_completed(futures):
            k, name, command, data = futures[future]
            outcome, elapsed, detail = future.result()
            counts[outcome] = counts.get(outcome, 0) + 1
            if elapsed > slowest[0]:
                slowest = (elapsed, "mutant %d of %s (%s)" % (k, name, command))
            if outcome not in ("exit 0", "exit 2"):
                bad.append((k, name, command, outcome, detail, data))
    print("mutation sweep: %d mutants, seed %d, timeout %.0f s" % (len(mutants), args.seed,
                                                                 args.timeout))
    for outcome, count in sorted(counts.items()):
        print("  %-28s %d" % (outcome, count))
    print("  slowest run: %.2f s, %s" % slowest)
    for k, name, command, outcome, detail, data in sorted(bad)[:20]:
        print("BROKEN: mutant %d of %s (%s): %s: %s" % (k, name, command, outcome,
                                                       detail.strip()[:200]))
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
            with open(os.path.join(args.keep, "mutant_%d.%s.json" % (k, command)), "wb") as f:
                f.write(data)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
