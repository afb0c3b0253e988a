"""Entry point: `python3 bench/orchestrate ARGS...` (./scripts/bench execs it).

bench/ goes first on the module path, so the package and the report
modules beside it (bench/report_aggregate.py, ...) import by name.
"""

import os
import sys

sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from orchestrate.main import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
