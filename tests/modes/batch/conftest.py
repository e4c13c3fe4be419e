"""One Ray for the whole test session (starting one takes seconds): loopback only, no dashboard."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from batch_support import NO_RAY


@pytest.fixture(scope="session")
def local_ray():
    if sys.version_info >= (3, 14):
        pytest.skip("Ray publishes no wheels for this Python yet")
    if importlib.util.find_spec("ray") is None:
        pytest.skip(NO_RAY)
    from tau.modes.batch.ray_backend import start_local_ray, stop_local_ray

    start_local_ray(num_cpus=2)
    yield
    stop_local_ray()
