#!/usr/bin/env python3
"""The billiard break from Python: energy shares against the break angle.

Seghete & Murphey 2014, Sec. VII-A (V. Seghete and T. D. Murphey, "A
propagative model of simultaneous impact: existence, uniqueness, and design
consequences", IEEE Trans. Automation Science and Engineering 11(1), 2014,
arXiv:1709.02296): a cue ball c (radius 1, mass 1) strikes two touching
object balls a and b (radius 0.5, mass 1) at 1 m/s, the contact normals an
angle theta apart. For theta from 40 to 150 degrees this resolves the break
with the elastic laws, in the plane (v = [a_x, a_y, b_x, b_y, c_x, c_y]):

  propagative, every reflection order (policy all): the outcome set, whose
  lowest and highest share of the energy ball a leaves with are drawn as
  a band; its indeterminacy xi; the variational and Pasquero laws: one
  outcome each.

The contacts' kinetic inner product is W_12 = J_1 Minv J_2^T = cos(theta) / m_c
(only the cue ball is shared), so at theta = 90 degrees they are orthogonal
(Theorem 2): the set shrinks to one outcome, xi = 0, and every law agrees. The same figure, drawn by the C++ demo compare_laws, is
docs/images/compare_laws_billiard.svg.

Usage: billiard_break.py [--out FILE.svg|.png] [--step DEGREES]
Needs the simpact module (PYTHONPATH=build/python) and matplotlib (Debian
python3-matplotlib); exits 77 with a message without matplotlib.
"""
import argparse
import math
import sys

import numpy as np

import simpact

OBJECT_RADIUS, CUE_RADIUS = 0.5, 1.0
MASSES = [1, 1, 1, 1, 1, 1]
ORTHOGONAL = 90.0  # degrees: cos(theta) = 0, the unique break
# One outcome: the set's spread and xi are rounding there (a few
# reflections of unit vectors: ~1e-16); 1e-9 is kAll's own outcome merging.
UNIQUE = 1e-9


def billiard(theta_degrees):
    """J (2 x 6) and v- of the break at theta: a and b on either side of the
    cue ball's direction of travel (+x), touching it."""
    half = math.radians(theta_degrees) / 2
    a = np.array([math.cos(half), math.sin(half)])    # unit c -> a
    b = np.array([math.cos(half), -math.sin(half)])   # unit c -> b
    J = np.zeros((2, 6))
    J[0, 0:2], J[0, 4:6] = a, -a
    J[1, 2:4], J[1, 4:6] = b, -b
    v = np.array([0, 0, 0, 0, 1.0, 0])
    return J, v


def shares(v, before):
    """Energy shares of ball a and the cue ball c after the break."""
    return 0.5 * (v[0] ** 2 + v[1] ** 2) / before, 0.5 * (v[4] ** 2 + v[5] ** 2) / before


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="billiard_break.svg")
    parser.add_argument("--step", type=float, default=1.0, help="theta step [degrees]")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("billiard_break.py: skipped: matplotlib is not installed (Debian: python3-matplotlib)")
        return 77

    thetas = np.arange(40.0, 150.0 + 1e-9, args.step)
    low, high, xi, variational, pasquero = [], [], [], [], []
    for theta in thetas:
        J, v = billiard(theta)
        before = 0.5 * v @ v
        every = simpact.propagative(v, J, masses=MASSES, policy="all")
        a_shares = [shares(o.velocity, before)[0] for o in every.outcomes]
        low.append(min(a_shares))
        high.append(max(a_shares))
        xi.append(every.indeterminacy)
        variational.append(shares(simpact.variational(v, J, masses=MASSES).velocity, before)[0])
        pasquero.append(shares(simpact.pasquero(v, J, masses=MASSES).velocity, before)[0])

    print(f"{'theta':>6} {'a share (propagative set)':>27} {'xi':>8} {'variational':>12} {'Pasquero':>9}")
    for k in range(0, len(thetas), max(1, int(round(10 / args.step)))):
        print(f"{thetas[k]:6.0f} {low[k]:12.4f} .. {high[k]:<12.4f} {xi[k]:8.4f} {variational[k]:12.4f} "
              f"{pasquero[k]:9.4f}")

    figure, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    top.fill_between(thetas, low, high, color="#f4a6a6", label="propagative, every order")
    top.plot(thetas, variational, color="#1f77b4", label="variational")
    top.plot(thetas, pasquero, color="#2ca02c", linestyle="--", label="Pasquero")
    top.axvline(ORTHOGONAL, color="#888", linewidth=0.8)
    top.set_ylabel("energy share of ball a")
    top.legend(loc="upper right", fontsize=8)
    top.set_title("Billiard break (Seghete & Murphey 2014, Sec. VII-A)")
    bottom.plot(thetas, xi, color="#333")
    bottom.axvline(ORTHOGONAL, color="#888", linewidth=0.8)
    bottom.set_ylabel("indeterminacy xi")
    bottom.set_xlabel("theta [degrees]")
    figure.tight_layout()
    figure.savefig(args.out)
    print(f"wrote {args.out}")
    # The claim the figure shows: a unique outcome at the orthogonal angle
    # (when the grid has it), and a set everywhere else.
    k = int(np.argmin(abs(thetas - ORTHOGONAL)))
    if abs(thetas[k] - ORTHOGONAL) > 1e-9:
        print(f"theta = {ORTHOGONAL:g} is not on the grid; nothing asserted")
        return 0
    unique = high[k] - low[k] < UNIQUE and xi[k] < UNIQUE
    others = all(x > UNIQUE for j, x in enumerate(xi) if j != k)
    print(f"theta = {ORTHOGONAL:g}: one outcome (xi = {xi[k]:.1e}): {'yes' if unique else 'NO'}; "
          f"a set at every other angle: {'yes' if others else 'NO'}")
    return 0 if unique and others else 1


if __name__ == "__main__":
    sys.exit(main())
