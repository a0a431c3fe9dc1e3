"""Registers your selector before pytest starts: pytest loads this file first, also in
the pytest-xdist controller that writes the run folder (`-n auto`)."""

import my_selector  # noqa: F401  (registers the `mine` selector)
