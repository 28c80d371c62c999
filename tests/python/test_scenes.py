"""Scenes from Python: trajectories as numpy arrays, stock and simpact, and
sweeps that match the command line."""
import json
import subprocess

import numpy as np
import pytest

import simpact

# The touching cradle under simpact in Bullet (scene_test.cpp's kExact in
# double); stock SI converges to ~1e-6 of its LCP (kStockIterations).
EXACT = 1e-9
STOCK = 1e-4


def test_cradle_scene_stock_and_simpact(data):
    stock, ours = simpact.stock_and_simpact(data / "newtons_cradle.scene.json")
    assert ours.position.shape == (25, 3, 3) and ours.time.shape == (25,)
    assert np.allclose(ours.velocity[-1, :, 0], [0, 0, 1], atol=EXACT)
    assert np.allclose(stock.velocity[-1, :, 0], [-1 / 3, 2 / 3, 2 / 3], atol=STOCK)
    assert abs(ours.energy_final - ours.energy_initial) < EXACT
    assert ours.solver == "simpact" and stock.solver == "stock_si"
    # The trajectory's last frame is the output's final state.
    assert np.array_equal(ours.velocity[-1], np.array([b["velocity"] for b in ours.output["bodies"]]))


def test_scene_matches_the_command_line_bit_for_bit(data, cli):
    path = data / "newtons_cradle_strings.scene.json"
    run = simpact.scene(path, record=None)
    out = json.loads(subprocess.run([cli, "scene", str(path)], capture_output=True, text=True, check=True).stdout)
    for got, want in zip(run.output["bodies"], out["bodies"]):
        assert np.array_equal(got["velocity"], want["velocity"])
        assert np.array_equal(got["position"], want["position"])


def test_multibody_scene_joint_trajectories(data):
    # Three one-link pendulums touching (docs/cli.md): the joint rates
    # leave as (0, 0, 1), one array of (frames, dofs) per multibody.
    run = simpact.scene(data / "multibody_cradle.json", record=1)
    assert len(run.joint_velocities) == 3
    assert all(jv.shape == (len(run.time), 1) for jv in run.joint_velocities)
    final = [jv[-1, 0] for jv in run.joint_velocities]
    assert np.allclose(final, [0, 0, 1], atol=EXACT)
    assert np.array_equal([jv[0, 0] for jv in run.joint_velocities], [1, 0, 0])


def test_scene_errors_name_the_key():
    with pytest.raises(ValueError, match="radius"):
        simpact.scene({"dt": 0.01, "steps": 1, "bodies": [{"shape": "sphere", "radius": -1}]})
    with pytest.raises(ValueError, match="not a scene document"):
        simpact.scene("no/such/file.json")


def test_sweep_digest_equals_the_command_lines(data, cli):
    path = data / "sweep_box_landing_routh.json"
    result = simpact.sweep(path, threads=2)
    assert result.values.shape == (200, 4)
    out = subprocess.run([cli, "sweep", str(path)], capture_output=True, text=True, check=True).stdout
    assert f"digest of every run's outputs: {result.digest}" in out
    assert simpact.sweep(path, threads=1).digest == result.digest
