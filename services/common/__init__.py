"""What every service shares: settings, logging, auth, errors, codecs."""
