"""Engines: python-chess's UCI and XBoard adapters with pipe-side clock stamps and faults
(`adapter`), the pool that keeps engines between games (`pool`), and the start-up check
(`probe`)."""

__all__ = ["adapter", "pool", "probe"]
