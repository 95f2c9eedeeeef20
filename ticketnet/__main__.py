"""`python -m ticketnet`: the command line of `ticketnet.cli`."""

import sys

from ticketnet.cli import build_parser, main, seed_list  # noqa: F401  (what callers and tests import from here)

if __name__ == "__main__":
    sys.exit(main())
