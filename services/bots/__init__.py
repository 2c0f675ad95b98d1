"""The bot worker: plays the bot seats of matches through the match service."""
