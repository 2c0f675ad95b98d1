"""One package per game; each exposes one ``GAME`` object (see ``engine_core.registry``)."""
