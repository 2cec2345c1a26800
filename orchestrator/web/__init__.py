"""The read-only web view (aiohttp): routes (`app`), pages, SVG charts, the live push
(`push`), its script and style (`static`), and the capped server."""

__all__ = ["app", "charts", "pages", "push", "server", "static"]
