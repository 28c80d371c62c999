#!/usr/bin/env python3
"""Long programs show a progress line on a terminal and nothing elsewhere.

Usage: check_progress_lines.py LABEL -- PROGRAM ARGS...

Runs the program twice:
  * with stderr on a pseudo-terminal: stderr must hold progress lines
    ("\\rLABEL: done/total ...", rewritten in place), the last one at 100 %
    and ended by a newline, and stdout (a pipe) must hold no '\\r';
  * with stderr on a pipe (a log, CI): stderr must hold no progress at all.
SIMPACT_PROGRESS is removed from the environment, so the terminal test
decides. Exits 0 when both hold, 1 otherwise (with what was seen).
"""
import os
import pty
import re
import select
import subprocess
import sys


def run_on_pty(command, env):
    master, slave = pty.openpty()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    stderr = b""
    while True:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the program closed its end
                break
            if not chunk:
                break
            stderr += chunk
        elif process.poll() is not None:
            break
    stdout = process.stdout.read()
    process.wait()
    os.close(master)
    return process.returncode, stdout, stderr


def main(argv):
    if len(argv) < 4 or argv[2] != "--":
        print(__doc__)
        return 64
    label = argv[1].encode()
    command = argv[3:]
    env = {k: v for k, v in os.environ.items() if k != "SIMPACT_PROGRESS"}
    problems = []

    status, stdout, stderr = run_on_pty(command, env)
    # The terminal turns "\n" into "\r\n"; progress lines start with "\r".
    lines = re.findall(rb"\r" + re.escape(label) + rb": (\d+)/(\d+)[^\r\n]*", stderr)
    if status != 0:
        problems.append(f"on a terminal the program exited with {status}")
    if not lines:
        problems.append("no progress line on the terminal")
    else:
        done, total = lines[-1]
        if done != total:
            problems.append(f"the last progress line reads {done.decode()}/{total.decode()}")
        if not re.search(rb"\(100\.0%\)[^\r\n]*\x1b\[K\r?\n", stderr):
            problems.append("the final progress line does not end in a newline")
        counts = [int(d) for d, _ in lines]
        if counts != sorted(counts):
            problems.append(f"progress went backwards: {counts}")
    if b"\r" in stdout:
        problems.append("stdout holds a carriage return")

    piped = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    if piped.returncode != 0:
        problems.append(f"with stderr on a pipe the program exited with {piped.returncode}")
    if b"\r" in piped.stderr or re.search(re.escape(label) + rb": \d+/\d+", piped.stderr):
        problems.append("progress written to a pipe: " + repr(piped.stderr[:200]))

    name = os.path.basename(command[0])
    if problems:
        print(f"{name}: " + "; ".join(problems))
        print("terminal stderr:", repr(stderr[-400:]))
        return 1
    print(f"{name}: {len(lines)} progress line(s) on a terminal, last {lines[-1][0].decode()}/"
          f"{lines[-1][1].decode()}; none on a pipe")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
