"""One Ray for the whole test session (starting one takes seconds): loopback only, no dashboard."""

from __future__ import annotations

import sys

import pytest


@pytest.fixture(scope="session")
def local_ray():
    if sys.version_info >= (3, 14):
        pytest.skip("Ray publishes no wheels for this Python yet")
    from tau.modes.batch.ray_backend import start_local_ray, stop_local_ray

    start_local_ray(num_cpus=2)
    yield
    stop_local_ray()
