"""Engines: python-chess's UCI and XBoard adapters with clock stamps and faults (`adapter`),
their output stamped by the kernel (`output`), their logs (`journal`), the pool that keeps
engines between games (`pool`), the start-up check (`probe`), pinned cores (`affinity`) and
the host's process table (`procfs`)."""

__all__ = ["adapter", "affinity", "journal", "output", "pool", "probe", "procfs"]
