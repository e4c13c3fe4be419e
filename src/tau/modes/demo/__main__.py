"""``python -m tau.modes.demo`` (the same as ``tau demo``)."""

import sys

from tau.modes.demo import main

sys.exit(main(sys.argv[1:]))
