"""`python -m postcompact`: the CLI."""

import sys

from postcompact.cli import main

sys.exit(main())
