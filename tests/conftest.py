"""pytest's settings for the whole suite; the helpers are in `tests/support/`."""
