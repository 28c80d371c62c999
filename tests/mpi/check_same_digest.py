#!/usr/bin/env python3
"""Runs one program under mpirun on several rank counts and checks that the
merged output is the same.

Usage: check_same_digest.py --mpirun MPIEXEC [--mpirun-flag F]... --ranks 1,2,3
                            [--threads-flag=--threads --threads 1,2] -- PROGRAM ARGS...

Each run's stdout is compared after dropping the lines that start with
"timing:" (wall times vary); every run must exit 0 and print a line with
"digest". With --threads-flag, every rank count also runs with each thread
count. Exits 0 when all outputs agree, 1 otherwise (showing the difference).
"""
import argparse
import difflib
import subprocess
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--mpirun-flag", action="append", default=[])
    parser.add_argument("--ranks", default="1,2,3")
    parser.add_argument("--threads-flag")
    parser.add_argument("--threads", default="1")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no program given")
    runs = []
    for ranks in [int(r) for r in args.ranks.split(",")]:
        for threads in ([int(t) for t in args.threads.split(",")] if args.threads_flag else [None]):
            extra = [args.threads_flag, str(threads)] if threads is not None else []
            full = [args.mpirun] + args.mpirun_flag + ["-n", str(ranks)] + command + extra
            start = time.time()
            done = subprocess.run(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  timeout=args.timeout)
            seconds = time.time() - start
            label = f"{ranks} rank(s)" + (f" x {threads} thread(s)" if threads is not None else "")
            if done.returncode != 0:
                print(f"{label}: exit {done.returncode}\n{done.stdout}\n{done.stderr}")
                return 1
            kept = [line for line in done.stdout.splitlines() if not line.startswith("timing:")]
            digests = [line.strip() for line in kept if "digest" in line]
            if not digests:
                print(f"{label}: no digest line in\n{done.stdout}")
                return 1
            print(f"{label}: {digests[-1]} ({seconds:.1f} s)")
            runs.append((label, kept))
    reference_label, reference = runs[0]
    for label, lines in runs[1:]:
        if lines != reference:
            print(f"{label} differs from {reference_label}:")
            sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(reference, lines, reference_label, label,
                                                                        lineterm=""))
            return 1
    print(f"all {len(runs)} runs agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
