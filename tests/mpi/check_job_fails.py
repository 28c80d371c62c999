#!/usr/bin/env python3
"""An MPI job whose item fails must end, non-zero, with a message, not hang.

Usage: check_job_fails.py --expect TEXT [--timeout S] -- MPIEXEC ARGS...

Exits 0 when the job exits non-zero within the timeout and its stdout or
stderr contains TEXT; 1 otherwise.
"""
import argparse
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--expect", required=True)
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=args.timeout)
    except subprocess.TimeoutExpired:
        print(f"the job did not end within {args.timeout} s (it hangs)")
        return 1
    output = done.stdout + done.stderr
    if done.returncode == 0:
        print("the job exited 0 although an item failed\n" + output)
        return 1
    if args.expect not in output:
        print(f"exit {done.returncode} but no '{args.expect}' in the output:\n{output}")
        return 1
    print(f"exit {done.returncode} with '{args.expect}'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
