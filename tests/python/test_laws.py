"""simpact's laws from Python: the papers' closed forms, bit-for-bit
agreement with `simpact resolve`, and bad input as ValueError."""
import json
import subprocess
import threading

import numpy as np
import pytest

import simpact

# Closed forms in double: a handful of reflections round to a few ulps.
EXACT = 1e-15
# Bullet's Lemke and Routh's LCPs: what frictional_cli_test.cpp allows (kLemke).
LEMKE = 1e-9

CRADLE_J = [[-1, 1, 0], [0, -1, 1]]  # touching balls 0-1 and 1-2 on a line


def from_document(doc):
    """The Python call for a `simpact resolve` document."""
    doc = dict(doc)
    v, J = doc.pop("velocity"), doc.pop("normals")
    mass = {k: doc.pop(k) for k in ("mass", "inverse_mass", "masses") if k in doc}
    names = {"mass": "M", "inverse_mass": "Minv", "masses": "masses"}
    law = doc.pop("law", "propagative")
    return simpact.resolve(v, J, law=law, **{names[k]: x for k, x in mass.items()}, **doc)


def cli_resolve(cli, doc):
    out = subprocess.run([cli, "resolve", "-"], input=json.dumps(doc), capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_touching_elastic_cradle_leaves_as_0_0_1_exactly():
    # Seghete & Murphey 2014, Sec. I: three equal touching balls, the first
    # at 1: the propagative law gives (0, 0, 1), the energy kept.
    r = simpact.propagative([1.0, 0.0, 0.0], CRADLE_J, masses=[1, 1, 1])
    assert r.status == "success"
    assert np.array_equal(r.velocity, [0.0, 0.0, 1.0])
    assert r.energy_before == r.energy_after == 0.5
    assert len(r.outcomes) == 1


def test_five_ball_cradle_two_incoming():
    J = [[-1 if j == i else 1 if j == i + 1 else 0 for j in range(5)] for i in range(4)]
    r = simpact.propagative([1, 1, 0, 0, 0], J, masses=np.ones(5))
    assert np.allclose(r.velocity, [0, 0, 0, 1, 1], atol=EXACT, rtol=0)


def test_unequal_masses_single_contact():
    # m1 = 1 at 1 m/s onto m2 = 3 at rest, elastic: v1 = (m1-m2)/(m1+m2),
    # v2 = 2 m1/(m1+m2); restitution R scales the rebound: v2-v1 = R.
    for R in (1.0, 0.5, 0.0):
        r = simpact.propagative([1, 0], [[-1, 1]], masses=[1, 3], restitution=R)
        v1 = (1 - 3 * R) / 4
        v2 = (1 + R) / 4
        assert np.allclose(r.velocity, [v1, v2], atol=EXACT, rtol=0), R


def test_mass_and_inverse_mass_give_the_same_outcome():
    M = np.diag([1.0, 2.0, 4.0])
    a = simpact.propagative([1, 0, 0], CRADLE_J, M=M)
    b = simpact.propagative([1, 0, 0], CRADLE_J, Minv=np.linalg.inv(M))
    c = simpact.propagative([1, 0, 0], CRADLE_J, masses=[1, 2, 4])
    assert np.allclose(a.velocity, c.velocity, atol=EXACT) and np.allclose(b.velocity, c.velocity, atol=EXACT)


def test_sparse_J():
    sparse = pytest.importorskip("scipy.sparse")
    r = simpact.propagative([1, 0, 0], sparse.csr_matrix(CRADLE_J), masses=[1, 1, 1])
    assert np.array_equal(r.velocity, [0.0, 0.0, 1.0])


def test_two_balls_and_a_wall_has_two_outcomes_and_their_indeterminacy(data, cli):
    # Seghete & Murphey 2014, the split example: wall first or ball-ball
    # first give distinct outcomes (policy all), with xi > 0.
    doc = json.loads((data / "two_balls_wall.json").read_text())
    r = from_document(doc)
    assert len(r.outcomes) == 2
    assert r.indeterminacy > 0
    expected = cli_resolve(cli, doc)
    assert r.indeterminacy == expected["indeterminacy"]
    for got, want in zip(r.outcomes, expected["outcomes"]):
        assert np.array_equal(got.velocity, want["velocity"])


def test_plastic_is_the_propagative_law_at_zero_restitution():
    p = simpact.plastic([1, 0, 0], CRADLE_J, masses=[1, 1, 1])
    q = simpact.propagative([1, 0, 0], CRADLE_J, masses=[1, 1, 1], restitution=0.0)
    assert np.allclose(p.velocity, [1 / 3, 1 / 3, 1 / 3], atol=EXACT)
    assert np.allclose(p.velocity, q.velocity, atol=EXACT)


def test_variational_and_pasquero_on_the_cradle():
    for law in (simpact.variational, simpact.pasquero):
        r = law([1, 0, 0], CRADLE_J, masses=[1, 1, 1])
        assert r.status == "success"
        assert np.allclose(r.velocity, [0, 0, 1], atol=1e-12), law.__name__
        assert abs(r.energy_after - 0.5) < 1e-12


def test_rolling_ball_rolls_at_five_sevenths(data):
    # Halm & Posa's rolling ball (demos/data/README.md): sticking, v+ =
    # (5/7, 0, 0, 0, 5/7, 0), energy change -9/14.
    doc = json.loads((data / "rolling_ball_3d.json").read_text())
    for law in ("anitescu_potra", "sequential", "routh"):
        doc["law"] = law
        r = from_document(doc)
        assert r.status == "success"
        assert np.allclose(r.velocity, [5 / 7, 0, 0, 0, 5 / 7, 0], atol=LEMKE, rtol=0), law
        assert abs(r.outcomes[0].energy_change + 9 / 14) < LEMKE


def test_falling_block_comes_to_rest_under_anitescu_potra(data):
    doc = json.loads((data / "falling_block_routh.json").read_text())
    v, J, Jt, mu = doc["velocity"], doc["normals"], doc["tangents"], doc["friction"]
    r = simpact.anitescu_potra(v, J, Jt, mu, Minv=doc["inverse_mass"])
    assert np.allclose(r.velocity, [0, 0, 0], atol=LEMKE)


def test_routh_outcome_set_equals_the_command_lines_bit_for_bit(data, cli):
    doc = json.loads((data / "falling_block_routh.json").read_text())
    doc["samples"], doc["seed"] = 64, 11
    v, J, Jt, mu = doc["velocity"], doc["normals"], doc["tangents"], doc["friction"]
    r = simpact.outcome_set(v, J, Jt, mu, Minv=doc["inverse_mass"], samples=64, seed=11, step=doc["step"],
                            max_steps=doc["max_steps"])
    expected = cli_resolve(cli, doc)
    assert len(r.outcomes) == 64 == len(expected["outcomes"])
    got = r.velocities
    want = np.array([o["velocity"] for o in expected["outcomes"]])
    assert np.array_equal(got, want)  # bitwise: the same doubles
    assert len({tuple(x) for x in got}) > 1  # a set, not one outcome
    # Another seed is another set.
    other = simpact.outcome_set(v, J, Jt, mu, Minv=doc["inverse_mass"], samples=64, seed=12, step=doc["step"],
                                max_steps=doc["max_steps"])
    assert not np.array_equal(other.velocities, got)


@pytest.mark.parametrize("name", ["billiard_break.json", "newtons_cradle_3.json", "two_balls_wall.json",
                                  "box_stack_routh.json", "rolling_ball_3d.json"])
def test_every_bundled_document_agrees_with_simpact_resolve(data, cli, name):
    doc = json.loads((data / name).read_text())
    r = from_document(doc)
    expected = cli_resolve(cli, doc)
    assert r.status == expected["status"]
    assert len(r.outcomes) == len(expected["outcomes"])
    for got, want in zip(r.outcomes, expected["outcomes"]):
        assert np.array_equal(got.velocity, want["velocity"]), name


@pytest.mark.parametrize("call, message", [
    (lambda: simpact.propagative([1, 0, 0], [[-1, 1], [0, -1]], masses=[1, 1, 1]), '"normals" (J) row 0'),
    (lambda: simpact.propagative([1, 0, np.nan], CRADLE_J, masses=[1, 1, 1]), '"velocity" (v) entry 2 is not finite'),
    (lambda: simpact.propagative([1, 0, 0], CRADLE_J, masses=[1, -1, 1]), '"masses" entry 1 must be positive'),
    (lambda: simpact.propagative([1, 0, 0], CRADLE_J, M=np.eye(2)), '"mass" (M) has 2 rows'),
    (lambda: simpact.propagative([1, 0, 0], CRADLE_J, masses=[1, 1, 1], M=np.eye(3)), "exactly one of M, Minv"),
    (lambda: simpact.propagative([1, 0, 0], CRADLE_J, masses=[1, 1, 1], restitutoin=1), "restitutoin"),
    (lambda: simpact.propagative([1, 0, 0], CRADLE_J, masses=[1, 1, 1], restitution=1.5), "restitution"),
    (lambda: simpact.propagative([[1, 0, 0]], CRADLE_J, masses=[1, 1, 1]), "v must be a 1-D array"),
    (lambda: simpact.propagative([1, 0, 0], [[-1, 1, 0], [0, -1]], masses=[1, 1, 1]), "J must be a rectangular"),
    (lambda: simpact.resolve([1, 0, 0], CRADLE_J, masses=[1, 1, 1], law="newton"), "newton"),
    (lambda: simpact.propagative([1, 0, 0], [[0, 0, 0]], masses=[1, 1, 1]), "zero"),
])
def test_bad_input_raises_a_value_error_naming_the_field(call, message):
    with pytest.raises(ValueError) as error:
        call()
    assert message in str(error.value)


def test_long_work_releases_the_gil(data):
    # A large Routh outcome set runs in a thread; while it runs, this thread
    # keeps executing Python, which it could not if the call held the GIL.
    doc = json.loads((data / "falling_block_routh.json").read_text())
    args = (doc["velocity"], doc["normals"], doc["tangents"], doc["friction"])
    result = {}
    worker = threading.Thread(target=lambda: result.update(
        r=simpact.outcome_set(*args, Minv=doc["inverse_mass"], samples=20000, seed=1, threads=1)))
    ticks = 0
    worker.start()
    while worker.is_alive():
        ticks += 1
        worker.join(0.001)
    assert len(result["r"].outcomes) == 20000
    assert ticks > 10


def test_help_is_a_reference():
    doc = simpact.propagative.__doc__
    assert "(1 + R) Minv J_i^T" in doc and "Seghete & Murphey 2014" in doc
    assert "J v < 0" in simpact.resolve.__doc__
    assert "arXiv:2103.15714" in simpact.__doc__
