"""Paths for the Python tests: the source tree and the `simpact` executable
(ctest passes SIMPACT_SOURCE_DIR and SIMPACT_CLI; run by hand from the
source tree with PYTHONPATH=build/python they default to ./ and
build/bin/simpact)."""
import os
import pathlib

import pytest

SOURCE = pathlib.Path(os.environ.get("SIMPACT_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
CLI = os.environ.get("SIMPACT_CLI", str(SOURCE / "build" / "bin" / "simpact"))


@pytest.fixture
def data():
    return SOURCE / "demos" / "data"


@pytest.fixture
def cli():
    return CLI
