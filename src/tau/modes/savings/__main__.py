"""``python -m tau.modes.savings FILE...`` (the same as ``tau savings``)."""

import sys

from tau.modes.savings import main

sys.exit(main(sys.argv[1:]))
