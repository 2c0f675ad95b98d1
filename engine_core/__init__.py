"""Tabletop's rules engine: pure game logic, no I/O, no clock, no global random.

Every game is a Decider (see ``engine_core.decider``): ``setup`` and ``decide``
turn commands into events, ``evolve`` folds events into state. Randomness only
comes from entropy bytes passed in by the caller (``engine_core.rng``).
"""
