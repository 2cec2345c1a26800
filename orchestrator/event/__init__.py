"""The event as the rest of the program sees it: its settings, its state, opening and resuming
it, what the read commands and the web view show, and the files people read."""
