"""The ``flower`` command's entry point, kept at this name for pyproject (``flower =
"engine.cli:main"``) and ``python -m engine.cli``; the command itself is the package ``engine._cli``."""

import sys

from engine._cli.command import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
