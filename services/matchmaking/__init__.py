"""The matchmaking service: tickets in, matches out; ratings from finished matches."""
