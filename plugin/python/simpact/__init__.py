"""simpact: simultaneous impacts for rigid-body simulation, from Python.

The impact laws of simpact's core on numpy arrays, and `simpact scene`
documents run in Bullet with stock Bullet and with simpact.

Conventions (as in simpact's C++ headers, plugin/include/simpact/):
  n generalized velocities v [m/s, rad/s], m contacts.
  M (n x n) the mass matrix [kg, kg m^2], or Minv = M^-1, or `masses`, its
  diagonal. J (m x n): row i is contact i's normal covector; J v > 0
  separates, J v < 0 approaches. An impulse p (n) changes v by Minv p; the
  kinetic energy is 1/2 v^T M v [J].
  Restitution R in [0, 1]: 1 elastic, 0 plastic.

Every law goes through the same validated boundary as the `simpact`
command line (the same document, the same code, the same doubles), so a
call here and `simpact resolve` on the same input give bitwise the same
result, and a seeded Routh outcome set is the same set. Errors in the input
raise ValueError naming the field. Long work runs without the GIL.

Papers: Seghete & Murphey 2014 = V. Seghete and T. D. Murphey, "A
propagative model of simultaneous impact: existence, uniqueness, and design
consequences", IEEE Trans. Automation Science and Engineering 11(1), 2014,
arXiv:1709.02296. Seghete & Murphey 2010 = "Variational Solutions to
Simultaneous Collisions Between Multiple Rigid Bodies", IEEE ICRA 2010.
Halm & Posa = M. Halm and M. Posa, "Set-Valued Rigid-Body Dynamics for
Simultaneous, Inelastic, Frictional Impacts", arXiv:2103.15714. Pasquero =
S. Pasquero, "A frame-independent approach by means of jet-bundle geometry".
"""

import json as _json
import os as _os

import numpy as _np

from . import _simpact

__all__ = [
    "Result", "SceneRun", "SweepResult",
    "resolve", "propagative", "plastic", "variational", "pasquero",
    "routh", "outcome_set", "anitescu_potra", "sequential",
    "analyze_strike", "design_for_uniqueness",
    "scene", "stock_and_simpact", "sweep",
]

# JSON keys of `simpact resolve` and the names the Python functions use for
# them: error messages name both.
_PYTHON_NAMES = {
    "velocity": "v", "normals": "J", "mass": "M", "inverse_mass": "Minv",
    "tangents": "Jt", "friction": "mu",
}


class Result:
    """A law's output: the keys of `simpact resolve`'s output document as
    attributes (numbers as numpy arrays, outcomes as a list of Result).

    Always present: `status` ("success" or why the law stopped) and
    `energy_before`/`energy_after` or per outcome `energy_change` [J].
    `velocity` is the post-impact velocity v+ (n): the law's own, or that
    of the first outcome when the law returns several.
    """

    def __init__(self, document):
        self._document = document
        self._outcomes = {key: [Result(o) for o in document[key]]
                          for key in ("outcomes", "vertices") if key in document}

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._outcomes:
            return self._outcomes[name]
        try:
            return self._document[name]
        except KeyError:
            raise AttributeError(f"this result has no {name!r}; it has: {', '.join(self._document)}") from None

    def __dir__(self):
        return list(self._document) + ["velocity", "velocities", "to_dict"]

    @property
    def velocity(self):
        if "velocity" in self._document:
            return self._document["velocity"]
        outcomes = self._document.get("outcomes") or []
        return outcomes[0]["velocity"] if outcomes else None

    @property
    def velocities(self):
        """Every outcome's v+ as one (outcomes x n) array."""
        return _np.array([o["velocity"] for o in self._document.get("outcomes", [])])

    def to_dict(self):
        """The output document (numpy arrays inside)."""
        return self._document

    def __repr__(self):
        keys = ", ".join(self._document)
        return f"simpact.Result(status={self._document.get('status')!r}; {keys})"


def _matrix(value, name):
    """A 2-D float array from a list, numpy array or scipy.sparse matrix."""
    if hasattr(value, "toarray"):  # scipy.sparse
        value = value.toarray()
    try:
        array = _np.asarray(value, dtype=float)
    except (ValueError, TypeError):
        raise ValueError(f"{name} must be a rectangular 2-D array of numbers (its rows differ in length, "
                         f"or an entry is not a number)") from None
    if array.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (got {array.ndim} dimensions)")
    return array


def _vector(value, name):
    try:
        array = _np.asarray(value, dtype=float)
    except (ValueError, TypeError):
        raise ValueError(f"{name} must be a 1-D array of numbers") from None
    if array.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array (got {array.ndim} dimensions)")
    return array


def _rename(message):
    for key, name in _PYTHON_NAMES.items():
        message = message.replace(f'"{key}"', f'"{key}" ({name})')
    # NaN and infinities travel as JSON null in the messages' excerpts.
    return message.replace("(got null)", "(got NaN, an infinity or None)")


def _problem(v, J, M, Minv, masses):
    document = {"velocity": _vector(v, "v"), "normals": _matrix(J, "J")}
    given = [k for k, x in (("M", M), ("Minv", Minv), ("masses", masses)) if x is not None]
    if len(given) != 1:
        raise ValueError("give exactly one of M, Minv and masses (got " + (", ".join(given) or "none") + ")")
    if M is not None:
        document["mass"] = _matrix(M, "M")
    elif Minv is not None:
        document["inverse_mass"] = _matrix(Minv, "Minv")
    else:
        document["masses"] = _vector(masses, "masses")
    return document


def resolve(v, J, *, M=None, Minv=None, masses=None, law="propagative", **keys):
    """Resolves one simultaneous impact with `law`; returns a Result.

    v (n) the pre-impact velocity v-, J (m x n) the contact normals (dense
    or scipy.sparse; J v < 0 approaching), and exactly one of M (n x n,
    symmetric positive definite), Minv (n x n, symmetric PSD) and masses
    (n, a diagonal M). `law` is one of propagative, plastic, variational,
    pasquero, routh, anitescu_potra, sequential; `keys` are that law's keys
    of `simpact resolve` (`simpact --help`, docs/cli.md), e.g.
    restitution=0.5, policy="all", seed=3, offsets=b, tangents=Jt,
    friction=mu, samples=1000. A key no law reads, or only another law
    reads, is a ValueError naming it.
    """
    document = _problem(v, J, M, Minv, masses)
    document["law"] = law
    for key, value in keys.items():
        if key in ("tangents",):
            value = _matrix(value, "tangents")
        document[key] = value
    try:
        return Result(_simpact.resolve_document(document))
    except ValueError as error:
        raise ValueError(_rename(str(error))) from None


def propagative(v, J, *, M=None, Minv=None, masses=None, restitution=1.0, policy="most_negative", **keys):
    """Seghete & Murphey 2014's propagative law: single-contact reflections
    in the kinetic-energy metric, one approaching contact at a time, until
    J v+ >= 0.

    Each reflection at contact i: v <- v - (1 + R) Minv J_i^T (J_i v) / W_ii,
    W = J Minv J^T; R = 1 keeps the energy exactly, R = 0 is the plastic
    (Moreau) limit, 0 < R < 1 the restitution variant (Seghete & Murphey
    2014, Sec. V). `policy` picks the next contact: most_negative,
    least_negative, time_of_impact (toi=[...] times), index, random (seed=k),
    or all: every order, the outcome set, with `indeterminacy` xi and
    `sequences_explored`. Result: status, outcomes [{velocity, impulses,
    sequence}], energy_before, energy_after [J], reflections.
    """
    return resolve(v, J, M=M, Minv=Minv, masses=masses, law="propagative", restitution=restitution,
                   policy=policy, **keys)


def plastic(v, J, *, M=None, Minv=None, masses=None, **keys):
    """The plastic impact: v+ = argmin 1/2 |w - v-|_M^2 over J w >= 0 (the
    Moreau projection), the propagative law at R = 0."""
    return resolve(v, J, M=M, Minv=Minv, masses=masses, law="plastic", **keys)


def variational(v, J, *, M=None, Minv=None, masses=None, **keys):
    """Seghete & Murphey 2010's variational law (elastic): v- projected, in
    the kinetic metric, onto the convex hull of every reflection order's
    elastic outcome. reading="projection" (the definition) or
    "nearest_outcome" (the text's nearest vertex). Result: velocity,
    impulses, vertices, weights, on_vertex, energy_before, energy_after,
    energy_loss [J]."""
    return resolve(v, J, M=M, Minv=Minv, masses=masses, law="variational", **keys)


def pasquero(v, J, *, M=None, Minv=None, masses=None, **keys):
    """Pasquero's frame-independent elastic law: the impulse Lambda times
    the sum of the struck contacts' orthogonal velocities (Lemma 3.1),
    repeated until no contact approaches. Result: velocity, impulses,
    iterations, involved, coefficients, energy_before, energy_after [J]."""
    return resolve(v, J, M=M, Minv=Minv, masses=masses, law="pasquero", **keys)


def routh(v, J, Jt, mu, *, M=None, Minv=None, masses=None, samples=1, seed=0, **keys):
    """Halm & Posa's Routh sampling of a frictional simultaneous impact.

    Jt: tangent rows (one per contact planar, two orthonormal per contact
    in 3-D), mu: friction coefficients (m). The impact is the differential
    inclusion dv/dlambda in Minv [J^T, Jt^T] FC(v) over the friction cones,
    integrated in steps of normal impulse capped by h (step=..., default
    automatic), each step an LCP; a sample draws each step's cone direction
    from `seed`. samples=1: one sample (Algorithm 1); samples=K: K samples of
    the outcome set (Algorithm 2), sample k the same for any thread count.
    restitution=e: Stronge's energetic restitution. Result: outcomes
    [{velocity, normal_impulses, normal_velocities, tangential_velocities,
    energy_change [J], lcps, terminated}], step, samples.
    """
    return resolve(v, J, M=M, Minv=Minv, masses=masses, law="routh", tangents=Jt, friction=mu,
                   samples=samples, seed=seed, **keys)


def outcome_set(v, J, Jt, mu, *, samples, seed=0, M=None, Minv=None, masses=None, **keys):
    """`samples` seeded Routh samples of the impact's outcome set (Halm &
    Posa, Algorithm 2): routh(..., samples=samples, seed=seed)."""
    return routh(v, J, Jt, mu, M=M, Minv=Minv, masses=masses, samples=samples, seed=seed, **keys)


def anitescu_potra(v, J, Jt, mu, *, M=None, Minv=None, masses=None, **keys):
    """The simultaneous frictional LCP (Halm & Posa, eq. (31)), every
    distinct solution (all_solutions=True) or one (Lemke)."""
    return resolve(v, J, M=M, Minv=Minv, masses=masses, law="anitescu_potra", tangents=Jt, friction=mu,
                   **keys)


def sequential(v, J, Jt, mu, *, M=None, Minv=None, masses=None, **keys):
    """One frictional contact at a time (Halm & Posa, Sec. 2.2.2), in
    `order`, until none approaches."""
    return resolve(v, J, M=M, Minv=Minv, masses=masses, law="sequential", tangents=Jt, friction=mu, **keys)


def analyze_strike(v, J, *, M=None, Minv=None, masses=None):
    """How indeterminate a strike is (Seghete & Murphey 2014, Sec. VII).

    Returns a dict: inner_products W = J Minv J^T (m x m), cosines
    c_ij = W_ij / sqrt(W_ii W_jj), max_abs_cosine; when some contact
    approaches, indeterminacy xi = max |p_a - p_b|_g / |p-|_g over the
    elastic outcomes of every order, outcomes (how many), order_spread.
    Theorem 2: every c_ij = 0 makes the outcome unique (xi = 0).
    """
    document = _problem(v, J, M, Minv, masses)
    Minv_dense = document.get("inverse_mass")
    if Minv_dense is None:
        Minv_dense = _np.linalg.inv(document["mass"]) if "mass" in document else _np.diag(1.0 / document["masses"])
    return _simpact.analyze_strike(Minv_dense, document["normals"], document["velocity"])


def design_for_uniqueness(model, x0, *, free=(), scales=None, length_scale=1.0, proximity_weight=1e-3,
                          tolerance=1e-10, gap_tolerance=1e-9, max_rounds=10, max_evaluations=20000):
    """Moves design parameters x near x0 until the strike's contacts are
    pairwise g-orthogonal (every c_ij = 0, a unique outcome) while keeping
    the constraints g(x) = 0 [m] (Seghete & Murphey 2014, Sec. VII).

    model(x) returns (Minv, J, v, g): the strike at x. Levenberg-Marquardt
    on r(x) = [c_ij (i < j); g / length_scale; proximity_weight (x_f - a)/s]
    with continuation. Returns a dict: converged, message, parameters,
    initial and final analyses (as analyze_strike), constraints, rounds,
    evaluations.
    """
    x0 = _vector(x0, "x0")
    scales = _np.ones(0) if scales is None else _vector(scales, "scales")
    return _simpact.design_for_uniqueness(model, x0, list(free), scales, float(length_scale),
                                          float(proximity_weight), float(tolerance), float(gap_tolerance),
                                          int(max_rounds), int(max_evaluations))


def _load(document):
    """A document from a dict, a JSON string or a path; and its folder."""
    if isinstance(document, dict):
        return document, _os.getcwd()
    if isinstance(document, (str, _os.PathLike)) and _os.path.exists(document):
        with open(document, encoding="utf-8") as file:
            return _json.load(file), _os.path.dirname(_os.path.abspath(document))
    if isinstance(document, str) and document.lstrip().startswith("{"):
        return _json.loads(document), _os.getcwd()
    raise ValueError(f"not a scene document, a JSON text or an existing file: {document!r}")


class SceneRun:
    """One run of a `simpact scene` document.

    output: the scene's output document (final bodies, energies [J],
    impacts). With a recorded trajectory (record=k, default every step):
      time (frames,) [s];
      position (frames, bodies, 3) [m], orientation (frames, bodies, 4)
      quaternion x y z w, velocity, angular_velocity (frames, bodies, 3)
      [m/s, rad/s], world frame, bodies in input order (planes included);
      joint_positions, joint_velocities: per multibody, (frames, dofs).
    """

    def __init__(self, output):
        self.output = output
        self.solver = None
        frames = output.get("trajectory") or []
        self.time = _np.array([f["time"] for f in frames])
        self.steps = _np.array([f["step"] for f in frames], dtype=int)
        for key in ("position", "orientation", "velocity", "angular_velocity"):
            setattr(self, key, _np.array([[b[key] for b in f["bodies"]] for f in frames])
                    if frames and frames[0]["bodies"] else _np.zeros((len(frames), 0, 3)))
        self.joint_positions, self.joint_velocities = [], []
        if frames and "multibodies" in frames[0]:
            for k in range(len(frames[0]["multibodies"])):
                self.joint_positions.append(_np.array([f["multibodies"][k]["joint_positions"] for f in frames]))
                self.joint_velocities.append(_np.array([f["multibodies"][k]["joint_velocities"] for f in frames]))
        self.energy_initial = output.get("energy_initial")
        self.energy_final = output.get("energy_final")
        self.impacts = output.get("impacts")

    def __repr__(self):
        return (f"simpact.SceneRun(solver={self.solver!r}, frames={len(self.time)}, "
                f"energy {self.energy_initial} -> {self.energy_final} J)")


def scene(document, *, solver=None, record=1):
    """Runs a `simpact scene` document (a dict, JSON text or a file path;
    keys: `simpact --help`, docs/cli.md) and returns a SceneRun with the
    trajectory as numpy arrays. solver: overrides the document's
    ("simpact", "stock_si", ...). record: the state every record-th step
    (None: the document's own, if any)."""
    doc, _ = _load(document)
    doc = dict(doc)
    if solver is not None:
        doc["solver"] = solver
    if record is not None:
        doc["record"] = record
    run = SceneRun(_simpact.scene_document(doc))
    run.solver = doc.get("solver", "simpact")
    return run


def stock_and_simpact(document, *, stock="stock_si", record=1):
    """The same scene under stock Bullet (`stock`) and under simpact: a
    pair of SceneRun, stock first. A document's "simpact" settings are kept
    for the simpact run and left out of the stock one."""
    doc, _ = _load(document)
    stock_doc = {k: v for k, v in doc.items() if k != "simpact"}
    return scene(stock_doc, solver=stock, record=record), scene(doc, solver="simpact", record=record)


class SweepResult:
    """A `simpact sweep`: values (runs x outputs), outputs (their JSON
    pointers), grid_names, grid_values (per grid point), samples, seed,
    digest (the same as the command line's)."""

    def __init__(self, d):
        self.__dict__.update(d)

    def __repr__(self):
        return f"simpact.SweepResult(runs={len(self.values)}, outputs={self.outputs}, digest={self.digest})"


def sweep(document, *, threads=0):
    """Runs a `simpact sweep` document (dict or path): a scene over a grid
    of values and seeded samples (docs/cli.md). Returns a SweepResult;
    threads: worker threads (0: every core); the result does not depend on
    it."""
    doc, folder = _load(document)
    return SweepResult(_simpact.sweep_document(doc, folder, int(threads)))
