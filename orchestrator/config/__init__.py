"""`engines.toml`: its declared schema (`model`) and reading it (`load`)."""

__all__ = ["load", "model"]
